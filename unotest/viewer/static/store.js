// The project as the sidebar and the views see it, kept fresh: fetched once over REST,
// refetched piecewise on fs:* messages (a burst's parts once each) and wholly after a
// reconnect (resync).
import { useEffect, useState } from "./lib.js";
import { api } from "./api.js";
import { onMessage, onResync } from "./live.js";

const FETCHERS = {
  scenarios: () => api("/api/scenarios"),
  helpers: () => api("/api/helpers"),
  collections: () => api("/api/collections"),
  problems: () => api("/api/problems"),
  breakpoints: () => api("/api/breakpoints"),
  // Each scenario's newest run (the tree's badges) and the newest runs (open tabs), not
  // every run: at 100,000 runs /api/runs answers a page at a time.
  runs: () => Promise.all([api("/api/runs?latest=1"), api("/api/runs")]).then(newestRuns),
  watch: () => api("/api/watch"),
};
// One list, newest first, each run once: [latest, page] of FETCHERS.runs.
function newestRuns([latest, page]) {
  const byId = new Map([...latest, ...page].map((run) => [run.runId, run]));
  return [...byId.values()].sort((a, b) => b.startedAt - a.startedAt || (a.runId < b.runId ? 1 : -1));
}

const EMPTY = {
  scenarios: [], helpers: [], collections: [], problems: [],
  breakpoints: { version: 1, scenarios: {} }, runs: [], watch: null, loaded: false, error: null,
};
const ON_MESSAGE = {
  "fs:scenarios-changed": ["scenarios", "problems"],
  "fs:helpers-changed": ["helpers", "problems"],
  "fs:collections-changed": ["collections", "problems"],
  "fs:bp-changed": ["breakpoints"],
  "fs:run-started": ["runs"],
  "fs:run-finished": ["runs"],
  // The watch daemon's events (ours): /api/watch has them folded, one fetch per burst.
  "watch:event": ["watch"],
  "watch:status": ["watch"],
};

let state = EMPTY;
const listeners = new Set();
const pending = new Map();
let started = false;

function publish(patch) {
  state = { ...state, ...patch };
  for (const fn of [...listeners]) fn(state);
}

// One fetch per part at a time; a request made while one is on its way runs once after it.
function refresh(part) {
  const now = pending.get(part);
  if (now) {
    now.again = true;
    return now.promise;
  }
  const entry = { again: false, promise: null };
  entry.promise = FETCHERS[part]()
    .then((value) => publish({ [part]: value, error: null }))
    .catch((err) => publish({ error: `${part}: ${err.message}` }))
    .finally(() => {
      pending.delete(part);
      if (entry.again) refresh(part);
    });
  pending.set(part, entry);
  return entry.promise;
}

export function refreshAll() {
  return Promise.all(Object.keys(FETCHERS).map(refresh)).then(() => publish({ loaded: true }));
}

export function refreshBreakpoints() {
  return refresh("breakpoints");
}

export function refreshRuns() {
  return refresh("runs");
}

// Messages come in bursts (a save names scenarios and problems, a checkout hundreds of
// files, a run starts and ends): the parts they name are gathered for BATCH_MS and each
// fetched once, rather than a 10,000-scenario list fetched again per message.
const BATCH_MS = 50;
let queued = new Set();
let batchTimer = null;

function refreshSoon(parts) {
  for (const part of parts) queued.add(part);
  if (batchTimer !== null || !queued.size) return;
  batchTimer = setTimeout(() => {
    const parts = queued;
    queued = new Set();
    batchTimer = null;
    for (const part of parts) refresh(part);
  }, BATCH_MS);
}

function start() {
  if (started) return;
  started = true;
  onMessage((message) => refreshSoon(ON_MESSAGE[message.kind] ?? []));
  onResync(() => refreshAll());
  refreshAll();
}

export function projectState() {
  return state;
}

// A Preact hook: {scenarios, helpers, collections, problems, breakpoints, runs, watch,
// loaded, error}; `watch` is GET /api/watch (the watch daemon, null until fetched).
export function useProject() {
  const [current, setCurrent] = useState(state);
  useEffect(() => {
    start();
    listeners.add(setCurrent);
    setCurrent(state);
    return () => listeners.delete(setCurrent);
  }, []);
  return current;
}
