// The scenario-run tab, live or historical: GET /api/runs/<runId>, then fs:run-step,
// fs:run-finished and log:line (refetched on a resync). Steps, the source with the
// current statement, the debugger toolbar and keys, the status banner, Variables, Call
// stack, Evaluate, screenshots, the failure panel, the output, edit and continue (a
// save at a pause, here or in any tab, offers Reload; its answer is shown and the pause
// follows the new position) and Restart (the new run opens in its own tab).
import { html, useCallback, useEffect, useMemo, useRef, useState } from "../lib.js";
import { api, runFileTextOrNull } from "../api.js";
import { afterFirstConnect, onMessage, onResync } from "../live.js";
import { useProject } from "../store.js";
import { ReloadOffer, RestartLinks, useReload, useRestart } from "./run_edit.js";
import { offerStale, sentReloads } from "./edits.js";
import { RunModel, COMMANDS } from "./run_model.js";
import { StepsList } from "./steps.js";
import { SourceView } from "./source.js";
import { FailurePanel } from "./failure.js";
import { TraceLink } from "./trace_link.js";
import { startRun } from "./launch.js";
import {
  Toolbar, StatusBanner, Variables, CallStack, EvalConsole, ScreenshotStrip, Output,
} from "./run_panes.js";
import { PageLog } from "./page_log.js";
import { PagePane } from "./page_view.js";

/** The ids of the commands this page sent (any run tab): a rejection is shown only in
 *  the page that sent the command, as every page hears every run's events. */
const sentHere = new Set();

/** Re-render at most once a frame however many events arrive. */
function useTick() {
  const [, setTick] = useState(0);
  const pending = useRef(false);
  return useCallback(() => {
    if (pending.current) return;
    pending.current = true;
    requestAnimationFrame(() => {
      pending.current = false;
      setTick((n) => n + 1);
    });
  }, []);
}

async function logLines(runId, files) {
  const out = [];
  for (const stream of ["stdout", "stderr"]) {
    if (!files.includes(`${stream}.log`)) continue;
    const text = await runFileTextOrNull(runId, `${stream}.log`);
    if (text === null) continue;
    for (const line of text.split("\n")) {
      if (line) out.push({ stream, line });
    }
  }
  return out;
}

const MAX_LOG_LINES = 5000;

/**
 * How many of the log lines that came over /ws while the files were read are in them
 * too: the longest end of `read` that `buffered` starts with (the buffer is a run of
 * lines that began before the read, so it can only overlap the read's end). Steps do
 * not need this guess: their messages carry their line's number (`applyLine`).
 */
function overlap(read, buffered) {
  if (!buffered.length) return 0;
  const a = read.slice(-buffered.length).map((e) => JSON.stringify(e));
  const b = buffered.map((e) => JSON.stringify(e));
  for (let k = Math.min(a.length, b.length); k > 0; k--) {
    let same = true;
    for (let i = 0; i < k && same; i++) same = a[a.length - k + i] === b[i];
    if (same) return k;
  }
  return 0;
}

