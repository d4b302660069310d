// Pure helpers of the sidebar: scenario names as a folder tree, kept by the filter and
// flattened into the rows the virtualised tree shows, the filter (text and @tags), the
// Status filter, each scenario's latest run and those that failed, problems by file.
// No DOM here.

// [{name, ...}] → {folders: Map(name → node), items: [...]}, names split on "/"; each
// node's `list` is its folders by name, its `items` are sorted by name (done once here:
// filtering and flattening keep the order).
export function buildTree(scenarios) {
  const root = { name: "", path: "", folders: new Map(), items: [] };
  for (const scenario of scenarios) {
    const parts = scenario.name.split("/");
    let node = root;
    for (const part of parts.slice(0, -1)) {
      if (!node.folders.has(part)) {
        const path = node.path ? `${node.path}/${part}` : part;
        node.folders.set(part, { name: part, path, folders: new Map(), items: [] });
      }
      node = node.folders.get(part);
    }
    node.items.push(scenario);
  }
  sortNode(root);
  return root;
}

function sortNode(node) {
  node.list = [...node.folders.values()].sort((a, b) => a.name.localeCompare(b.name));
  node.items.sort((a, b) => a.name.localeCompare(b.name));
  for (const folder of node.list) sortNode(folder);
}

// The tree with only the scenarios `keep(scenario)` keeps, and only the folders holding
// one; null when nothing is kept. Same shape as buildTree's (`list`, `items`).
export function pruneTree(node, keep) {
  const list = [];
  for (const folder of node.list) {
    const kept = pruneTree(folder, keep);
    if (kept) list.push(kept);
  }
  const items = node.items.filter(keep);
  if (!list.length && !items.length && node.path) return null;
  return { name: node.name, path: node.path, list, items };
}

// Folders collapsed by default beyond a size: in a project of more than BIG_PROJECT
// scenarios every folder, elsewhere a folder of more than BIG_FOLDER entries.
export const BIG_PROJECT = 1000;
export const BIG_FOLDER = 50;

export function openByDefault(node, total) {
  return total <= BIG_PROJECT && node.list.length + node.items.length <= BIG_FOLDER;
}

// The rows of the tree as shown, in order: a folder's entries follow it while
// `isOpen(folder)`. Each row: {key ("d:" + folder path, "s:" + scenario name), kind
// ("folder" | "scenario"), node or scenario, level (1 at the top), posinset, setsize
// (among its siblings), parent (its folder's row index, -1 at the top), expanded}.
export function flattenTree(root, isOpen) {
  const rows = [];
  const walk = (node, level, parent) => {
    const setsize = node.list.length + node.items.length;
    let pos = 0;
    for (const folder of node.list) {
      const expanded = Boolean(isOpen(folder));
      const index = rows.length;
      rows.push({ key: `d:${folder.path}`, kind: "folder", node: folder, level, posinset: ++pos, setsize, parent, expanded });
      if (expanded) walk(folder, level + 1, index);
    }
    for (const scenario of node.items) {
      rows.push({ key: `s:${scenario.name}`, kind: "scenario", scenario, level, posinset: ++pos, setsize, parent, expanded: false });
    }
  };
  if (root) walk(root, 1, -1);
  return rows;
}

// The folder paths over scenario `name` ("a/b/c" → ["a", "a/b"]).
export function foldersOver(name) {
  const parts = name.split("/").slice(0, -1);
  return parts.map((_, i) => parts.slice(0, i + 1).join("/"));
}

// A tag is a word of a title that starts with "@" (dsl/scenario.py's title_tags, as
// Playwright reads a test's tags from its title); one glued to text ("a@b.com") is none.
const TAG = /(?<!\S)@\S+/g;

// The @tags of texts (a scenario's name and title), lowercased, each once.
export function tagsOf(...texts) {
  return [...new Set(texts.flatMap((t) => (t ?? "").match(TAG) ?? []).map((t) => t.toLowerCase()))];
}

// The filter as typed: its @words (each must start one of an item's tags: "@smo" keeps
// "@smoke", as `unotest list --grep @smo` would) and the rest, matched as text.
export function parseFilter(filter) {
  const tags = (filter.match(TAG) ?? []).map((t) => t.toLowerCase());
  if (!tags.length) return { tags, text: filter.trim().toLowerCase() };
  const text = filter.replace(TAG, " ").split(/\s+/).filter(Boolean).join(" ").toLowerCase();
  return { tags, text };
}

// Does an item whose texts are these pass the filter: every @word a tag of the texts,
// and the rest of the filter within one of them (case aside).
export function matches(filter, ...texts) {
  return makeMatcher(filter)(...texts);
}

