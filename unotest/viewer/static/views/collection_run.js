// The collection-run tab: the collection's scenario runs (the detail's `children`), with
// status and duration, kept live by refetching the detail on fs:run-started,
// fs:collection-run-step and a child's fs:run-finished; each opens its own run tab.
// The scenarios it never ran (not found, with errors, not started) are listed with the
// CLI's counts: from the collection's own file while it runs (the runner leaves them out
// of collection-run:started), from its events.ndjson (the reporter's test_end and
// run_end) once it has ended. Stop aborts it (the server stops its process, as `unotest
// dbg RUN abort` does); Run again starts the collection anew, as the run it repeats was
// started (againRequest). With a pool of browser servers (wsEndpoint as a list), the column
// Browser names each run's endpoint, a region lists the endpoints that went down, and a run
// lost with its endpoint (run again elsewhere, not counted) says so in its status.
import { html, useCallback, useEffect, useRef, useState } from "../lib.js";
import { api, runFileTextOrNull } from "../api.js";
import { onMessage, onResync } from "../live.js";
import { openTab } from "../tabs.js";
import { useProject } from "../store.js";
import { formatDuration } from "./run_model.js";
import { startRun } from "./launch.js";

/** events.ndjson's envelopes ({type, data}), or [] when it cannot be read. */
async function reporterEvents(runId) {
  const text = await runFileTextOrNull(runId, "events.ndjson");
  if (text === null) return [];
  const out = [];
  for (const line of text.split("\n")) {
    try {
      if (line) out.push(JSON.parse(line));
    } catch {
      // a line cut short: the rest still counts
    }
  }
  return out;
}

// The CLI's summary ("3 passed, 1 failed, 1 skipped"): its order and its words.
const SUMMARY_ORDER = ["completed", "flaky", "failed", "interrupted", "aborted", "skipped"];
const SUMMARY_LABEL = { completed: "passed" };

/** The summary of the reporter's test_end events, as `unotest collection` prints it. */
export function cliSummary(ends) {
  const counts = new Map();
  for (const { data } of ends) {
    const kind = data.status === "flaky" ? "flaky" : data.outcome;
    counts.set(kind, (counts.get(kind) || 0) + 1);
  }
  return SUMMARY_ORDER.filter((k) => counts.get(k)).map((k) => `${counts.get(k)} ${SUMMARY_LABEL[k] || k}`).join(", ");
}

/** The collection's entries that a run of it leaves out (not found, with errors), from
 *  the project as it is now: [{name, note}]. */
function leftOut(project, name, started) {
  const collection = (project.collections || []).find((c) => c.name === name);
  if (!collection || !started) return [];
  const listed = new Set(started.scenarios);
  const known = new Set((project.scenarios || []).map((s) => s.name));
  const seen = new Set();
  const out = [];
  for (const entry of collection.scenarios) {
    if (listed.has(entry) || seen.has(entry)) continue;
    seen.add(entry);
    out.push({ name: entry, note: known.has(entry) ? "the scenario has errors" : "scenario not found" });
  }
  return out;
}

/** The request that runs the collection again as `detail`'s run was started: its workers,
 *  bail and retries from the request this viewer kept (the detail's `request`), else
 *  (a run started by the CLI or an agent, which records none of them) the workers its
 *  events show, without bail, retries left to the project's config. */
export function againRequest(detail, workerCount) {
  const kept = detail.request && detail.request.kind === "collection" ? detail.request : {};
  const request = { kind: "collection", collection: detail.meta.ref, workers: kept.workers ?? workerCount };
  if (kept.bail) request.bail = true;
  if (kept.retries != null) request.retries = kept.retries;
  return request;
}