/** The run's detail, its model kept current from /ws, and the runtime state. */
function useRun(runId) {
  const model = useMemo(() => new RunModel(runId), [runId]);
  const [detail, setDetail] = useState(null);
  const [error, setError] = useState(null);
  const [runtime, setRuntime] = useState(null);
  const logs = useRef([]);
  const tick = useTick();
  const loading = useRef(null);
  const loadingLogs = useRef(null);
  const runtimeSeq = useRef(0);
  // The number of the next steps.jsonl line to apply. After a reconnect the hub may
  // deliver lines the detail's read holds already, even ones before its last, and two
  // `step:ok` lines can be alike: by their numbers each line is applied once.
  const nextLine = useRef(0);
  const applyLine = (msg) => {
    if (msg.lineIndex < nextLine.current) return false;
    nextLine.current = msg.lineIndex + 1;
    model.apply(msg.event);
    return true;
  };

  // runtime.json is asked for only once it is known to exist (the detail had it, or the
  // debugger paused, which writes it first): a 404 would be a console error.
  const hasRuntime = useRef(false);
  const refreshRuntime = useCallback(() => {
    if (!hasRuntime.current) return;
    const seq = ++runtimeSeq.current;
    api(`/api/runs/${runId}/files/runtime.json`).then(
      (data) => {
        if (seq !== runtimeSeq.current) return;
        model.follow(data);
        setRuntime(data);
      },
      () => {},
    );
  }, [runId]);

  const loadLogs = useCallback(async (files) => {
    loadingLogs.current = [];
    try {
      const read = await logLines(runId, files);
      const buffered = loadingLogs.current;
      logs.current = [...read, ...buffered.slice(overlap(read, buffered))].slice(-MAX_LOG_LINES);
    } finally {
      loadingLogs.current = null;
      tick();
    }
  }, [runId]);

  // Two reconnects in a row start two loads: the last one started applies (an earlier
  // one answering later would reset the model to an older read), with every message
  // buffered since the first began.
  const loadSeq = useRef(0);
  const load = useCallback(async () => {
    const seq = ++loadSeq.current;
    if (!loading.current) loading.current = [];
    try {
      const data = await api(`/api/runs/${runId}`);
      if (seq !== loadSeq.current) return;
      model.reset();
      for (const event of data.events) model.apply(event);
      nextLine.current = data.lineCount;
      for (const msg of loading.current) applyLine(msg);
      loading.current = null;
      if (model.outcome === null && data.meta && data.meta.status !== "running") {
        model.outcome = data.meta.outcome || data.meta.status;
      }
      setDetail(data);
      // Shown on a paused run whose files changed on disk since it read them (saved in
      // another tab, before a page reload, by an editor): Reload is offered, as a save is.
      if (model.pause && model.live && (data.staleSources || []).length) offerStale(runId, data.staleSources);
      hasRuntime.current = data.runtime !== null;
      model.follow(data.runtime);
      setRuntime(data.runtime);
      // A reload answered while the detail was read: its runtime.json may be newer.
      if (model.followRuntime) refreshRuntime();
      setError(null);
      tick();
      await loadLogs(data.files || []);
    } catch (err) {
      if (seq !== loadSeq.current) return;
      loading.current = null;
      setError(err.message);
    }
  }, [runId]);

  const refreshDetail = useCallback(() => {
    api(`/api/runs/${runId}`).then((data) => {
      if (model.outcome === null && data.meta && data.meta.status !== "running") {
        model.outcome = data.meta.outcome || data.meta.status;
      }
      setDetail((old) => ({ ...(old || {}), meta: data.meta, bundle: data.bundle, files: data.files }));
      if (data.runtime !== null) {
        hasRuntime.current = true;
        runtimeSeq.current++;
        model.follow(data.runtime);
        setRuntime(data.runtime);
      }
      tick();
    }, () => {});
  }, [runId]);

  useEffect(() => {
    load();
    const offResync = onResync(load);
    const offFirst = afterFirstConnect(load);
    const offMessage = onMessage((msg) => {
      if (msg.runId !== runId) return;
      if (msg.kind === "fs:run-step") {
        if (loading.current) {
          loading.current.push(msg);
          return;
        }
        if (!applyLine(msg)) return; // applied already
        const kind = msg.event.kind;
        if (kind === "paused") hasRuntime.current = true;
        if (["paused", "command:result", "command:applied", "resumed"].includes(kind)) refreshRuntime();
        if (kind === "failure-bundle:written") refreshDetail();
        if (kind === "run:finished") refreshDetail();
        tick();
      } else if (msg.kind === "fs:run-finished") {
        if (model.outcome === null) model.outcome = msg.outcome;
        model.pause = null;
        model.version++;
        refreshDetail();
        tick();
      } else if (msg.kind === "log:line") {
        const line = { stream: msg.stream, line: msg.line };
        if (loadingLogs.current) loadingLogs.current.push(line);
        else {
          logs.current.push(line);
          if (logs.current.length > MAX_LOG_LINES) logs.current.splice(0, logs.current.length - MAX_LOG_LINES);
          tick();
        }
      }
    });
    return () => {
      offResync();
      offFirst();
      offMessage();
    };
  }, [runId]);

  return { model, detail, error, runtime, logs: logs.current, refreshRuntime };
}

/** The eval entries of the console, answered from the model's command events. */
function evalEntries(sent, model) {
  return sent.map((entry) => {
    const answer = model.answers.get(entry.id);
    if (entry.failed) return { ...entry, state: "error", answer: entry.failed };
    if (!answer || answer.kind === "command:applied") return { ...entry, state: "pending", answer: "…" };
    if (answer.kind === "command:rejected") return { ...entry, state: "error", answer: `rejected: ${answer.reason}` };
    return answer.ok
      ? { ...entry, state: "ok", answer: answer.value ?? "undefined" }
      : { ...entry, state: "error", answer: answer.error || "error" };
  });
}

