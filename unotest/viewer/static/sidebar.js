// The sidebar: a filter (text and @tags) and a Status combobox, the scenarios as a
// folder tree (tree_view.js, virtualised: each with its colour as a strip, its latest
// run's status in words and its problems) with Run failed, helpers, collections (orphan
// entries red), and the shell's own pages (Runs, Env, terminals); when `unotest watch`
// runs, a line saying so and, per scenario of its batches, the last status with why it
// was chosen (read-only).
// Everything comes from store.js, live.
import { html, useMemo, useState } from "./lib.js";
import { useProject } from "./store.js";
import { openTab, tabKey, useTabs } from "./tabs.js";
import {
  failedScenarios, latestRuns, matches, problemsByPath, STATUS_FILTERS, watchSummary,
} from "./project_tree.js";
import { ProblemMark, TreeView } from "./tree_view.js";
import { runEach } from "./run_failed.js";
import { openTerminal } from "./terminals.js";

function ScenarioTree({ project, ctx }) {
  const empty = html`<p class="empty">${project.loaded ? "No scenario matches." : "Loading…"}</p>`;
  return html`<section class="side-section" aria-label="Scenarios">
    <div class="side-head"><h2>Scenarios</h2><${RunFailed} project=${project} ctx=${ctx} /></div>
    <${TreeView} project=${project} ctx=${ctx} empty=${empty} />
  </section>`;
}

// Every scenario whose latest run failed, run again (run_failed.js), whatever the
// filter shows; what it did is said under the button.
function RunFailed({ project, ctx }) {
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState(null);
  const names = useMemo(() => failedScenarios(project.scenarios, ctx.latest), [project.scenarios, ctx.latest]);
  const start = async () => {
    setBusy(true);
    setNote({ text: `Starting ${names.length} failed scenario${names.length > 1 ? "s" : ""}…` });
    try {
      await runEach(names, (n) => setNote({ text: `Started ${n} of ${names.length} failed scenario${names.length > 1 ? "s" : ""}.` }));
    } catch (err) {
      setNote({ text: `Could not start a run: ${err.message}`, error: true });
    } finally {
      setBusy(false);
    }
  };
  return html`<button type="button" class="run-failed" disabled=${busy || !names.length} onClick=${start}
      title=${names.length ? `Run again: ${names.join(", ")}` : "No scenario's latest run failed"}>Run failed</button>
    ${note && html`<p class=${`run-failed-note${note.error ? " side-error" : ""}`} role=${note.error ? "alert" : "status"}
      aria-label="Run failed progress">${note.text}</p>`}`;
}

function Helpers({ project, ctx }) {
  const helpers = project.helpers.filter((h) => matches(ctx.filter, h.name));
  return html`<section class="side-section" aria-label="Helpers">
    <h2>Helpers</h2>
    <ul class="flat-list">${helpers.map((h) => html`<li key=${h.path}>
      <button class="link" onClick=${() => openTab({ kind: "helper", path: h.path })}>${h.name}</button>
      <${ProblemMark} list=${ctx.problems.get(h.path)} />
    </li>`)}</ul>
    ${!helpers.length && html`<p class="empty">${project.helpers.length ? "No helper matches." : "No helpers."}</p>`}
  </section>`;
}

function Collections({ project, ctx }) {
  const known = useMemo(() => new Map(project.scenarios.map((s) => [s.name, s.path])), [project.scenarios]);
  const collections = project.collections
    .filter((c) => matches(ctx.filter, c.name, c.description, ...c.scenarios));
  return html`<section class="side-section" aria-label="Collections">
    <h2>Collections</h2>
    <ul class="flat-list">${collections.map((c) => html`<li key=${c.path}>
      <button class="link" title=${c.description ?? ""}
        onClick=${() => openTab({ kind: "collection", path: c.path })}>${c.name}</button>
      <${ProblemMark} list=${ctx.problems.get(c.path)} />
      <ul class="collection-entries">${c.scenarios.map((name) => known.has(name)
        ? html`<li key=${name}><button class="link entry" aria-label=${`${c.name}: ${name}`}
            onClick=${() => openTab({ kind: "scenario", path: known.get(name), case: name })}>${name}</button></li>`
        : html`<li key=${name} class="orphan" title="file not found">${name} <span class="orphan-note">file not found</span></li>`)}
      </ul>
    </li>`)}</ul>
    ${!collections.length && html`<p class="empty">${project.collections.length ? "No collection matches." : "No collections."}</p>`}
  </section>`;
}

function WatchLine({ watch }) {
  const text = watchSummary(watch);
  if (!text) return null;
  const live = watch.status === "running" && watch.connected;
  return html`<p class=${`watch-line${live ? " live" : ""}`} role="status" aria-label="Watch daemon"
    title=${watch.daemon ? `unotest watch, pid ${watch.daemon.pid}, port ${watch.daemon.port}` : ""}>${text}</p>`;
}

function Pages() {
  return html`<nav class="side-pages" aria-label="Pages">
    <button onClick=${() => openTab({ kind: "runs" })}>Runs</button>
    <button onClick=${() => openTab({ kind: "env" })}>Env</button>
    <span class="terminal-buttons">Terminal:
      ${["local", "claude", "codex"].map((kind) => html`<button key=${kind}
        aria-label=${`New ${kind} terminal`} onClick=${() => openTerminal(kind)}>${kind}</button>`)}
    </span>
  </nav>`;
}

export function Sidebar() {
  const project = useProject();
  const [filter, setFilter] = useState("");
  const [status, setStatus] = useState("all");
  const { tabs, activeKey } = useTabs();
  const active = tabs.find((t) => tabKey(t) === activeKey);
  const latest = useMemo(() => latestRuns(project.runs), [project.runs]);
  const problems = useMemo(() => problemsByPath(project.problems), [project.problems]);
  const ctx = {
    filter, status, latest, problems,
    activePath: active?.kind === "scenario" ? active.path : null, watch: project.watch,
    activeCase: active?.kind === "scenario" ? active.case : null,
  };
  return html`<aside class="sidebar" aria-label="Project">
    <${Pages} />
    <${WatchLine} watch=${project.watch} />
    <input type="search" class="filter" placeholder="Filter" aria-label="Filter"
      value=${filter} onInput=${(e) => setFilter(e.currentTarget.value)} />
    <label class="status-filter">Status <select aria-label="Status" value=${status}
        onChange=${(e) => setStatus(e.currentTarget.value)}>
      ${STATUS_FILTERS.map(([value, label]) => html`<option key=${value} value=${value}>${label}</option>`)}
    </select></label>
    ${project.error && html`<p class="side-error" role="alert">${project.error}</p>`}
    <${ScenarioTree} project=${project} ctx=${ctx} />
    <${Helpers} project=${project} ctx=${ctx} />
    <${Collections} project=${project} ctx=${ctx} />
  </aside>`;
}
