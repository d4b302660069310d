// One scenario run as the page knows it, built from its steps.jsonl events (the detail's
// events, then each fs:run-step): the step rows, where it is, whether it is paused and
// why, its outcome, its screenshots and the debugger's answers by command id. Plain
// data mutated in place (a 10,000-step run appends, it never copies); `version` counts
// changes so a view knows when to render again.

/** The commands of the toolbar: label, cmd, key, and when the runner accepts each. */
export const COMMANDS = [
  { label: "Continue", cmd: "continue", key: "F8", when: "paused" },
  { label: "Step", cmd: "step", key: "F11", when: "paused" },
  { label: "Step over", cmd: "step-over", key: "F10", when: "paused" },
  { label: "Step out", cmd: "step-out", key: "Shift+F11", when: "paused" },
  { label: "Pause", cmd: "pause", when: "running" },
  { label: "Retry", cmd: "retry", when: "failure" },
  { label: "Skip", cmd: "skip", when: "failure" },
  { label: "Abort", cmd: "abort", when: "live" },
];

export class RunModel {
  constructor(runId) {
    this.runId = runId;
    this.reset();
  }

  reset() {
    this.steps = [];
    this.open = [];
    this.pause = null;
    this.outcome = null;
    this.started = false;
    this.current = null;
    this.screenshots = [];
    this.answers = new Map();
    this.rejections = [];
    this.snapshot = null;
    /** Counts pauses and resumes: a rejection is shown until the run moves on. */
    this.turn = 0;
    this.version = (this.version || 0) + 1;
  }

  /** Live: started and not finished. */
  get live() {
    return this.outcome === null;
  }

  /** What the toolbar may send now: "paused", "failure", "running", "live". */
  accepts(when) {
    if (!this.live) return false;
    if (when === "live") return true;
    if (when === "running") return this.pause === null;
    if (when === "paused") return this.pause !== null;
    return this.pause !== null && this.pause.reason === "failure";
  }

  apply(event) {
    if (!event || typeof event.kind !== "string") return;
    this.version++;
    const handler = HANDLERS[event.kind];
    if (handler) handler(this, event);
  }

  closeTop(status, fields) {
    const index = this.open.pop();
    if (index === undefined) return null;
    Object.assign(this.steps[index], { status }, fields);
    return this.steps[index];
  }
}

const HANDLERS = {
  "run:started": (m) => {
    m.started = true;
  },
  "step:started": (m, e) => {
    const depth = typeof e.depth === "number" ? e.depth : m.open.length;
    m.steps.push({
      n: m.steps.length,
      text: e.text,
      line: e.line,
      col: e.col,
      file: e.file || null,
      depth,
      status: "running",
      durationMs: null,
      error: null,
    });
    m.open.push(m.steps.length - 1);
    m.current = { line: e.line, col: e.col, file: e.file || null };
  },
  "step:ok": (m, e) => {
    m.closeTop("ok", { durationMs: e.durationMs });
  },
  "step:fail": (m, e) => {
    const caught = e.caught === true;
    m.closeTop(caught ? "caught" : "fail", {
      error: e.errorName ? `${e.errorName}: ${e.error}` : e.error,
    });
  },
  "step:skipped": (m, e) => {
    const top = m.steps[m.open[m.open.length - 1]];
    if (top && top.line === e.line && top.col === e.col) {
      m.closeTop("skipped", {});
    } else {
      m.steps.push({
        n: m.steps.length, text: "(skipped)", line: e.line, col: e.col,
        file: m.current ? m.current.file : null, depth: m.open.length,
        status: "skipped", durationMs: null, error: null,
      });
    }
  },
  paused: (m, e) => {
    m.turn++;
    m.pause = { reason: e.reason, line: e.line, col: e.col };
    if (e.snapshot) m.snapshot = e.snapshot;
  },
  resumed: (m) => {
    m.turn++;
    m.pause = null;
  },
  "run:finished": (m, e) => {
    m.pause = null;
    m.outcome = e.outcome;
    for (const index of m.open) {
      if (m.steps[index].status === "running") m.steps[index].status = "unfinished";
    }
    m.open = [];
  },
  screenshot: (m, e) => {
    m.screenshots.push(e.path);
  },
  "command:applied": (m, e) => {
    if (e.id) m.answers.set(e.id, e);
  },
  "command:result": (m, e) => {
    if (e.id) m.answers.set(e.id, e);
  },
  "command:rejected": (m, e) => {
    if (e.id) m.answers.set(e.id, e);
    m.rejections.push({ ...e, turn: m.turn });
  },
};

/** `runs/<id>/screenshot/x.png` (project-relative) → `screenshot/x.png` (run-relative). */
export function runRelative(runId, path) {
  const marker = `/.runs/${runId}/`;
  const at = path.indexOf(marker);
  return at >= 0 ? path.slice(at + marker.length) : path.split("/").pop();
}

/** A duration for a person: 840 ms, 1.2 s, 2 min 5 s. */
export function formatDuration(ms) {
  if (ms === null || ms === undefined) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
}
