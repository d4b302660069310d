// Pure helpers of the sidebar: scenario names as a folder tree, the filter, each
// scenario's latest run, problems by file. No DOM here.

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

export function matches(filter, ...texts) {
  const needle = filter.trim().toLowerCase();
  return !needle || texts.some((t) => (t ?? "").toLowerCase().includes(needle));
}

// Runs come newest first: the first run of each scenario (kind "scenario") is its latest.
export function latestRuns(runs) {
  const latest = new Map();
  for (const run of runs) {
    if (run.kind === "scenario" && !latest.has(run.ref)) latest.set(run.ref, run);
  }
  return latest;
}

export function problemsByPath(problems) {
  const byPath = new Map();
  for (const problem of problems) {
    if (!byPath.has(problem.path)) byPath.set(problem.path, []);
    byPath.get(problem.path).push(problem);
  }
  return byPath;
}

export function problemTitle(list) {
  return list.map((p) => `${p.line}:${p.col} ${p.message}`).join("\n");
}
