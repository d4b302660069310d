// The collection-run tab: the collection's scenario runs (the detail's `children`), with
// status and duration, kept live by refetching the detail on fs:run-started,
// fs:collection-run-step and a child's fs:run-finished; each opens its own run tab.
import { html, useCallback, useEffect, useRef, useState } from "../lib.js";
import { api } from "../api.js";
import { onMessage, onResync } from "../live.js";
import { openTab } from "../tabs.js";
import { formatDuration } from "./run_model.js";

export function CollectionRunView({ tab }) {
  const runId = tab.runId;
  const [detail, setDetail] = useState(null);
  const [error, setError] = useState(null);
  const childIds = useRef(new Set());
  const timer = useRef(null);

  const load = useCallback(() => {
    api(`/api/runs/${runId}`).then(
      (data) => {
        childIds.current = new Set((data.children || []).map((c) => c.runId));
        setDetail(data);
        setError(null);
      },
      (err) => setError(err.message),
    );
  }, [runId]);
  /** Many messages in a burst (N workers) cost one refetch. */
  const soon = useCallback(() => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      load();
    }, 150);
  }, [load]);

  useEffect(() => {
    load();
    const offResync = onResync(load);
    const offMessage = onMessage((msg) => {
      if (msg.runId === runId && (msg.kind === "fs:collection-run-step" || msg.kind === "fs:run-finished")) soon();
      else if (msg.kind === "fs:run-started") soon();
      else if (msg.kind === "fs:run-finished" && childIds.current.has(msg.runId)) soon();
    });
    return () => {
      offResync();
      offMessage();
      if (timer.current) clearTimeout(timer.current);
    };
  }, [runId]);

  if (error && !detail) return html`<section class="view"><p class="view-error" role="alert">${error}</p></section>`;
  if (!detail) return html`<section class="view"><p class="muted">Loading run ${runId}…</p></section>`;
  const meta = detail.meta || {};
  const started = (detail.events || []).find((e) => e.kind === "collection-run:started");
  const children = [...(detail.children || [])].sort((a, b) => a.startedAt - b.startedAt);
  // The worker (0-based, as the console's [w0]) of each scenario run: our additive `worker` on the
  // orchestrator's collection-run:scenario-started (none of 0.5.0's fields carries it;
  // a collection run written before it was added shows "—").
  const workers = new Map();
  for (const e of detail.events || []) {
    if (e.kind === "collection-run:scenario-started" && e.worker != null) workers.set(e.scenarioRunId, e.worker);
  }
  const finished = meta.status && meta.status !== "running";
  // Listed scenarios without a run: waiting while it goes on, never run once it ended
  // (--bail, Ctrl-C, a webServer that did not start).
  const ran = new Set(children.map((c) => c.ref));
  const notRun = started ? started.scenarios.filter((name) => !ran.has(name)) : [];
  const pending = finished ? 0 : notRun.length;
  const counts = new Map();
  for (const c of children) counts.set(c.status, (counts.get(c.status) || 0) + 1);
  if (finished && notRun.length) counts.set("not run", notRun.length);
  const totals = [...counts].map(([status, n]) => `${n} ${status}`).join(", ");
  return html`<section class="view collection-run-view" aria-label=${`Collection run ${runId}`}>
    <header class="view-bar">
      <h2 class="view-title">${meta.ref || runId}</h2>
      <span class="muted">${runId}</span>
    </header>
    <div class="run-status" role="status" aria-label="Run status">
      ${finished ? `Run ${meta.outcome || meta.status}` : "Running"}
      ${" "}· ${children.length} started${pending > 0 ? `, ${pending} waiting` : ""}
      ${totals ? ` · ${totals}` : ""}
      ${meta.durationMs != null ? ` · ${formatDuration(meta.durationMs)}` : ""}
    </div>
    <table class="children" aria-label="Scenario runs">
      <thead><tr><th>scenario</th><th>worker</th><th>status</th><th>duration</th><th>run</th></tr></thead>
      <tbody>${children.map((c) => html`<tr key=${c.runId} class=${"child-" + c.status}>
        <td>${c.ref}</td>
        <td>${workers.has(c.runId) ? workers.get(c.runId) : "—"}</td>
        <td>${c.status}</td>
        <td>${formatDuration(c.durationMs)}</td>
        <td><button type="button" class="linkish" onClick=${() => openTab({ kind: "scenario-run", runId: c.runId })}>
          ${c.runId}</button></td></tr>`)}
        ${notRun.map((name) => html`<tr key=${"not-run:" + name} class="child-not-run">
          <td>${name}</td><td>—</td><td>${finished ? "not run" : "waiting"}</td><td>—</td><td>—</td>
        </tr>`)}</tbody>
    </table>
  </section>`;
}
