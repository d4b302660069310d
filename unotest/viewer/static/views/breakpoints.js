// Breakpoints as the page sets them: unotest/.debugger.json (BreakpointsFile) through
// GET/PUT /api/breakpoints. Keys are a scenario's name, `_helpers/<name>` or
// `<folder>/_hooks`, as the runner reads them when a debug run starts
// (runner/debug/setup.py).
import { api } from "../api.js";
import { refreshBreakpoints } from "../store.js";

const E2E = "unotest/e2e/";

/** The BreakpointsFile key of a source path (null for a collection or anything else). */
export function breakpointKey(path) {
  if (!path || !path.startsWith(E2E)) return null;
  const rel = path.slice(E2E.length);
  if (rel.startsWith("_helpers/") && rel.endsWith(".js")) return rel.slice(0, -3);
  // A folder's hooks: `shop/_hooks` (`_hooks` at the top), as --break names them.
  if (rel === "_hooks.js" || rel.endsWith("/_hooks.js")) return rel.slice(0, -3);
  if (rel.endsWith(".test.js")) return rel.slice(0, -".test.js".length);
  return null;
}

/** The scenario name of a scenario path (`unotest/e2e/a/b.test.js` → `a/b`). */
export function scenarioName(path) {
  const key = breakpointKey(path);
  return key && !key.startsWith("_helpers/") && !/(^|\/)_hooks$/.test(key) ? key : null;
}

/** The breakpoints of one key in a BreakpointsFile (or whatever the store holds). */
export function breakpointsOf(file, key) {
  const entries = file && file.scenarios && key ? file.scenarios[key] : null;
  return Array.isArray(entries) ? entries : [];
}

/**
 * Set or clear the breakpoints of `line` in `key`'s file: clearing removes every one on
 * that line, setting adds one at `col` (a statement start). Read, change, write whole,
 * so another writer's keys are kept; everyone converges through fs:bp-changed.
 */
export async function toggleLine(key, line, col, set) {
  const file = await api("/api/breakpoints");
  const scenarios = { ...(file.scenarios || {}) };
  const kept = breakpointsOf(file, key).filter((bp) => bp.line !== line);
  if (set) kept.push({ line, col });
  kept.sort((a, b) => a.line - b.line || a.col - b.col);
  if (kept.length) scenarios[key] = kept;
  else delete scenarios[key];
  const written = await api("/api/breakpoints", {
    method: "PUT",
    body: { version: 1, scenarios },
  });
  refreshBreakpoints();
  return written;
}
