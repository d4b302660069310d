// The smaller panes of a run tab: the toolbar, the status banner, Variables, Call stack,
// the Evaluate console, the screenshot strip and the output.
import { html, useEffect, useLayoutEffect, useRef, useState } from "../lib.js";
import { runFileUrl } from "../api.js";
import { COMMANDS, runRelative } from "./run_model.js";
import { useFollowTail } from "./follow.js";

/** The debugger's buttons; `accepts(when)` says which the run takes now. */
export function Toolbar({ accepts, send }) {
  return html`<div class="run-toolbar" role="toolbar" aria-label="Debugger">
    ${COMMANDS.map((c) => html`<button type="button" class=${"cmd cmd-" + c.cmd}
      disabled=${!accepts(c.when)} title=${c.key ? `${c.label} (${c.key})` : c.label}
      onClick=${() => send({ cmd: c.cmd })}>${c.label}</button>`)}
  </div>`;
}

/** The status banner: where a paused run is and why, else running, else its outcome. */
export function StatusBanner({ model, runtime, scenarioFile }) {
  let text;
  let cls = "run-status";
  if (model.pause) {
    const { line, col, reason } = model.pause;
    const file = runtime && runtime.file && runtime.file !== scenarioFile ? ` in ${runtime.file}` : "";
    text = `Paused at line ${line}:${col}${file} (${reason})`;
    cls += " paused";
  } else if (model.outcome) {
    text = `Run ${model.outcome}`;
    cls += ` outcome-${model.outcome}`;
  } else {
    text = model.started ? "Running" : "Starting";
    cls += " running";
  }
  const failure = model.pause && model.pause.reason === "failure" && runtime && runtime.lastFailure;
  return html`<div class=${cls} role="status" aria-label="Run status" aria-live="polite">
    <span>${text}</span>
    ${failure && html`<span class="status-error">${failure.error.name ? failure.error.name + ": " : ""}${failure.error.message}</span>`}
  </div>`;
}

/**
 * The variables of the current frame. `stale` (where the run last paused) once the run
 * has ended: the values are kept for reading, greyed and said to be from then.
 */
export function Variables({ vars, stale = null, frame = null }) {
  const names = Object.keys(vars || {});
  return html`<section class=${`pane vars${stale ? " stale" : ""}`} role="region" aria-label="Variables">
    <div class="pane-title">Variables${frame && html` <span class="muted">in ${frame}</span>`}</div>
    ${stale && names.length > 0 && html`<p class="muted stale-note" role="note">The run has ended: values as at
      its last pause${stale.line ? `, line ${stale.line}:${stale.col ?? 0}` : ""}.</p>`}
    ${names.length === 0
      ? html`<p class="muted">none</p>`
      : html`<table><tbody>${names.map((n) => html`<tr key=${n}>
          <th scope="row">${n}</th><td><code>${vars[n]}</code></td></tr>`)}</tbody></table>`}
  </section>`;
}

/**
 * The call stack, innermost first: each frame where it is now. runtime.json lists the
 * helper frames (file and current line); the test function's own line is the current
 * line when no helper runs, else that of its open step (the helper call).
 */
export function CallStack({ runtime, model, scenarioFile, onPick, selected = null }) {
  const helpers = (runtime && runtime.callStack) || [];
  const current = runtime && runtime.current;
  let testLine = null;
  if (helpers.length === 0) {
    testLine = current ? current.line : model.pause ? model.pause.line : null;
  } else {
    const open = model.open.map((i) => model.steps[i]).filter((s) => !s.file || s.file === scenarioFile);
    testLine = open.length ? open[open.length - 1].line : null;
  }
  const frames = [];
  if (runtime && (current || model.pause)) {
    frames.push({ fn: runtime.testFn || "test", file: scenarioFile, line: testLine });
    frames.push(...helpers);
  }
  // index: the frame's place outermost first (eval's and frameVars' index)
  frames.forEach((f, i) => { frames[i] = { ...f, index: i, innermost: i === frames.length - 1 }; });
  frames.reverse();
  const shown = selected === null ? frames.length - 1 : selected;
  return html`<section class="pane stack" role="region" aria-label="Call stack">
    <div class="pane-title">Call stack</div>
    ${frames.length === 0 ? html`<p class="muted">empty</p>` : html`<ol>${frames.map(
      (f, i) => html`<li key=${i}><button type="button" class="linkish frame" disabled=${!f.line}
        aria-current=${f.index === shown ? "true" : null}
        onClick=${() => onPick(f)}>
        <span class="frame-fn">${f.fn}</span>${f.line && html` <span class="frame-at">${f.file
          ? f.file.split("/").pop() + ":" : "line "}${f.line}</span>`}
      </button></li>`)}</ol>`}
  </section>`;
}

