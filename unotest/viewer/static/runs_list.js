// The Runs page: the runs (newest first) with their status, outcome and duration, a page
// at a time (GET /api/runs: 100 runs, "Load more" asks for the next 100), filtered by
// scenario or collection and by status on the server; a row opens its run tab. The first
// page is asked again when a run starts or ends (fs:run-*) and after a reconnect; the
// pages loaded after it are kept.
import { html, useEffect, useRef, useState } from "./lib.js";
import { runsPage } from "./api.js";
import { onMessage, onResync } from "./live.js";
import { useProject } from "./store.js";
import { openTab } from "./tabs.js";

const STATUSES = ["running", "passed", "failed", "aborted", "interrupted"];
const PAGE = 100;

export function formatDuration(ms) {
  if (ms === null || ms === undefined) return "–";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
}

function openRun(run) {
  openTab(run.kind === "collection"
    ? { kind: "collection-run", runId: run.runId }
    : { kind: "scenario-run", runId: run.runId });
}

// The first page again, the older pages loaded before kept after it: from where the old
// list meets the new page's last run (or the new page alone when they no longer meet).
function withFirstPage(old, page) {
  const last = page.runs[page.runs.length - 1];
  const at = last ? old.runs.findIndex((r) => r.runId === last.runId) : -1;
  if (!page.next || at < 0 || !old.next && at === old.runs.length - 1) return page;
  return { runs: [...page.runs, ...old.runs.slice(at + 1)], next: old.next };
}

// The runs for `filters` ({scenario, status}): {runs, next, loaded, error, busy, more()}.
function usePagedRuns(filters) {
  const [list, setList] = useState({ runs: [], next: null, loaded: false, error: null, busy: false });
  const current = useRef(list);
  current.current = list;
  const key = `${filters.scenario}\n${filters.status}`;
  useEffect(() => {
    let alive = true;
    let going = null;
    let again = false;
    const first = (fresh) => {
      if (going) {
        again = true;
        return;
      }
      going = runsPage({ limit: PAGE, ...filters })
        .then((page) => alive && setList((old) => ({
          ...(fresh ? page : withFirstPage(old, page)), loaded: true, error: null, busy: false,
        })))
        .catch((err) => alive && setList((old) => ({ ...old, loaded: true, error: err.message })))
        .finally(() => {
          going = null;
          if (again && alive) {
            again = false;
            first(false);
          }
        });
    };
    setList({ runs: [], next: null, loaded: false, error: null, busy: false });
    first(true);
    const offMessage = onMessage((m) => {
      if (m.kind === "fs:run-started" || m.kind === "fs:run-finished") first(false);
    });
    const offResync = onResync(() => first(false));
    return () => {
      alive = false;
      offMessage();
      offResync();
    };
  }, [key]);
  const more = () => {
    const before = current.current.next;
    if (!before || current.current.busy) return;
    setList((old) => ({ ...old, busy: true }));
    runsPage({ limit: PAGE, before, ...filters })
      .then((page) => setList((old) => {
        if (old.next !== before) return { ...old, busy: false }; // filters changed meanwhile
        const seen = new Set(old.runs.map((r) => r.runId));
        return { ...old, runs: [...old.runs, ...page.runs.filter((r) => !seen.has(r.runId))],
          next: page.next, busy: false, error: null };
      }))
      .catch((err) => setList((old) => ({ ...old, busy: false, error: err.message })));
  };
  return { ...list, more };
}

export function RunsList() {
  const project = useProject();
  const [scenario, setScenario] = useState("");
  const [status, setStatus] = useState("");
  const list = usePagedRuns({ scenario, status });
  const refs = [...new Set([
    ...project.scenarios.map((s) => s.name), ...project.collections.map((c) => c.name),
    ...list.runs.map((r) => r.ref), ...(scenario ? [scenario] : []),
  ])].sort();
  const count = `${list.runs.length} run${list.runs.length === 1 ? "" : "s"}${list.next ? ", more older" : ""}`;
  return html`<section class="runs-list" aria-label="Runs">
    <h1>Runs</h1>
    <div class="runs-filters">
      <label>Scenario <select aria-label="Scenario" value=${scenario} onChange=${(e) => setScenario(e.currentTarget.value)}>
        <option value="">all</option>
        ${refs.map((r) => html`<option key=${r} value=${r}>${r}</option>`)}
      </select></label>
      <label>Status <select aria-label="Status" value=${status} onChange=${(e) => setStatus(e.currentTarget.value)}>
        <option value="">all</option>
        ${STATUSES.map((s) => html`<option key=${s} value=${s}>${s}</option>`)}
      </select></label>
      <span class="count">${list.loaded ? count : ""}</span>
    </div>
    ${list.error && html`<p class="side-error" role="alert">${list.error}</p>`}
    ${list.runs.length ? html`<table class="runs-table">
      <thead><tr><th>Run</th><th>Scenario</th><th>Status</th><th>Outcome</th><th>Duration</th><th>Started</th></tr></thead>
      <tbody>${list.runs.map((r) => html`<tr key=${r.runId} class=${`status-${r.status}`}>
        <td><button class="link" onClick=${() => openRun(r)}
          aria-label=${`Open run ${r.runId}`}>${r.runId}</button></td>
        <td>${r.kind === "collection" ? `collection ${r.ref}` : r.ref}</td>
        <td><span class=${`run-badge status-${r.status}`}>${r.status}</span></td>
        <td>${r.outcome ?? "–"}</td>
        <td>${formatDuration(r.durationMs)}</td>
        <td>${new Date(r.startedAt).toLocaleString()}</td>
      </tr>`)}</tbody></table>`
      : html`<p class="empty">${list.loaded ? "No runs match." : "Loading…"}</p>`}
    ${list.next && html`<p><button onClick=${list.more} disabled=${list.busy}>Load more</button></p>`}
  </section>`;
}
