// The Steps region of a run tab: one row per step (text, line, duration, status), helper
// steps indented by depth. Windowed: only the rows in view (and a few around) are in the
// DOM, each of a fixed height, so a run of 10,000 steps stays as quick as one of ten.
// While the list is scrolled to its end it follows new steps.
import { html, useEffect, useLayoutEffect, useRef, useState } from "../lib.js";
import { formatDuration } from "./run_model.js";

const ROW = 22;
const OVERSCAN = 12;
const MARK = { ok: "✓", fail: "✗", caught: "⚠", skipped: "↷", running: "…", unfinished: "·" };

export function StepsList({ steps, version, scenarioFile, onPick }) {
  const box = useRef(null);
  const [view, setView] = useState({ top: 0, height: 400 });
  const follow = useRef(true);
  const touched = useRef(0);

  // Only the person stops the following: a scroll within a moment of their wheel, key,
  // pointer or touch decides it (it follows again once back at the end). Scroll events
  // are asynchronous and the browser moves scrollTop itself as the list grows, so a
  // scroll position alone cannot tell a person's scroll from ours.
  const touch = () => {
    touched.current = Date.now();
  };
  const measure = () => {
    const el = box.current;
    if (!el) return;
    const atEnd = el.scrollTop + el.clientHeight >= el.scrollHeight - ROW * 2;
    if (atEnd) follow.current = true;
    else if (Date.now() - touched.current < 1000) follow.current = false;
    setView({ top: el.scrollTop, height: el.clientHeight || 400 });
  };
  // Right after each render's DOM update (not after a paint, which a busy machine
  // delays): scrolled to the end, and the window computed from there.
  useLayoutEffect(() => {
    const el = box.current;
    if (el && follow.current) {
      el.scrollTop = el.scrollHeight;
      if (el.scrollTop !== view.top) setView({ top: el.scrollTop, height: el.clientHeight || 400 });
    }
  }, [version, steps.length]);
  useEffect(() => {
    const el = box.current;
    if (!el || typeof ResizeObserver === "undefined") return undefined;
    const observer = new ResizeObserver(() => measure());
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  const first = Math.max(0, Math.floor(view.top / ROW) - OVERSCAN);
  const last = Math.min(steps.length, Math.ceil((view.top + view.height) / ROW) + OVERSCAN);
  const rows = [];
  for (let i = first; i < last; i++) {
    const step = steps[i];
    const helper = step.file && scenarioFile && step.file !== scenarioFile;
    // A step(title, fn) statement shows its title (its code in the tooltip).
    const status = step.soft ? "soft fail" : step.status;
    rows.push(html`<li key=${i} class=${"step step-" + step.status + (step.title ? " step-titled" : "")}
        style=${{ top: `${i * ROW}px`, paddingLeft: `${8 + step.depth * 16}px` }}
        title=${step.error || step.text}>
      <span class="step-mark" aria-label=${status}>${MARK[step.status] || ""}</span>
      <button type="button" class="linkish step-text" onClick=${() => onPick && onPick(step)}>
        ${step.title || step.text}</button>
      <span class="step-where">${helper ? `${step.file.split("/").pop()}:` : ""}${step.line}</span>
      <span class="step-status">${status}</span>
      <span class="step-duration">${formatDuration(step.durationMs)}</span>
    </li>`);
  }
  return html`<div class="steps" role="region" aria-label="Steps">
    <div class="pane-title">Steps <span class="muted">${steps.length}</span></div>
    <div class="steps-scroll" ref=${box} onScroll=${measure} onWheel=${touch}
        onKeyDown=${touch} onPointerDown=${touch} onTouchMove=${touch}>
      <ol class="steps-list" style=${{ height: `${steps.length * ROW}px` }}>${rows}</ol>
    </div>
  </div>`;
}
