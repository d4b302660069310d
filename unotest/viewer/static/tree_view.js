// The Scenarios tree, virtualised: only the rows in view (and a few around, and the
// focused one) are in the DOM, each of a fixed height and absolutely placed, as Steps
// does (views/steps.js), so a project of 10,000 scenarios opens and filters as quickly
// as one of ten. Still a WAI-ARIA tree: each row a `treeitem` named by its scenario or
// folder, with aria-level, aria-setsize and aria-posinset (most of its siblings are not
// in the DOM), a folder's aria-expanded, and the rows in view nested in their folders'
// `group`s. Folders are collapsed by default beyond a size (project_tree.js
// openByDefault); a filter or a status opens those holding a match. The keyboard walks
// the rows, not the DOM (tree_keys.js): a row it moves to is scrolled into view and
// focused; the scenario of the active tab is revealed (its folders opened, its row
// scrolled into view) when that tab becomes active.
import { html, useLayoutEffect, useMemo, useRef, useState, useEffect } from "./lib.js";
import { openTab } from "./tabs.js";
import {
  buildTree, flattenTree, foldersOver, makeMatcher, openByDefault, problemTitle, pruneTree, reasonText,
  scenariosWithProblems, statusMatches, watchEntry,
} from "./project_tree.js";
import { treeKeyAction } from "./tree_keys.js";

export const ROW = 24;
const OVERSCAN = 8;
const INDENT = 14;

