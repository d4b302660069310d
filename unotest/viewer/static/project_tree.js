// Pure helpers of the sidebar: scenario names as a folder tree, the filter (text and
// @tags), the Status filter, each scenario's latest run and those that failed, problems
// by file. No DOM here.

// [{name, ...}] → {folders: Map(name → node), items: [...]}, names split on "/".
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
  return root;
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
  const { tags, text } = parseFilter(filter);
  if (tags.length) {
    const own = tagsOf(...texts);
    if (!tags.every((tag) => own.some((t) => t.startsWith(tag)))) return false;
  }
  return !text || texts.some((t) => (t ?? "").toLowerCase().includes(text));
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