function keyCommand(event) {
  if (event.key === "F8") return "continue";
  if (event.key === "F10") return "step-over";
  if (event.key === "F11") return event.shiftKey ? "step-out" : "step";
  return null;
}

/** Run again / Debug again: the scenario, with the retries the run was started with when
 *  this viewer kept its request (the detail's `request`); breakpoints come from
 *  unotest/.debugger.json as it is now, as for Debug. */
function scenarioAgain(detail, scenario, debug) {
  const kept = detail.request && detail.request.kind === "scenario" ? detail.request : {};
  const request = { kind: "scenario", scenario, debug };
  if (kept.retries != null) request.retries = kept.retries;
  return request;
}

export function RunView({ tab, active }) {
  const runId = tab.runId;
  const { model, detail, error, runtime, logs } = useRun(runId);
  const project = useProject();
  const [notice, setNotice] = useState(null);
  const [, setSentCount] = useState(0);
  const [sent, setSent] = useState([]);
  const [reveal, setReveal] = useState(null);
  const [frameSel, setFrameSel] = useState(null); // a call-stack frame picked (outermost 0)
  const [inject, setInject] = useState(null); // a picked target put into Evaluate: {text, n}
  const [again, setAgain] = useState(false);
  // The button that started this run (Debug, Run) went with the view it was in: focus
  // left on the page's body is brought here, to the run's own view, for a keyboard user.
  const root = useRef(null);
  const lostFocus = () => !document.activeElement || document.activeElement === document.body;
  useEffect(() => {
    if (active && root.current && lostFocus()) root.current.focus();
  }, [runId, active, detail !== null]);
  const acceptsRef = useRef(() => false);

  const scenario = (detail && detail.meta && detail.meta.ref) || (runtime && runtime.scenario) || null;
  const scenarioMeta = ((project && project.scenarios) || []).find((s) => s.name === scenario);
  const scenarioFile = scenarioMeta ? scenarioMeta.path : scenario ? `unotest/e2e/${scenario}.test.js` : null;

  const send = useCallback(async (command) => {
    try {
      const { id } = await api(`/api/runs/${runId}/commands`, { method: "POST", body: command });
      sentHere.add(id);
      setSentCount((n) => n + 1); // its answer may have come before this reply: render again
      setNotice(null);
      return id;
    } catch (err) {
      setNotice(`${command.cmd}: ${err.message}`);
      return null;
    }
  }, [runId]);
  const { reload, doReload } = useReload({ runId, model, scenario, scenarioFile, onError: setNotice });
  const sendCommand = useRestart({ model, send });

  useEffect(() => {
    if (!active) return undefined;
    const onKey = (event) => {
      const cmd = keyCommand(event);
      if (!cmd) return;
      const spec = COMMANDS.find((c) => c.cmd === cmd);
      event.preventDefault();
      if (spec && acceptsRef.current(spec.when)) sendCommand({ cmd });
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [active, send]);

  const onEval = async (expr) => {
    const entry = { expr, id: null, failed: null };
    setSent((old) => [...old, entry]);
    const id = await send(frameSel === null ? { cmd: "eval", expr } : { cmd: "eval", expr, frame: frameSel });
    setSent((old) => old.map((e) => (e === entry ? { ...e, id, failed: id ? null : "not sent" } : e)));
  };

  // A new pause or a new step follows the run again (a frame or step click pins a place).
  const pauseKey = model.pause ? `${model.pause.reason}:${model.pause.line}:${model.pause.col}` : "";
  useEffect(() => { setReveal(null); setFrameSel(null); }, [pauseKey, model.steps.length]);

  // The file already says so for the next run; a live run is told at once.
  const onBreakpoint = (path, line, col, set) => {
    if (model.live) send({ cmd: set ? "set-bp" : "clear-bp", file: path, line, col });
  };

  if (error && !detail) return html`<section class="view run-view"><p class="view-error" role="alert">${error}</p></section>`;
  if (!detail) return html`<section class="view run-view"><p class="muted">Loading run ${runId}…</p></section>`;

  const paused = model.pause;
  // Every run reads commands (a run without --debug merely starts with no breakpoints).
  const accepts = (when) => model.accepts(when);
  acceptsRef.current = accepts;
  const liveFile = paused ? (runtime && runtime.file) || (model.current && model.current.file) : model.current && model.current.file;
  const shownFile = (reveal && reveal.file) || (model.live && liveFile) || scenarioFile;
  const currentLine = model.live && shownFile === (liveFile || scenarioFile)
    ? (paused ? paused.line : model.current && model.current.line) : null;
  // At the end runtime.json holds no variables: the last pause's stay visible.
  const runtimeVars = runtime && runtime.vars && Object.keys(runtime.vars).length ? runtime.vars : null;
  // A caller's frame picked in Call stack shows that frame's own variables (frameVars).
  const frameVars = frameSel !== null && runtimeVars && runtime.frameVars ? runtime.frameVars[frameSel] : null;
  const vars = frameVars || runtimeVars || (model.snapshot && model.snapshot.vars) || {};
  const frameName = frameVars && frameSel !== null
    ? (frameSel === 0 ? runtime.testFn || "test" : runtime.callStack[frameSel - 1].fn) : null;
  // Rejections of this pause (or run stretch) of commands this page sent (another page
  // driving the run shows its own), but not those the console or the reload offer already
  // show next to what was sent. Once the run has ended, that is the reason to give (the
  // runner's "send 'pause' first" no longer helps).
  const answeredHere = new Set(sent.map((s) => s.id));
  const rejections = model.rejections
    .filter((r) => r.turn === model.turn && sentHere.has(r.id) && !answeredHere.has(r.id) && !sentReloads.has(r.id))
    .slice(-3)
    .map((r) => (model.outcome !== null ? { ...r, reason: "the run has ended" } : r));

  return html`<section class="view run-view" aria-label=${`Run ${runId}`} tabindex="-1" ref=${root}>
    <header class="view-bar">
      <h2 class="view-title">${scenario || runId}</h2>
      <span class="muted">${runId}</span>
      <${RestartLinks} detail=${detail} model=${model} />
      <span class="spacer"></span>
      <${Toolbar} accepts=${accepts} send=${sendCommand} />
      <${TraceLink} runId=${runId} detail=${detail} />
      ${!model.live && scenario && html`<span class="run-again">
        ${[["Run again", false], ["Debug again", true]].map(([label, debug]) => html`<button type="button"
          disabled=${again} onClick=${() => startRun(scenarioAgain(detail, scenario, debug),
            "scenario-run", setNotice, setAgain)}>${label}</button>`)}
      </span>`}
    </header>
    <${StatusBanner} model=${model} runtime=${runtime} scenarioFile=${scenarioFile} />
    ${notice && html`<p class="run-notice" role="alert">${notice}</p>`}
    ${rejections.map((r, i) => html`<p class="run-notice" key=${i}>Rejected${r.cmd ? ` ${r.cmd}` : ""}: ${r.reason}</p>`)}
    <${ReloadOffer} reload=${reload} model=${model} onReload=${doReload} />
    ${detail.eventsOmitted > 0 && html`<p class="muted">${detail.eventsOmitted} earlier events not shown.</p>`}
    <div class="run-grid">
      <div class="run-left">
        <${StepsList} steps=${model.steps} version=${model.version} scenarioFile=${scenarioFile}
          onPick=${(step) => setReveal({ file: step.file, line: step.line, step: step.n })} />
      </div>
      <div class="run-main">
        <${PagePane} runId=${runId} model=${model} pickedStep=${reveal ? reveal.step : null} send=${send}
          onUseTarget=${(text) => setInject((old) => ({ text, n: old ? old.n + 1 : 1 }))} />
        ${shownFile && html`<${SourceView} path=${shownFile} current=${currentLine} reveal=${reveal}
          active=${active} onBreakpoint=${onBreakpoint} />`}
        <${FailurePanel} runId=${runId} bundle=${detail.bundle} />
        <${ScreenshotStrip} runId=${runId} paths=${model.screenshots} />
        <${Output} lines=${logs} count=${logs.length} />
        <${PageLog} runId=${runId} live=${model.live} />
      </div>
      <div class="run-right">
        <${Variables} vars=${vars} stale=${model.live ? null : model.snapshotAt || {}} frame=${frameName} />
        <${CallStack} runtime=${model.live ? runtime : null} model=${model} scenarioFile=${scenarioFile}
          selected=${frameSel}
          onPick=${(frame) => {
            setReveal({ file: frame.file || scenarioFile, line: frame.line });
            setFrameSel(frame.innermost ? null : frame.index);
          }} />
        <${EvalConsole} entries=${evalEntries(sent, model)} onEval=${onEval}
          ended=${model.outcome !== null} frame=${frameName} inject=${inject} />
      </div>
    </div>
  </section>`;
}
