// The Runs page: every run (newest first) with its status, outcome and duration,
// filtered by scenario or collection and by status; a row opens its run tab.
import { html, useState } from "./lib.js";
import { useProject } from "./store.js";
import { openTab } from "./tabs.js";

const STATUSES = ["running", "passed", "failed", "aborted", "interrupted"];

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

export function RunsList() {
  const { runs, loaded } = useProject();
  const [ref, setRef] = useState("");
  const [status, setStatus] = useState("");
  const refs = [...new Set(runs.map((r) => r.ref))].sort();
  const shown = runs.filter((r) => (!ref || r.ref === ref) && (!status || r.status === status));
  return html`<section class="runs-list" aria-label="Runs">
    <h1>Runs</h1>
    <div class="runs-filters">
      <label>Scenario <select aria-label="Scenario" value=${ref} onChange=${(e) => setRef(e.currentTarget.value)}>
        <option value="">all</option>
        ${refs.map((r) => html`<option key=${r} value=${r}>${r}</option>`)}
      </select></label>
      <label>Status <select aria-label="Status" value=${status} onChange=${(e) => setStatus(e.currentTarget.value)}>
        <option value="">all</option>
        ${STATUSES.map((s) => html`<option key=${s} value=${s}>${s}</option>`)}
      </select></label>
      <span class="count">${shown.length} of ${runs.length}</span>
    </div>
    ${shown.length ? html`<table class="runs-table">
      <thead><tr><th>Run</th><th>Scenario</th><th>Status</th><th>Outcome</th><th>Duration</th><th>Started</th></tr></thead>
      <tbody>${shown.map((r) => html`<tr key=${r.runId} class=${`status-${r.status}`}>
        <td><button class="link" onClick=${() => openRun(r)}
          aria-label=${`Open run ${r.runId}`}>${r.runId}</button></td>
        <td>${r.kind === "collection" ? `collection ${r.ref}` : r.ref}</td>
        <td><span class=${`run-badge status-${r.status}`}>${r.status}</span></td>
        <td>${r.outcome ?? "–"}</td>
        <td>${formatDuration(r.durationMs)}</td>
        <td>${new Date(r.startedAt).toLocaleString()}</td>
      </tr>`)}</tbody></table>`
      : html`<p class="empty">${loaded ? "No runs match." : "Loading…"}</p>`}
  </section>`;
}
