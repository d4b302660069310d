// The sidebar: a filter (text and @tags) and a Status combobox, the scenarios as a
// folder tree (each with its colour as a strip, its latest run's status in words and its
// problems) with Run failed, helpers, collections (orphan entries red), and the shell's
// own pages (Runs, Env, terminals); when `unotest watch` runs, a line saying so and, per
// scenario of its batches, the last status with why it was chosen (read-only).
// Everything comes from store.js, live.
import { html, useState } from "./lib.js";
import { useProject } from "./store.js";
import { openTab, tabKey, useTabs } from "./tabs.js";
import {
  buildTree, failedScenarios, latestRuns, matches, problemsByPath, problemTitle, reasonText, scenariosWithProblems,
  STATUS_FILTERS, statusMatches, watchEntry, watchSummary,
} from "./project_tree.js";
import { onTreeKey } from "./tree_keys.js";
import { runEach } from "./run_failed.js";
import { openTerminal } from "./terminals.js";

function ProblemMark({ list }) {
  if (!list?.length) return null;
  const n = list.length;
  return html`<span class="problem-mark" title=${problemTitle(list)}
    aria-label=${`${n} problem${n > 1 ? "s" : ""}`}>⚠ ${n}</span>`;
}

// The latest run's status in the Runs list's words (passed, failed, running, ...).
function RunBadge({ run }) {
  if (!run) return null;
  const label = run.status;
  return html`<span class=${`run-badge status-${run.status}`} title=${`latest run: ${label}`}>${label}</span>`;
}

// The daemon's last status for one scenario; its reasons as the tooltip, and as a line
// under the scenario once the badge is clicked.
function WatchBadge({ entry, open, setOpen }) {
  if (!entry) return null;
  const status = entry.status ?? "queued";
  return html`<button class=${`watch-badge status-${status}`} aria-label=${`watch: ${status}`}
      aria-expanded=${open ? "true" : "false"} title=${entry.reasonLines.join("\n")}
      onClick=${(e) => { e.stopPropagation(); setOpen(!open); }}>↻ ${status}</button>`;
}

function ScenarioItem({ scenario, ctx }) {
  const problems = ctx.problems.get(scenario.path);
  const selected = ctx.activePath === scenario.path
    && (!ctx.activeCase || ctx.activeCase === scenario.name);
  const [reasonOpen, setReasonOpen] = useState(false);
  const found = watchEntry(ctx.watch, scenario.path);
  const entry = found && { ...found, reasonLines: (found.reasons ?? []).map((r) => reasonText(r, ctx.watch)) };
  return html`<li role="treeitem" aria-label=${scenario.name} tabindex="-1"
      aria-selected=${selected ? "true" : "false"}
      class=${`tree-leaf${problems ? " has-problems" : ""}`} data-path=${scenario.path}
      onClick=${(e) => { e.stopPropagation(); openTab({ kind: "scenario", path: scenario.path, case: scenario.name }); }}>
    <span class="color-swatch" style=${{ background: scenario.color }} title=${`scenario colour ${scenario.color}`}
      aria-hidden="true"></span>
    <span class="leaf-name" title=${scenario.title}>${scenario.name.split("/").pop()}</span>
    <${ProblemMark} list=${problems} />
    <${RunBadge} run=${ctx.latest.get(scenario.name)} />
    <${WatchBadge} entry=${entry} open=${reasonOpen} setOpen=${setReasonOpen} />
    ${entry && reasonOpen && html`<div class="watch-reason" aria-label=${`why ${scenario.name} ran`}>
      ${entry.reasonLines.length ? entry.reasonLines.map((line, i) => html`<div key=${i}>${line}</div>`) : "no reason given"}
    </div>`}
  </li>`;
}

function Folder({ node, ctx }) {
  const [open, setOpen] = useState(true);
  const expanded = open || filtering(ctx);
  return html`<li role="treeitem" aria-label=${node.name} aria-expanded=${expanded ? "true" : "false"}
      tabindex="-1" class="tree-folder" onClick=${(e) => { e.stopPropagation(); setOpen(!expanded); }}>
    <span class="folder-name">${expanded ? "▾" : "▸"} ${node.name}/</span>
    ${expanded && html`<ul role="group">${renderNode(node, ctx)}</ul>`}
  </li>`;
}

// A filter or a status is set: folders open to show what they keep.
function filtering(ctx) {
  return Boolean(ctx.filter.trim()) || ctx.status !== "all";
}

// A scenario the filter (its text and @tags) and the Status combobox both keep.
function shown(scenario, ctx) {
  return matches(ctx.filter, scenario.name, scenario.title) && statusMatches(ctx.status, ctx.latest.get(scenario.name));
}

function visible(node, ctx) {
  return node.items.some((s) => shown(s, ctx)) || [...node.folders.values()].some((f) => visible(f, ctx));
}

function renderNode(node, ctx) {
  const folders = [...node.folders.values()].filter((f) => visible(f, ctx))
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((f) => html`<${Folder} key=${`d:${f.path}`} node=${f} ctx=${ctx} />`);
  const items = node.items.filter((s) => shown(s, ctx))
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((s) => html`<${ScenarioItem} key=${s.name} scenario=${s} ctx=${ctx} />`);
  return [...folders, ...items];
}

function ScenarioTree({ project, ctx }) {
  const root = buildTree(scenariosWithProblems(project.scenarios, project.problems));
  const nodes = renderNode(root, ctx);
  const first = (el) => { if (el && !el.querySelector('[tabindex="0"]')) el.querySelector('[role="treeitem"]')?.setAttribute("tabindex", "0"); };
  return html`<section class="side-section" aria-label="Scenarios">
    <div class="side-head"><h2>Scenarios</h2><${RunFailed} project=${project} ctx=${ctx} /></div>
    ${nodes.length
      ? html`<ul role="tree" aria-label="Scenarios" class="tree" ref=${first} onKeyDown=${onTreeKey}>${nodes}</ul>`
      : html`<p class="empty">${project.loaded ? "No scenario matches." : "Loading…"}</p>`}
  </section>`;
}

// Every scenario whose latest run failed, run again (run_failed.js), whatever the
// filter shows; what it did is said under the button.
function RunFailed({ project, ctx }) {
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState(null);
  const names = failedScenarios(project.scenarios, ctx.latest);
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
  const known = new Map(project.scenarios.map((s) => [s.name, s.path]));
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
  const ctx = {
    filter, status, latest: latestRuns(project.runs), problems: problemsByPath(project.problems),
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