/** The Evaluate console: an input with history (Up/Down), the answers below; the list
 *  scrolls to its end at each new entry and answer, so the newest is always in view. */
export function EvalConsole({ entries, onEval, ended = false, frame = null, inject = null }) {
  const [value, setValue] = useState("");
  const history = useRef([]);
  const at = useRef(0);
  const log = useRef(null);
  const input = useRef(null);
  // A target picked on the page image, put in the input to be completed (click(…)).
  useEffect(() => {
    if (!inject) return;
    setValue(inject.text);
    if (input.current) input.current.focus();
  }, [inject && inject.n]);
  const last = entries[entries.length - 1];
  useLayoutEffect(() => {
    if (log.current) log.current.scrollTop = log.current.scrollHeight;
  }, [entries.length, last && last.answer]);
  const onKeyDown = (event) => {
    const list = history.current;
    if (event.key === "Enter" && value.trim()) {
      event.preventDefault();
      list.push(value);
      at.current = list.length;
      onEval(value);
      setValue("");
    } else if (event.key === "ArrowUp" && list.length) {
      event.preventDefault();
      at.current = Math.max(0, at.current - 1);
      setValue(list[at.current]);
    } else if (event.key === "ArrowDown" && list.length) {
      event.preventDefault();
      at.current = Math.min(list.length, at.current + 1);
      setValue(at.current === list.length ? "" : list[at.current]);
    }
  };
  return html`<section class="pane eval" role="region" aria-label="Console">
    <div class="pane-title">Console</div>
    <ol class="eval-log" aria-live="polite" ref=${log}>${entries.map((e, i) => html`<li key=${i}>
      <div class="eval-expr">› ${e.expr}</div>
      <div class=${"eval-answer " + e.state}>${e.answer}</div></li>`)}</ol>
    <input type="text" class="eval-input" aria-label="Evaluate" ref=${input}
      placeholder=${ended ? "The run has ended" : frame ? `Evaluate in ${frame} (Enter)` : "Evaluate at the pause (Enter)"}
      disabled=${ended}
      value=${value} onInput=${(e) => setValue(e.currentTarget.value)} onKeyDown=${onKeyDown} />
  </section>`;
}

export function ScreenshotStrip({ runId, paths }) {
  if (!paths.length) return null;
  return html`<section class="shots" role="region" aria-label="Screenshots">
    ${paths.map((p) => {
      const name = runRelative(runId, p);
      return html`<a key=${p} href=${runFileUrl(runId, name)} target="_blank" rel="noopener">
        <img src=${runFileUrl(runId, name)} alt=${`Screenshot ${name.split("/").pop()}`} /></a>`;
    })}
  </section>`;
}

/** One stream's lines, following its end while more come (unless scrolled up). */
function LogLines({ lines, label, stream }) {
  const follow = useFollowTail(lines.length);
  return html`<pre role="log" aria-label=${label} tabindex="0" ...${follow}>${lines.map(
    (l, i) => html`<div key=${i} class=${"out-" + stream}>${l.line}</div>`)}</pre>`;
}

/**
 * The run's output. The run writes stdout and stderr into two files with no time on
 * their lines, and the server reads each on its own: the order of a stdout line and a
 * stderr line is not known, live or after a reload. So stderr (the debugger's pause
 * lines, warnings, errors) is its own labelled section, never appended as if it came
 * last; within each stream the lines are in the order they were written.
 */
export function Output({ lines, count }) {
  if (!count) return null;
  const stdout = lines.filter((l) => l.stream !== "stderr");
  const stderr = lines.filter((l) => l.stream === "stderr");
  return html`<details class="output" open>
    <summary>Output (${count} lines)</summary>
    ${stdout.length > 0 && html`<${LogLines} lines=${stdout} label="Output" stream="stdout" />`}
    ${stderr.length > 0 && html`<div class="out-title">stderr (${stderr.length} lines; their order
      relative to the output above is not recorded)</div>
      <${LogLines} lines=${stderr} label="stderr" stream="stderr" />`}
  </details>`;
}
