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
  { label: "Skip", cmd: "skip", when: "paused" },
  { label: "Restart", cmd: "restart", when: "live" },
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
    this.pauseImage = null; // the page at this pause (or after an eval there): {…, turn}
    this.lastStepImage = null; // the newest image taken after a step
    this.lastClosed = null; // the step closed last (an image after a step follows its end)
    this.answers = new Map();
    this.rejections = [];
    this.snapshot = null;
    this.snapshotAt = null; // where the run paused when it took the snapshot
    /** Reloads applied (id → when) and restarts applied (their command:result follows). */
    this.reloads = new Map();
    this.restarts = new Set();
    /**
     * A reload moved the paused statement: no `paused` event says where to, runtime.json
     * (written before the answer) does; `follow(runtime)` takes it from there.
     */
    this.followRuntime = false;
    /** When the reload to follow was applied: an older runtime.json is from before it. */
    this.followSince = 0;
    /** The run that a restart of this one started ({ runId } or { error }). */
    this.restartedAs = null;
    /** Counts pauses and resumes: a rejection is shown until the run moves on. */
    this.turn = 0;
    /** The kind of the last event applied. */
    this.lastKind = null;
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
    this.lastKind = event.kind;
  }

  /** After a reload, the pause where runtime.json now says it is; true if it moved.
   *  (Also takes the error of a failure pause from runtime.json's `lastFailure`.) */
  follow(runtime) {
    this.noteFailure(runtime);
    if (!this.followRuntime || !this.pause || !runtime || !runtime.current) return false;
    if (typeof runtime.state !== "string" || !runtime.state.startsWith("paused")) return false;
    if (typeof runtime.updatedAt === "number" && runtime.updatedAt < this.followSince) return false;
    this.followRuntime = false;
    const { line, col } = runtime.current;
    if (this.pause.line === line && this.pause.col === col) return false;
    this.pause = { ...this.pause, line, col };
    if (this.current) this.current = { ...this.current, line, col, file: runtime.file || this.current.file };
    this.version++;
    return true;
  }

  /** The step a failure pause stopped on (open, marked failed while paused), or null. */
  failedAtPause() {
    const top = this.steps[this.open[this.open.length - 1]];
    return top && top.pausedFailure ? top : null;
  }

  /** The error of the failure the run is paused at, from runtime.json, on its step. */
  noteFailure(runtime) {
    const step = this.failedAtPause();
    const error = runtime && runtime.lastFailure && runtime.lastFailure.error;
    if (!step || !error || !this.pause || this.pause.reason !== "failure") return;
    const text = error.name ? `${error.name}: ${error.message}` : error.message;
    if (text && step.error !== text) {
      step.error = text;
      this.version++;
    }
  }

  closeTop(status, fields) {
    const index = this.open.pop();
    if (index === undefined) return null;
    // The page after a step that touched nothing is the page after the one before.
    Object.assign(this.steps[index], { status, image: this.lastStepImage }, fields);
    this.lastClosed = index;
    return this.steps[index];
  }
}

/** The title a step's end event carries (a step(title, fn) statement's), if any. */
function titled(e) {
  return typeof e.title === "string" ? { title: e.title } : {};
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
      // A step(title, fn) statement: its title when the source says it, else once it ends.
      title: typeof e.title === "string" ? e.title : null,
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
    m.closeTop("ok", { durationMs: e.durationMs, ...titled(e) });
  },
  "step:fail": (m, e) => {
    const caught = e.caught === true;
    m.closeTop(caught ? "caught" : "fail", {
      error: e.errorName ? `${e.errorName}: ${e.error}` : e.error,
      // A soft assertion's failure: the scenario went on (the run fails at its end).
      soft: e.soft === true,
      ...titled(e),
    });
  },
  "step:skipped": (m, e) => {
    const top = m.steps[m.open[m.open.length - 1]];
    // Skipped at a failure pause whose step was closed first (step:fail): the failed
    // row stays, the skip is its own row with that statement's text.
    const failed = m.lastKind === "step:fail" || m.lastKind === "resumed" ? m.steps[m.steps.length - 1] : null;
    const same = failed && failed.status === "fail" && failed.line === e.line && failed.col === e.col;
    if (top && top.line === e.line && top.col === e.col) {
      m.closeTop("skipped", {});
    } else {
      m.steps.push({
        n: m.steps.length, text: e.text || (same ? failed.text : "(skipped)"), line: e.line, col: e.col,
        file: m.current ? m.current.file : null, depth: m.open.length,
        status: "skipped", durationMs: null, error: null,
      });
    }
  },
  paused: (m, e) => {
    m.turn++;
    m.followRuntime = false;
    m.pause = { reason: e.reason, line: e.line, col: e.col };
    if (e.snapshot) {
      m.snapshot = e.snapshot;
      m.snapshotAt = { line: e.line, col: e.col };
    }
    // A failure pause: a runner that closes the failed step first (step:fail, then
    // paused) shows it failed already. One that pauses with the step still open (a
    // retry runs it again, its step:fail follows the resume) would show it running: it
    // is marked failed while paused, its error from runtime.json (noteFailure) unless
    // the event carries one.
    const top = m.steps[m.open[m.open.length - 1]];
    if (e.reason === "failure" && m.lastKind === "step:started" && top && top.status === "running"
        && top.line === e.line && top.col === e.col) {
      top.status = "fail";
      top.pausedFailure = true;
      if (e.error) top.error = e.errorName ? `${e.errorName}: ${e.error}` : e.error;
    }
  },
  resumed: (m) => {
    m.turn++;
    m.followRuntime = false;
    m.pause = null;
    // Retried (or skipped, or going on to its step:fail): running again until it closes.
    const top = m.failedAtPause();
    if (top) {
      top.status = "running";
      top.pausedFailure = false;
      top.error = null;
    }
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
  // Ours: the page as an image, after the step that just ended or at this pause.
  "page:image": (m, e) => {
    if (typeof e.path !== "string") return;
    const image = {
      path: e.path, after: e.after, line: e.line, col: e.col, file: e.file || null,
      viewport: e.viewport || null, aria: e.aria || null, turn: m.turn,
    };
    if (e.after === "step") {
      m.lastStepImage = image;
      const step = m.steps[m.lastClosed];
      if (step) step.image = image;
    } else {
      m.pauseImage = image;
    }
  },
  "command:applied": (m, e) => {
    if (!e.id) return;
    m.answers.set(e.id, e);
    if (e.cmd === "reload") m.reloads.set(e.id, e.t || 0);
    if (e.cmd === "restart") m.restarts.add(e.id);
  },
  "command:result": (m, e) => {
    if (!e.id) return;
    m.answers.set(e.id, e);
    if (m.reloads.has(e.id) && e.ok && m.pause) {
      m.followRuntime = true;
      m.followSince = m.reloads.get(e.id);
    }
    if (m.restarts.has(e.id)) {
      m.restartedAs = e.ok && typeof e.value === "string" ? { runId: e.value } : { error: e.error || "not restarted" };
    }
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