// `matches` with the filter read once: (...texts) → boolean, for the many scenarios.
export function makeMatcher(filter) {
  const { tags, text } = parseFilter(filter);
  return (...texts) => {
    if (tags.length) {
      const own = tagsOf(...texts);
      if (!tags.every((tag) => own.some((t) => t.startsWith(tag)))) return false;
    }
    return !text || texts.some((t) => (t ?? "").toLowerCase().includes(text));
  };
}

// Runs come newest first: the first run of each scenario (kind "scenario") is its latest.
export function latestRuns(runs) {
  const latest = new Map();
  for (const run of runs) {
    if (run.kind === "scenario" && !latest.has(run.ref)) latest.set(run.ref, run);
  }
  return latest;
}

// The Status combobox: [value, label]; each keeps the scenarios whose latest run (or its
// absence) `statusMatches`. A run still going is kept by All only.
export const STATUS_FILTERS = [["all", "All"], ["failed", "Failed"], ["passed", "Passed"], ["not-run", "Not run"]];

export function statusMatches(status, run) {
  if (status === "all") return true;
  if (status === "not-run") return !run;
  return Boolean(run) && run.status === status;
}

// The names of the scenarios (of those listed) whose latest run failed, by name.
export function failedScenarios(scenarios, latest) {
  return scenarios.filter((s) => latest.get(s.name)?.status === "failed").map((s) => s.name)
    .sort((a, b) => a.localeCompare(b));
}

export function problemsByPath(problems) {
  const byPath = new Map();
  for (const problem of problems) {
    if (!byPath.has(problem.path)) byPath.set(problem.path, []);
    byPath.get(problem.path).push(problem);
  }
  return byPath;
}

const E2E = "unotest/e2e/";

// The scenarios to list: /api/scenarios, plus every scenario file that /api/problems
// names and /api/scenarios does not (a header it cannot read keeps it out of the index):
// listed at its path, named from it, so it can be opened and fixed.
export function scenariosWithProblems(scenarios, problems) {
  const known = new Set(scenarios.map((s) => s.path));
  const extra = new Map();
  for (const { path } of problems) {
    if (known.has(path) || extra.has(path) || !path?.startsWith(E2E) || !path.endsWith(".test.js")) continue;
    const name = path.slice(E2E.length, -".test.js".length);
    if (!name || name.startsWith("_helpers/") || name.startsWith("_collections/")) continue;
    extra.set(path, { name, path, title: `${name} (cannot be read: see its problems)`, color: "transparent", unreadable: true });
  }
  return [...scenarios, ...extra.values()];
}

export function problemTitle(list) {
  return list.map((p) => `${p.line}:${p.col} ${p.message}`).join("\n");
}

// The watch daemon (GET /api/watch): a path under unotest/e2e/ as a person names it.
function e2eRelative(path, watch) {
  const root = watch?.daemon?.root;
  const base = root ? `${root.replace(/\/+$/, "")}/unotest/e2e/` : null;
  return base && path?.startsWith(base) ? path.slice(base.length) : path ?? "";
}

// One selection reason in words: "re-run: _helpers/auth.js → sign_in → test_signin_flow"
// (a helper in the middle of the chain in parentheses after its function).
export function reasonText(reason, watch) {
  if (reason.kind === "importer") {
    const chain = reason.chain ?? [];
    const via = reason.via ?? [];
    const steps = via.map((name, i) => (i > 0 && i < chain.length - 1
      ? `${name} (${e2eRelative(chain[i], watch)})` : name));
    const text = [e2eRelative(chain[0] ?? reason.changedFile, watch), ...steps].join(" → ");
    return `re-run: ${text}${reason.byName ? " (by name)" : ""}`;
  }
  if (reason.kind === "changed") return `re-run: saved ${e2eRelative(reason.changedFile, watch)}`;
  return `re-run: ${reason.message ?? reason.kind}`;
}

// A scenario's entry in the daemon's last batches ({status, reasons, runId, …}) or null.
export function watchEntry(watch, path) {
  return watch?.connected ? watch.files?.[path] ?? null : null;
}

// The sidebar's one line about the daemon, or null when none runs.
export function watchSummary(watch) {
  if (!watch || watch.status === "not-running") return null;
  if (watch.status === "stale") return `Watch daemon gone (${watch.reason ?? "stale unotest/.daemon.json"})`;
  if (watch.status === "unreadable") return `Watch daemon unknown: ${watch.reason ?? "unotest/.daemon.json is unreadable"}`;
  if (!watch.connected) return "Watch daemon running; connecting…";
  const batch = watch.lastBatch;
  if (!batch) return "Watching: no batch yet";
  const status = watch.running ? "running" : batch.result?.status ?? "running";
  return `Watching: ${batch.batchId} ${status}`;
}
