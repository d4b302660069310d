// A run tab's edit and continue and its restart: the Reload offer (a save of a file the
// paused run uses, from any tab or from outside the page), the reload's answer, and
// Restart (the new run's tab opened once the old run's command:result names it).
import { html, useEffect, useRef, useState } from "../lib.js";
import { openTab } from "../tabs.js";
import { sendReload, setPausedRun, useEdits } from "./edits.js";

/**
 * The Reload offer of a run tab, from the page-wide store (edits.js): null (none),
 * { id: null } (offered) or { id } (sent; the answer is model.answers.get(id)).
 * `doReload` sends it; a refusal of the POST itself is `onError`'s sentence.
 */
export function useReload({ runId, model, scenario, scenarioFile, onError }) {
  const { offers } = useEdits();
  // This tab says where its run is paused; /ws (edits.js) says when it moves on.
  const pauseKey = model.pause && model.live ? `${model.pause.line}:${model.pause.col}` : "";
  const known = model.started || model.outcome !== null;
  useEffect(() => {
    if (pauseKey) setPausedRun(runId, { runId, scenario, scenarioFile });
    else if (known) setPausedRun(runId, null);
  }, [runId, pauseKey, known, scenario, scenarioFile]);
  const doReload = () => sendReload(runId).catch((err) => onError(`reload: ${err.message}`));
  return { reload: model.live ? offers.get(runId) || null : null, doReload };
}

/** What the reload answered: pending, rejected with its reason, or the summary. */
function reloadAnswer(reload, model) {
  if (!reload.id) return null;
  const answer = model.answers.get(reload.id);
  if (!answer || answer.kind === "command:applied") return html`<span class="muted">Reloading…</span>`;
  if (answer.kind === "command:rejected") {
    return html`<span class="view-error reload-answer">Reload rejected: ${answer.reason}</span>`;
  }
  if (!answer.ok) return html`<span class="view-error reload-answer">Reload failed: ${answer.error || "error"}</span>`;
  const retry = model.pause && model.pause.reason === "failure" ? " Retry runs the edited statement." : "";
  return html`<span class="reload-answer">${answer.value}.${retry}</span>`;
}

export function ReloadOffer({ reload, model, onReload }) {
  if (!reload || !model.live) return null;
  const pending = reload.sending || (reload.id && !model.answers.has(reload.id));
  return html`<div class="reload-offer" role="group" aria-label="Reload">
    <span>${reload.stale && !reload.id
      ? `Changed on disk since this run read it: ${reload.stale.join(", ")}.`
      : "Saved at a pause."}</span>
    <button type="button" onClick=${onReload} disabled=${!model.pause || pending}>Reload</button>
    ${reloadAnswer(reload, model)}
  </div>`;
}

/**
 * Sends a toolbar command; a `restart` this tab sent opens the new run's tab once the
 * old run's command:result names it (a restart by anyone is shown by RestartLinks).
 */
export function useRestart({ model, send }) {
  const [restartId, setRestartId] = useState(null);
  const opened = useRef(null);
  const answer = restartId ? model.answers.get(restartId) : null;
  const newRun = answer && answer.kind === "command:result" && answer.ok ? answer.value : null;
  useEffect(() => {
    if (typeof newRun !== "string" || opened.current === newRun) return;
    opened.current = newRun;
    openTab({ kind: "scenario-run", runId: newRun });
  }, [newRun]);
  return async (command) => {
    const id = await send(command);
    if (command.cmd === "restart" && id) setRestartId(id);
  };
}

/** "restart of <old run>" (the manifest's restartOf) and "restarted as <new run>". */
export function RestartLinks({ detail, model }) {
  const of = detail && detail.manifest && detail.manifest.restartOf;
  const as = model.restartedAs;
  const link = (runId) => html`<button type="button" class="linkish"
    onClick=${() => openTab({ kind: "scenario-run", runId })}>${runId}</button>`;
  return html`
    ${of && html`<span class="restart-link">restart of ${link(of)}</span>`}
    ${as && as.runId && html`<span class="restart-link">restarted as ${link(as.runId)}</span>`}
    ${as && as.error && html`<span class="view-error restart-link">Restart failed: ${as.error}</span>`}`;
}
