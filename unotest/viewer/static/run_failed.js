// The sidebar's "Run failed": each scenario whose latest run failed, run again as the
// scenario tab's Run starts one (POST /api/runs, a run of its own, not headed), at most
// AT_ONCE at a time, so that a long list does not start one browser per scenario at
// once. A run counts as going until the store's run list (kept fresh by fs:run-* and
// every resync) says it has ended; the tree's badges follow the runs as they do for any.
import { api } from "./api.js";
import { projectState } from "./store.js";

export const AT_ONCE = 2;
const POLL_MS = 300;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function ended(runId) {
  const run = (projectState().runs || []).find((r) => r.runId === runId);
  return Boolean(run) && run.status !== "running";
}

/**
 * Start a run of each of `names` (scenario names), at most AT_ONCE going at a time;
 * `onStarted(count)` after each start. Resolves once the last has started; a refused
 * start rejects with its ApiError (the runs started before it go on).
 */
export async function runEach(names, onStarted) {
  const going = new Set();
  let started = 0;
  for (const name of names) {
    while (going.size >= AT_ONCE) {
      await sleep(POLL_MS);
      for (const runId of [...going]) if (ended(runId)) going.delete(runId);
    }
    const { runId } = await api("/api/runs", { method: "POST", body: { kind: "scenario", scenario: name } });
    going.add(runId);
    onStarted(++started);
  }
}
