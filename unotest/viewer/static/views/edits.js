// Edit and continue across tabs. Only the active tab's view is mounted, so what a save
// offers outlives the run tab: this page-wide store keeps the runs seen paused (a run
// tab registers its pause; /ws says when each moves on) and, per run, its Reload offer
// ({ id: null } offered, { id } sent). A save made in this page offers Reload to every
// paused run whose scenario it is, or any helper (a reload reads them all); a save from
// outside the page (fs:*-changed) offers it where no offer is shown yet. A run tab shown
// on a paused run whose files changed on disk since it read them (the detail's
// `staleSources`: after a page reload, in a second tab) offers it too (`offerStale`).
import { useEffect, useState } from "../lib.js";
import { api } from "../api.js";
import { onMessage } from "../live.js";

const CHANGED = new Set(["fs:scenarios-changed", "fs:helpers-changed"]);
const MOVED_ON = new Set(["resumed", "run:finished"]);

const paused = new Map(); // runId → { runId, scenario, scenarioFile }
const offers = new Map(); // runId → { id } (null: offered, not sent)
const saveListeners = new Set();
const listeners = new Set();
/** Every reload this page sent: its rejection is shown in the offer, not twice. */
export const sentReloads = new Set();
let watching = false;

function changed() {
  for (const fn of [...listeners]) fn();
}

function leave(runId) {
  const wasPaused = paused.delete(runId);
  const hadOffer = offers.delete(runId);
  if (wasPaused || hadOffer) changed();
}

function watch() {
  if (watching) return;
  watching = true;
  onMessage((msg) => {
    if (msg.kind === "fs:run-step" && msg.event && MOVED_ON.has(msg.event.kind)) leave(msg.runId);
    else if (msg.kind === "fs:run-finished") leave(msg.runId);
    else if (CHANGED.has(msg.kind)) {
      let any = false;
      for (const runId of paused.keys()) {
        if (!offers.has(runId)) {
          offers.set(runId, { id: null });
          any = true;
        }
      }
      if (any) changed();
    }
  });
}

/** Whether saving `path` changes what a reload of a run of `scenarioFile` reads. */
export function usedBy(path, scenarioFile) {
  return path === scenarioFile || /^unotest\/e2e\/_helpers\//.test(path);
}

/** A save made in this page: the paused runs using `path` are offered Reload. */
export function announceSave(path) {
  let any = false;
  for (const run of paused.values()) {
    if (usedBy(path, run.scenarioFile)) {
      offers.set(run.runId, { id: null });
      any = true;
    }
  }
  if (any) changed();
  for (const fn of [...saveListeners]) fn(path);
}

/** fn(path) after each save made in this page; returns the unsubscribe. */
export function onSave(fn) {
  saveListeners.add(fn);
  return () => saveListeners.delete(fn);
}

/** A paused run whose files changed on disk since it read them: offered Reload, with
 *  those files named (unless an offer is shown already). */
export function offerStale(runId, files) {
  watch();
  if (offers.has(runId) || !files.length) return;
  offers.set(runId, { id: null, stale: files });
  changed();
}

/** A run tab saw its run paused (`entry`: { runId, scenario, scenarioFile }) or not (null). */
export function setPausedRun(runId, entry) {
  watch();
  if (!entry) {
    leave(runId);
    return;
  }
  const old = paused.get(runId);
  paused.set(runId, entry);
  if (!old || old.scenarioFile !== entry.scenarioFile) changed();
}

/** Send `reload` to a paused run; its id (the answer comes on /ws), or throws ApiError. */
export async function sendReload(runId) {
  offers.set(runId, { id: null, sending: true });
  changed();
  try {
    const { id } = await api(`/api/runs/${runId}/commands`, { method: "POST", body: { cmd: "reload" } });
    sentReloads.add(id);
    offers.set(runId, { id });
    return id;
  } catch (err) {
    offers.set(runId, { id: null });
    throw err;
  } finally {
    changed();
  }
}

function snapshot() {
  return { paused: [...paused.values()], offers: new Map(offers) };
}

/** { paused: [...], offers: Map runId → offer }, re-rendered on every change. */
export function useEdits() {
  const [state, setState] = useState(snapshot);
  useEffect(() => {
    watch();
    const update = () => setState(snapshot());
    listeners.add(update);
    update();
    return () => listeners.delete(update);
  }, []);
  return state;
}
