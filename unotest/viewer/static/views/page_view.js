// The page as the run saw it: at this pause (the live page: Pick target answers a target
// for the element clicked), or after a step picked in Steps, or after the newest step.
// The runner writes the images (runner/run/page_images.py) and says so with `page:image`
// lines, which RunModel keeps on the steps and the pause.

import { html, useEffect, useRef, useState } from "../lib.js";
import { runFileUrl } from "../api.js";
import { runRelative } from "./run_model.js";

/** Whether the page image is folded away, for every run tab of this page. */
const foldedPages = { value: false };

/** The image to show: {image, label, live} or null (no image of the page yet). */
export function shownImage(model, pickedStep) {
  if (pickedStep !== null && pickedStep !== undefined) {
    const step = model.steps[pickedStep];
    if (step && step.status !== "running") {
      const where = `line ${step.line}:${step.col}`;
      return step.image
        ? { image: step.image, label: `Page after ${where}`, live: false }
        : { image: null, label: `Page after ${where}`, live: false };
    }
  }
  const pause = model.pause;
  const atPause = model.pauseImage;
  if (pause && atPause && atPause.turn === model.turn) {
    return { image: atPause, label: `Page at line ${pause.line}:${pause.col}`, live: model.live };
  }
  const last = model.lastStepImage;
  return last ? { image: last, label: `Page after line ${last.line}:${last.col}`, live: false } : null;
}

/** What a pick's answer says: {target, alternatives, element} or {error}. */
function pickAnswer(answer) {
  if (!answer || answer.kind === "command:applied") return null;
  if (answer.kind === "command:rejected") return { error: answer.reason };
  if (!answer.ok) return { error: answer.error || "no target" };
  try {
    return JSON.parse(answer.value);
  } catch {
    return { error: "the runner's answer could not be read" };
  }
}

export function PagePane({ runId, model, pickedStep, send, onUseTarget }) {
  const shown = shownImage(model, pickedStep);
  const [picking, setPicking] = useState(false);
  const [pickId, setPickId] = useState(null);
  const [chosen, setChosen] = useState(null); // an alternative picked instead of the best
  // The image folded away leaves the source the room (kept for the page's other run tabs).
  const [folded, setFolded] = useState(foldedPages.value);
  const dialog = useRef(null);
  const live = shown !== null && shown.live;
  useEffect(() => { if (!live) setPicking(false); }, [live]);
  if (shown === null) return null;
  const { image, label } = shown;
  const src = image ? runFileUrl(runId, runRelative(runId, image.path)) : null;
  const answer = pickId ? pickAnswer(model.answers.get(pickId)) : null;
  const target = answer && !answer.error ? chosen || answer.target : "";

  const onImageClick = async (event) => {
    if (!picking || !image || !image.viewport) {
      if (dialog.current && !picking) dialog.current.showModal();
      return;
    }
    const box = event.currentTarget.getBoundingClientRect();
    const x = ((event.clientX - box.left) / box.width) * image.viewport.width;
    const y = ((event.clientY - box.top) / box.height) * image.viewport.height;
    setChosen(null);
    setPickId(await send({ cmd: "pick", x: Math.round(x), y: Math.round(y) }));
  };

  return html`<section class="pane page-pane" role="region" aria-label="Page">
    <div class="pane-title page-bar">
      <span>${label}${image && image.file ? html` <span class="muted">${image.file.split("/").pop()}</span>` : ""}</span>
      <span class="spacer"></span>
      <button type="button" aria-pressed=${folded ? "true" : "false"}
        title="Fold the page image away, for the source"
        onClick=${() => { foldedPages.value = !folded; setFolded(!folded); setPicking(false); }}>Hide page</button>
      <button type="button" aria-pressed=${picking ? "true" : "false"} disabled=${!live || folded}
        title=${live ? "Click the page to get a target for the element there"
          : "Pick target works on the live page, at a pause"}
        onClick=${() => setPicking(!picking)}>Pick target</button>
    </div>
    ${folded ? null : image
      ? html`<img class=${`page-image${picking ? " picking" : ""}`} src=${src} alt=${label}
          title=${picking ? "Click an element" : "Open full size"} onClick=${onImageClick} />`
      : html`<p class="muted">No image of the page after this step: <code>pageImages.steps</code> in
          unotest.config.yaml keeps them (on-debug, the default: under the debugger; on: every run).</p>`}
    ${pickId && html`<div class="picked">
      ${answer === null && html`<span class="muted">Picking…</span>`}
      ${answer && answer.error && html`<span class="picked-error" role="alert">${answer.error}</span>`}
      ${answer && !answer.error && html`<label class="picked-target">Picked target
          <input type="text" readonly aria-label="Picked target" value=${target}
            onFocus=${(e) => e.currentTarget.select()} /></label>
        <button type="button" onClick=${() => onUseTarget(target)}>Copy to Evaluate</button>
        <button type="button" onClick=${() => navigator.clipboard && navigator.clipboard.writeText(target)}>Copy</button>
        ${answer.alternatives && answer.alternatives.length > 0 && html`<div class="picked-others">Also:
          ${[answer.target, ...answer.alternatives].filter((t) => t !== target).map((t) => html`<button
            type="button" class="linkish" key=${t} onClick=${() => setChosen(t)}>${t}</button>`)}</div>`}`}
    </div>`}
    ${image && html`<dialog class="page-full" ref=${dialog} aria-label=${`${label}, full size`}>
      <div class="page-bar"><span>${label}</span><span class="spacer"></span>
        <button type="button" onClick=${() => dialog.current && dialog.current.close()}>Close</button></div>
      <img src=${src} alt=${`${label}, full size`} />
    </dialog>`}
  </section>`;
}