export function CollectionRunView({ tab }) {
  const runId = tab.runId;
  const project = useProject();
  const [detail, setDetail] = useState(null);
  const [error, setError] = useState(null);
  const [reporter, setReporter] = useState([]);
  const [stopping, setStopping] = useState(false);
  const [notice, setNotice] = useState(null);
  const [starting, setStarting] = useState(false);
  const childIds = useRef(new Set());
  const timer = useRef(null);

  const load = useCallback(() => {
    api(`/api/runs/${runId}`).then(
      (data) => {
        childIds.current = new Set((data.children || []).map((c) => c.runId));
        setDetail(data);
        setError(null);
        const ended = data.meta && data.meta.status !== "running";
        if (ended && (data.files || []).includes("events.ndjson")) readReporter();
      },
      (err) => setError(err.message),
    );
  }, [runId]);
  // The reporter writes its last events (the never-run scenarios' test_end, run_end)
  // just after the collection's end line: read again until run_end is there (a while).
  const reporterTries = useRef(0);
  const readReporter = useCallback(() => {
    reporterEvents(runId).then((events) => {
      setReporter(events);
      if (!events.some((e) => e.type === "run_end") && reporterTries.current++ < 20) {
        setTimeout(readReporter, 500);
      }
    }, () => setReporter([]));
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

  const stop = async () => {
    setStopping(true);
    setNotice(null);
    try {
      await api(`/api/runs/${runId}/commands`, { method: "POST", body: { cmd: "abort" } });
      load();
    } catch (err) {
      setNotice(`Stop: ${err.message}`);
    } finally {
      setStopping(false);
    }
  };

  if (error && !detail) return html`<section class="view"><p class="view-error" role="alert">${error}</p></section>`;
  if (!detail) return html`<section class="view"><p class="muted">Loading run ${runId}…</p></section>`;
  const meta = detail.meta || {};
  const started = (detail.events || []).find((e) => e.kind === "collection-run:started");
  const children = [...(detail.children || [])].sort((a, b) => a.startedAt - b.startedAt);
  // The worker (0-based, as the console's [w0]) of each scenario run: our additive `worker` on the
  // orchestrator's collection-run:scenario-started (none of 0.5.0's fields carries it;
  // a collection run written before it was added shows "—").
  const workers = new Map();
  // Ours too: the browser endpoint of each run, the runs lost with theirs, the endpoints down.
  const endpoints = new Map();
  const lost = new Set();
  const down = [];
  for (const e of detail.events || []) {
    if (e.kind === "collection-run:scenario-started" && e.worker != null) workers.set(e.scenarioRunId, e.worker);
    if (e.kind === "collection-run:scenario-started" && e.endpoint) endpoints.set(e.scenarioRunId, e.endpoint);
    if (e.kind === "collection-run:scenario-finished" && e.infraRetry) lost.add(e.scenarioRunId);
    if (e.kind === "collection-run:endpoint-down") down.push(e);
  }
  const pooled = endpoints.size > 0;
  const finished = meta.status && meta.status !== "running";
  // Listed scenarios without a run: waiting while it goes on, never run once it ended
  // (--bail, Ctrl-C, a webServer that did not start).
  const ran = new Set(children.map((c) => c.ref));
  const notRun = started ? started.scenarios.filter((name) => !ran.has(name)) : [];
  const pending = finished ? 0 : notRun.length;
  // What the reporter said at the end (the CLI's words), else what the project says now.
  const ends = finished ? reporter.filter((e) => e.type === "test_end" && e.data) : [];
  const neverRan = ends.length
    ? ends.filter((e) => !e.data.run_id && !ran.has(e.data.name) && !notRun.includes(e.data.name))
      .map((e) => ({ name: e.data.name, status: e.data.status, note: e.data.error_message || "" }))
    : leftOut(project, meta.ref, started).map((e) => ({ ...e, status: e.note === "scenario not found" ? "skipped" : "failed" }));
  const notFound = neverRan.filter((e) => e.note === "scenario not found").length;
  const withErrors = neverRan.length - notFound;
  const counts = new Map();
  for (const c of children) if (!lost.has(c.runId)) counts.set(c.status, (counts.get(c.status) || 0) + 1);
  if (finished && notRun.length) counts.set("not run", notRun.length);
  const totals = ends.length ? cliSummary(ends) : [...counts].map(([status, n]) => `${n} ${status}`).join(", ");
  const unrun = [notFound && `${notFound} not found`, withErrors && `${withErrors} with errors`].filter(Boolean);
  const listed = (started ? started.scenarios.length : 0) + neverRan.length;
  const workerCount = Math.max(1, ...[...workers.values()].map((w) => w + 1));
  return html`<section class="view collection-run-view" aria-label=${`Collection run ${runId}`}>
    <header class="view-bar">
      <h2 class="view-title">${meta.ref || runId}</h2>
      <span class="muted">${runId}</span>
      <span class="spacer"></span>
      ${!finished && html`<button type="button" onClick=${stop} disabled=${stopping}>${stopping ? "Stopping…" : "Stop"}</button>`}
      ${finished && meta.ref && html`<button type="button" disabled=${starting}
        onClick=${() => startRun(againRequest(detail, workerCount), "collection-run", setNotice,
          setStarting)}>Run again</button>`}
    </header>
    <div class="run-status" role="status" aria-label="Run status">
      ${finished ? `Run ${meta.outcome || meta.status}` : stopping ? "Stopping" : "Running"}
      ${started ? ` · ${listed} scenario${listed === 1 ? "" : "s"}${unrun.length ? ` (${unrun.join(", ")})` : ""}` : ""}
      ${" "}· ${children.length} started${pending > 0 ? `, ${pending} waiting` : ""}
      ${totals ? ` · ${totals}` : ""}
      ${meta.durationMs != null ? ` · ${formatDuration(meta.durationMs)}` : ""}
    </div>
    ${notice && html`<p class="run-notice" role="alert">${notice}</p>`}
    ${down.length > 0 && html`<ul class="endpoints-down" aria-label="Browser endpoints down">
      ${down.map((e, i) => html`<li key=${i}>Browser endpoint ${e.endpoint} is down: ${e.reason}</li>`)}
    </ul>`}
    <table class="children" aria-label="Scenario runs">
      <thead><tr><th>scenario</th><th>worker</th>${pooled && html`<th>browser</th>`}<th>status</th><th>duration</th><th>run</th></tr></thead>
      <tbody>${children.map((c) => html`<tr key=${c.runId} class=${"child-" + c.status}>
        <td>${c.ref}</td>
        <td>${workers.has(c.runId) ? workers.get(c.runId) : "—"}</td>
        ${pooled && html`<td>${endpoints.get(c.runId) || "—"}</td>`}
        <td>${lost.has(c.runId) ? `${c.status} (lost with its browser endpoint: run again, not counted)` : c.status}</td>
        <td>${formatDuration(c.durationMs)}</td>
        <td><button type="button" class="linkish" onClick=${() => openTab({ kind: "scenario-run", runId: c.runId })}>
          ${c.runId}</button></td></tr>`)}
        ${notRun.map((name) => html`<tr key=${"not-run:" + name} class="child-not-run">
          <td>${name}</td><td>—</td>${pooled && html`<td>—</td>`}<td>${finished ? "not run" : "waiting"}</td><td>—</td><td>—</td>
        </tr>`)}
        ${neverRan.map((e) => html`<tr key=${"never:" + e.name} class=${"child-not-run child-" + e.status}>
          <td>${e.name}</td><td>—</td>${pooled && html`<td>—</td>`}<td>${e.status}${e.note ? ` (${e.note})` : ""}</td><td>—</td><td>—</td>
        </tr>`)}</tbody>
    </table>
  </section>`;
}