export function ProblemMark({ list }) {
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

// The daemon's last status for one scenario; its reasons as the tooltip, and as lines
// under the scenario once the badge is clicked.
function WatchBadge({ entry, open, toggle }) {
  if (!entry) return null;
  const status = entry.status ?? "queued";
  return html`<button class=${`watch-badge status-${status}`} aria-label=${`watch: ${status}`}
      aria-expanded=${open ? "true" : "false"} title=${entry.reasonLines.join("\n")}
      onClick=${(e) => { e.stopPropagation(); toggle(); }}>↻ ${status}</button>`;
}

function watchOf(ctx, scenario) {
  const found = watchEntry(ctx.watch, scenario.path);
  return found && { ...found, reasonLines: (found.reasons ?? []).map((r) => reasonText(r, ctx.watch)) };
}

function aria(row, tabKey) {
  return {
    role: "treeitem", "aria-level": row.level, "aria-setsize": row.setsize, "aria-posinset": row.posinset,
    tabindex: row.key === tabKey ? "0" : "-1", "data-key": row.key,
  };
}

function ScenarioRow({ row, top, height, tree }) {
  const { scenario } = row;
  const { ctx } = tree;
  const problems = ctx.problems.get(scenario.path);
  const selected = ctx.activePath === scenario.path && (!ctx.activeCase || ctx.activeCase === scenario.name);
  const entry = watchOf(ctx, scenario);
  const reasonOpen = tree.reasons.has(scenario.name);
  return html`<li ...${aria(row, tree.tabKey)} aria-label=${scenario.name} aria-selected=${selected ? "true" : "false"}
      class=${`tree-leaf${problems ? " has-problems" : ""}`} data-path=${scenario.path}
      style=${{ top: `${top}px`, height: `${height}px`, paddingLeft: `${4 + (row.level - 1) * INDENT}px` }}
      onClick=${(e) => { e.stopPropagation(); openTab({ kind: "scenario", path: scenario.path, case: scenario.name }); }}>
    <span class="color-swatch" style=${{ background: scenario.color }} title=${`scenario colour ${scenario.color}`}
      aria-hidden="true"></span>
    <span class="leaf-name" title=${scenario.title}>${scenario.name.split("/").pop()}</span>
    <${ProblemMark} list=${problems} />
    <${RunBadge} run=${ctx.latest.get(scenario.name)} />
    <${WatchBadge} entry=${entry} open=${reasonOpen} toggle=${() => tree.toggleReason(scenario.name)} />
    ${entry && reasonOpen && html`<div class="watch-reason" aria-label=${`why ${scenario.name} ran`}>
      ${entry.reasonLines.length
        ? entry.reasonLines.map((line, i) => html`<div key=${i} title=${line}>${line}</div>`) : "no reason given"}
    </div>`}
  </li>`;
}

function FolderRow({ row, top, tree, children }) {
  const { node, expanded } = row;
  return html`<li ...${aria(row, tree.tabKey)} aria-label=${node.name} aria-expanded=${expanded ? "true" : "false"}
      class="tree-folder" style=${{ top: `${top}px`, height: `${ROW}px` }}
      onClick=${(e) => { e.stopPropagation(); tree.toggle(node.path, expanded); }}>
    <span class="folder-name" style=${{ paddingLeft: `${4 + (row.level - 1) * INDENT}px` }}>${expanded ? "▾" : "▸"} ${node.name}/</span>
    ${expanded && html`<ul role="group">${children}</ul>`}
  </li>`;
}

// The first index whose row ends below `y` (tops ascending, tops[rows] the total height).
function rowAt(tops, y) {
  let lo = 0;
  let hi = tops.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (tops[mid + 1] <= y) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The rows from `first` to `last` (exclusive), the focused one, and their folders, as
// nested vnodes: a row's `top` relative to its folder's row (its containing block).
function renderWindow(rows, tops, first, last, extra, tree) {
  const wanted = new Set();
  const want = (i) => {
    while (i >= 0 && !wanted.has(i)) {
      wanted.add(i);
      i = rows[i].parent;
    }
  };
  for (let i = first; i < last; i++) want(i);
  if (extra >= 0) want(extra);
  const children = new Map();
  for (const i of [...wanted].sort((a, b) => a - b)) {
    const parent = rows[i].parent;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(i);
  }
  const draw = (i) => {
    const row = rows[i];
    const top = tops[i] - (row.parent >= 0 ? tops[row.parent] : 0);
    if (row.kind === "folder") {
      const inner = (children.get(i) ?? []).map(draw);
      return html`<${FolderRow} key=${row.key} row=${row} top=${top} tree=${tree}>${inner}</${FolderRow}>`;
    }
    return html`<${ScenarioRow} key=${row.key} row=${row} top=${top} height=${tops[i + 1] - tops[i]} tree=${tree} />`;
  };
  return (children.get(-1) ?? []).map(draw);
}

// The person's folder choices: `opened` (path → open) while nothing filters, `closed`
// (paths) while a filter or a status does, forgotten when that filter changes.
function useFolders(filterKey) {
  const [opened, setOpened] = useState(() => new Map());
  const [closed, setClosed] = useState(() => ({ key: filterKey, paths: new Set() }));
  const closedNow = closed.key === filterKey ? closed.paths : null;
  const toggle = (path, expanded, filtering) => {
    if (filtering) {
      const paths = new Set(closedNow ?? []);
      if (expanded) paths.add(path);
      else paths.delete(path);
      setClosed({ key: filterKey, paths });
    } else {
      setOpened((was) => new Map(was).set(path, !expanded));
    }
  };
  const open = (paths) => setOpened((was) => {
    const next = new Map(was);
    for (const path of paths) next.set(path, true);
    return next;
  });
  return { opened, closed: closedNow, toggle, open };
}

export function TreeView({ project, ctx, empty }) {
  const all = project.scenarios;
  const root = useMemo(() => buildTree(scenariosWithProblems(all, project.problems)), [all, project.problems]);
  const filtering = Boolean(ctx.filter.trim()) || ctx.status !== "all";
  const filterKey = `${ctx.filter}\u0000${ctx.status}`;
  const kept = useMemo(() => {
    if (!filtering) return root;
    const match = makeMatcher(ctx.filter);
    return pruneTree(root, (s) => match(s.name, s.title) && statusMatches(ctx.status, ctx.latest.get(s.name)));
  }, [root, filterKey, ctx.latest]);
  const folders = useFolders(filterKey);
  const rows = useMemo(() => flattenTree(kept, (node) => (filtering
    ? !folders.closed?.has(node.path)
    : folders.opened.get(node.path) ?? openByDefault(node, all.length))), [kept, folders.opened, folders.closed, all.length]);
  const [reasons, setReasons] = useState(() => new Set());
  const tops = useMemo(() => {
    const found = new Array(rows.length + 1);
    let y = 0;
    for (let i = 0; i < rows.length; i++) {
      found[i] = y;
      let lines = 0;
      const row = rows[i];
      if (row.kind === "scenario" && reasons.has(row.scenario.name)) {
        const entry = watchEntry(ctx.watch, row.scenario.path);
        if (entry) lines = Math.max(1, entry.reasons?.length ?? 0);
      }
      y += ROW * (1 + lines);
    }
    found[rows.length] = y;
    return found;
  }, [rows, reasons, ctx.watch]);
  const index = useMemo(() => new Map(rows.map((row, i) => [row.key, i])), [rows]);

  const box = useRef(null);
  const list = useRef(null);
  const [view, setView] = useState({ top: 0, height: 480 });
  const [focusKey, setFocusKey] = useState(null);
  const wantFocus = useRef(false);
  const measure = () => {
    const el = box.current;
    if (el) setView({ top: el.scrollTop, height: el.clientHeight || 480 });
  };
  useEffect(() => {
    const el = box.current;
    if (!el || typeof ResizeObserver === "undefined") return undefined;
    const observer = new ResizeObserver(() => measure());
    observer.observe(el);
    return () => observer.disconnect();
  }, [rows.length > 0]);

  // Scroll the box (itself, not the page) so that row i is in view.
  const scrollTo = (i) => {
    const el = box.current;
    if (!el || i < 0) return;
    const height = el.clientHeight || view.height;
    const top = tops[i];
    const bottom = tops[i + 1];
    let next = el.scrollTop;
    if (top < next) next = top;
    else if (bottom > next + height) next = bottom - height;
    if (next !== el.scrollTop) el.scrollTop = next;
    setView({ top: el.scrollTop, height });
  };
  const focusRow = (i) => {
    setFocusKey(rows[i].key);
    wantFocus.current = true;
    scrollTo(i);
  };
  useLayoutEffect(() => {
    if (!wantFocus.current || !focusKey) return;
    const el = list.current?.querySelector(`[data-key="${CSS.escape(focusKey)}"]`);
    if (el) {
      wantFocus.current = false;
      if (document.activeElement !== el) el.focus({ preventScroll: true });
    }
  });

  // The active tab's scenario revealed once when that tab becomes active: its folders
  // opened (when nothing filters), its row scrolled into view.
  // (A layout effect, before the one below, so both run in the same commit.)
  const reveal = useRef(null);
  useLayoutEffect(() => {
    reveal.current = ctx.activePath ? { path: ctx.activePath, name: ctx.activeCase, opened: false } : null;
  }, [ctx.activePath, ctx.activeCase]);
  useLayoutEffect(() => {
    const wanted = reveal.current;
    if (!wanted || !rows.length) return;
    const at = rows.findIndex((r) => r.kind === "scenario" && r.scenario.path === wanted.path
      && (!wanted.name || r.scenario.name === wanted.name));
    if (at >= 0) {
      reveal.current = null;
      scrollTo(at);
      return;
    }
    const scenario = all.find((s) => s.path === wanted.path && (!wanted.name || s.name === wanted.name));
    reveal.current = null;
    if (scenario && !filtering && !wanted.opened) {
      reveal.current = { ...wanted, opened: true };
      folders.open(foldersOver(scenario.name));
    }
  });

  const tree = {
    ctx,
    reasons,
    tabKey: index.has(focusKey) ? focusKey : null,
    toggle: (path, expanded) => folders.toggle(path, expanded, filtering),
    toggleReason: (name) => setReasons((was) => {
      const next = new Set(was);
      if (next.has(name)) next.delete(name);
      else next.add(name);
      return next;
    }),
  };
  if (!rows.length) return empty;
  const first = Math.max(0, rowAt(tops, view.top) - OVERSCAN);
  const last = Math.min(rows.length, rowAt(tops, view.top + view.height) + 1 + OVERSCAN);
  if (!tree.tabKey) tree.tabKey = rows[first].key;
  const onKeyDown = (event) => {
    const current = document.activeElement?.closest?.('[role="treeitem"]');
    const at = current ? index.get(current.dataset.key) ?? -1 : -1;
    const page = Math.max(1, Math.floor((box.current?.clientHeight || view.height) / ROW) - 1);
    const action = treeKeyAction(event.key, rows, at, page);
    if (!action) return;
    event.preventDefault();
    if (action.click) current?.click();
    else focusRow(action.focus);
  };
  const onFocus = (event) => {
    const key = event.target?.closest?.('[role="treeitem"]')?.dataset.key;
    if (key && key !== focusKey) setFocusKey(key);
  };
  return html`<div class="tree-scroll" ref=${box} onScroll=${measure}>
    <ul role="tree" aria-label="Scenarios" class="tree" ref=${list} style=${{ height: `${tops[rows.length]}px` }}
        onKeyDown=${onKeyDown} onFocusCapture=${onFocus}>
      ${renderWindow(rows, tops, first, last, index.get(focusKey) ?? -1, tree)}
    </ul>
  </div>`;
}
