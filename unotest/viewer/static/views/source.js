// The source view shared by the scenario, helper and run tabs: line numbers,
// highlighting, a breakpoint button at every statement start, editing in a transparent
// textarea laid over the highlighted text (Save button, Ctrl+S), problems at their
// line:col, and a highlighted current line when a run gives one. A save carries the
// version the file was read at: when the file changed on disk meanwhile (an editor, an
// agent's write_file, another tab), the save is refused and a banner offers Reload from
// disk (drop the local edits) or Overwrite (save them over the new version).
import { html, useEffect, useMemo, useRef, useState, useCallback } from "../lib.js";
import { api, FileConflict, filePath, saveFile } from "../api.js";
import { onMessage, onResync } from "../live.js";
import { useProject } from "../store.js";
import { tokenLines } from "./highlight.js";
import { breakpointKey, breakpointsOf, toggleLine } from "./breakpoints.js";
import { announceSave } from "./edits.js";

const CHANGED = new Set(["fs:scenarios-changed", "fs:helpers-changed", "fs:collections-changed"]);

// Files already read, by path: a run moving in and out of helpers switches the source
// between files at every call, which must neither refetch nor flicker each time. Any
// change on disk (or a reconnect) empties it.
const cache = new Map();
let cacheWatched = false;

// Unsaved edits, by path, with the version of the file they were made on: a source view
// is unmounted when its tab is left (the Runs page, another tab), and the edits were
// lost with it. Kept for the page's life; a save or Reload from disk drops them. The
// version makes a save of an edit made before the file changed on disk a conflict.
const drafts = new Map();

/** Whether a draft differs from its file as read (a draft whose file is not cached any
 *  more, after a change on disk, counts: the view kept it because it was edited). */
function unsaved() {
  for (const [path, draft] of drafts) {
    const read = cache.get(path);
    if (!read || draft.text !== read.text) return true;
  }
  return false;
}

function askBeforeUnload(event) {
  if (!unsaved()) return;
  event.preventDefault();
  event.returnValue = ""; // Chrome before 119 asks only when this is set
}

// Drafts live as long as the page: closing or reloading it drops them silently, so the
// browser asks first while one differs from its file. The listener is there only while a
// draft is kept (an unload listener costs the page its back/forward cache).
function guardUnload() {
  if (drafts.size) window.addEventListener("beforeunload", askBeforeUnload);
  else window.removeEventListener("beforeunload", askBeforeUnload);
}

function watchCache() {
  if (cacheWatched) return;
  cacheWatched = true;
  onMessage((msg) => { if (CHANGED.has(msg.kind)) cache.clear(); });
  onResync(() => cache.clear());
}

/** The file at `path` from GET /api/files (or the cache), refetched on a resync or a
 *  change on disk unless `keep()` says the person has unsaved edits. */
export function useSourceFile(path, keep) {
  const [file, setFileState] = useState(() => cache.get(path) || null);
  const shown = useRef(file);
  shown.current = file;
  const [error, setError] = useState(null);
  const keepRef = useRef(keep);
  keepRef.current = keep;
  const pathRef = useRef(path);
  pathRef.current = path;
  const setFile = useCallback((data, forPath = pathRef.current) => {
    cache.set(forPath, data);
    if (forPath === pathRef.current) setFileState(data);
  }, []);
  // Two changes on disk in a row (an editor truncates, then writes) start two reads whose
  // answers can arrive in either order: only the latest read's answer is shown, or the
  // view could settle on the half-written file.
  const latest = useRef(0);
  const load = useCallback(() => {
    if (!path) return Promise.resolve(null);
    const ticket = ++latest.current;
    return api(filePath(path)).then(
      (data) => {
        if (ticket !== latest.current) return null;
        // Edited while this read was on its way (it started before the first keystroke):
        // taking its version now would make the save overwrite what changed on disk,
        // unasked. The file stays as it was read; the save then meets the conflict. (A
        // view that has no file yet, come back to edits kept from before, takes it: the
        // edits keep the version they were made on.)
        if (shown.current && keepRef.current && keepRef.current()) return null;
        setFile(data, path);
        if (path === pathRef.current) setError(null);
        return null;
      },
      (err) => {
        if (ticket !== latest.current) return null;
        if (path === pathRef.current) setError(err.message);
        return err.message;
      },
    );
  }, [path]);
  useEffect(() => {
    watchCache();
    const cached = cache.get(path);
    setFileState(cached || null);
    setError(null);
    if (!cached) load();
    const offResync = onResync(() => {
      if (!(keepRef.current && keepRef.current())) load();
    });
    const offMessage = onMessage((msg) => {
      if (CHANGED.has(msg.kind) && !(keepRef.current && keepRef.current())) load();
    });
    return () => {
      offResync();
      offMessage();
    };
  }, [load]);
  return { file, setFile, error, reload: load };
}

const INDENT = "  ";
const MODIFIERS = new Set(["Shift", "Control", "Alt", "Meta"]);

/**
 * The lines from the one holding `from` to the one holding `to` (a selection ending at
 * a line's start leaves that line out) indented by two spaces (`by` 1) or outdented by
 * up to two (`by` -1): { value, from, to } with the selection kept over the same text,
 * or null when nothing changes.
 */
export function indentLines(value, from, to, by) {
  const first = value.lastIndexOf("\n", from - 1) + 1;
  const end = to > from && value[to - 1] === "\n" ? to - 1 : to;
  const lines = value.slice(first, end).split("\n");
  let lastEnd = value.indexOf("\n", end);
  if (lastEnd < 0) lastEnd = value.length;
  const rest = value.slice(first + lines.join("\n").length, lastEnd);
  lines[lines.length - 1] += rest;
  let newFrom = from;
  let delta = 0;
  const out = lines.map((line, i) => {
    if (by > 0) {
      if (i === 0) newFrom += INDENT.length;
      delta += INDENT.length;
      return INDENT + line;
    }
    const cut = line.startsWith(INDENT) ? INDENT.length : line.startsWith(" ") ? 1 : 0;
    if (i === 0) newFrom = Math.max(first, from - cut);
    delta -= cut;
    return line.slice(cut);
  });
  if (delta === 0) return null;
  const text = value.slice(0, first) + out.join("\n") + value.slice(lastEnd);
  return { value: text, from: newFrom, to: Math.max(newFrom, to + delta) };
}

/** The first statement start of each line: Map line → col. */
function startsByLine(statements) {
  const starts = new Map();
  for (const s of statements || []) {
    if (!starts.has(s.line) || starts.get(s.line) > s.col) starts.set(s.line, s.col);
  }
  return starts;
}

function Gutter({ count, starts, setLines, onToggle, current }) {
  const rows = [];
  for (let line = 1; line <= count; line++) {
    const col = starts.get(line);
    const set = setLines.has(line);
    rows.push(html`<div class=${"gutter-row" + (line === current ? " current" : "")} key=${line}>
      ${col === undefined
        ? html`<span class="bp-none"></span>`
        : html`<button type="button" class=${"bp" + (set ? " set" : "")}
            aria-label=${`Breakpoint at line ${line}`} aria-pressed=${set ? "true" : "false"}
            title=${`Breakpoint at ${line}:${col}`}
            onClick=${() => onToggle(line, col, !set)}></button>`}
      <span class="ln">${line}</span>
    </div>`);
  }
  return html`<div class="gutter">${rows}</div>`;
}

/** The tokens of a line as spans; the character at each problem's column is marked
 *  (a problem past the line's end marks nothing there: its note says where). */
function spans(tokens, cols) {
  const out = [];
  let at = 0;
  for (const t of tokens) {
    const end = at + t.text.length;
    const inside = cols.filter((c) => c >= at && c < end).sort((a, b) => a - b);
    let from = 0;
    for (const col of inside) {
      const i = col - at;
      if (i > from) out.push(html`<span class=${"tok-" + t.type}>${t.text.slice(from, i)}</span>`);
      if (i >= from) {
        out.push(html`<span class=${"tok-" + t.type + " problem-at"}>${t.text[i]}</span>`);
        from = i + 1;
      }
    }
    if (from < t.text.length) out.push(html`<span class=${"tok-" + t.type}>${t.text.slice(from)}</span>`);
    at = end;
  }
  return out;
}

function CodeLine({ tokens, problems, current, revealed, line }) {
  const cls = "code-row" + (current ? " current" : "") + (revealed ? " revealed" : "") +
    (problems.length ? " has-problem" : "");
  return html`<div class=${cls} data-line=${line}>${spans(tokens, problems.map((p) => p.col))}${problems.map(
    (p) => html`<span class="problem-inline" title=${p.message}>  ⟵ ${p.line}:${p.col} ${p.message}</span>`,
  )}</div>`;
}

/**
 * The source view. `path` is the file; `current` the line a run is at (highlighted and
 * scrolled to), `reveal` a line to scroll to (a call-stack frame click); `onSaved(file)`
 * is told after a successful save (and every tab through edits.js's `announceSave`);
 * `onBreakpoint(path, line, col, set)` is told of each toggle (a live run forwards it as
 * set-bp / clear-bp).
 */
export function SourceView({ path, current = null, reveal = null, onSaved, onBreakpoint, active = true }) {
  const [draft, setDraftState] = useState(() => (drafts.has(path) ? drafts.get(path).text : null));
  const draftRef = useRef(null);
  draftRef.current = draft;
  const fileRef = useRef(null);
  const setDraft = (value) => {
    if (value === null) {
      drafts.delete(path);
    } else {
      const kept = drafts.get(path);
      const version = kept ? kept.version : fileRef.current && fileRef.current.version;
      drafts.set(path, { text: value, version });
    }
    guardUnload();
    setDraftState(value);
  };
  // Kept over a change on disk only when edited: a draft equal to the file is dropped.
  const edited = () => {
    const kept = draftRef.current;
    if (kept === null || (fileRef.current && kept === fileRef.current.text)) {
      if (kept !== null) setDraft(null);
      return false;
    }
    return true;
  };
  const { file, setFile, error, reload } = useSourceFile(path, edited);
  fileRef.current = file;
  const [saving, setSaving] = useState(false);
  const [note, setNote] = useState(null);
  const [conflict, setConflict] = useState(null); // a FileConflict while its banner shows
  const project = useProject();
  const key = breakpointKey(path);
  const scroller = useRef(null);

  useEffect(() => {
    setDraftState(drafts.has(path) ? drafts.get(path).text : null);
    setConflict(null);
  }, [path]);
  const text = draft !== null ? draft : file ? file.text : "";
  // Only the scenario language is highlighted; a collection's YAML is shown as it is.
  const lines = useMemo(
    () => (/\.js$/.test(path) ? tokenLines(text) : text.split("\n").map((t) => (t ? [{ type: "plain", text: t }] : []))),
    [text, path],
  );
  const starts = useMemo(() => startsByLine(file && file.statements), [file]);
  const setLines = useMemo(
    () => new Set(breakpointsOf(project && project.breakpoints, key).map((bp) => bp.line)),
    [project && project.breakpoints, key],
  );
  const problemsByLine = useMemo(() => {
    const byLine = new Map();
    for (const p of (file && file.problems) || []) {
      if (!byLine.has(p.line)) byLine.set(p.line, []);
      byLine.get(p.line).push(p);
    }
    return byLine;
  }, [file]);

  const scrollTo = (line) => {
    const box = scroller.current;
    const row = box && box.querySelector(`.code-row[data-line="${line}"]`);
    if (!row) return;
    const top = row.offsetTop;
    if (top < box.scrollTop || top + row.offsetHeight > box.scrollTop + box.clientHeight) {
      box.scrollTop = Math.max(0, top - box.clientHeight / 3);
    }
  };
  useEffect(() => { if (current) scrollTo(current); }, [current, file]);
  useEffect(() => { if (reveal) scrollTo(reveal.line); }, [reveal]);

  // Save `text` if the file on disk is still at `base` (the version this view read, or
  // the one a conflict reported, to overwrite it).
  const save = async (base = (drafts.get(path) || {}).version || (file && file.version)) => {
    if (saving || !file) return;
    setSaving(true);
    try {
      const saved = await saveFile(path, text, base);
      setFile(saved);
      setDraft(null);
      setConflict(null);
      const count = (saved.problems || []).length;
      setNote(count ? `Saved with ${count} problem${count > 1 ? "s" : ""}` : "Saved");
      if (onSaved) onSaved(saved);
      announceSave(path); // a paused run using this file offers Reload (edits.js)
    } catch (err) {
      if (err instanceof FileConflict) {
        setConflict(err);
        setNote(null);
      } else {
        setNote(`Not saved: ${err.message}`);
      }
    } finally {
      setSaving(false);
    }
  };
  const reloadFromDisk = async () => {
    setConflict(null);
    setDraft(null);
    draftRef.current = null; // now, not at the next render: the read below must be taken
    const failed = await reload();
    setNote(failed ? `Not reloaded: ${failed}` : "Reloaded from disk");
  };
  const toggle = async (line, col, set) => {
    if (!key) return;
    try {
      await toggleLine(key, line, col, set);
      if (onBreakpoint) onBreakpoint(path, line, col, set);
    } catch (err) {
      setNote(`Breakpoint not ${set ? "set" : "cleared"}: ${err.message}`);
    }
  };
  // Tab indents, so it cannot also move the focus (WCAG 2.1.2): Escape, then Tab or
  // Shift+Tab, leaves the editor, as in CodeMirror.
  const escaped = useRef(false);
  const edit = (area, value, from, to) => {
    setDraft(value);
    requestAnimationFrame(() => area.setSelectionRange(from, to));
  };
  const onKeyDown = (event) => {
    const leaving = escaped.current;
    // (Shift pressed for Shift+Tab is a key of its own: it keeps the Escape.)
    if (!MODIFIERS.has(event.key)) escaped.current = event.key === "Escape";
    if ((event.ctrlKey || event.metaKey) && (event.key === "s" || event.key === "S")) {
      event.preventDefault();
      save();
    } else if (event.key === "Tab" && !event.ctrlKey && !event.altKey && !event.metaKey && !leaving) {
      event.preventDefault();
      const area = event.currentTarget;
      const { selectionStart: from, selectionEnd: to, value } = area;
      if (from === to && !event.shiftKey) {
        edit(area, value.slice(0, from) + "  " + value.slice(to), from + 2, from + 2);
        return;
      }
      const changed = indentLines(value, from, to, event.shiftKey ? -1 : 1);
      if (changed) edit(area, changed.value, changed.from, changed.to);
    }
  };

  if (error && !file) return html`<div class="source"><p class="view-error">${error}</p></div>`;
  if (!file) return html`<div class="source"><p class="muted">Loading ${path}…</p></div>`;
  const problems = file.problems || [];
  const dirty = draft !== null && draft !== file.text;
  return html`<div class="source" role="group" aria-label=${`Source of ${path}`}>
    <div class="source-bar">
      <span class="source-path">${path}${dirty ? " •" : ""}</span>
      <button type="button" onClick=${() => save()} disabled=${saving || !active}>Save</button>
      ${note && html`<span class="source-note" role="status">${note}</span>`}
    </div>
    ${conflict && html`<div class="reload-offer source-conflict" role="alert">
      <span>${conflict.message}: Reload from disk drops your edits, Overwrite saves them over it.</span>
      <button type="button" onClick=${reloadFromDisk} disabled=${saving}>Reload from disk</button>
      <button type="button" onClick=${() => save(conflict.version)} disabled=${saving}>Overwrite</button>
    </div>`}
    <div class="source-scroll" ref=${scroller}>
      <div class="source-grid">
        <${Gutter} count=${lines.length} starts=${starts} setLines=${setLines}
          onToggle=${toggle} current=${current} />
        <div class="code">
          <div class="code-hl" aria-hidden="true">${lines.map(
            (tokens, n) => html`<${CodeLine} key=${n} line=${n + 1} tokens=${tokens}
              current=${current === n + 1} revealed=${reveal !== null && reveal.line === n + 1}
              problems=${problemsByLine.get(n + 1) || []} />`,
          )}</div>
          <textarea class="code-input" aria-label="Source" spellcheck=${false} wrap="off"
            autocomplete="off" autocapitalize="off" value=${text}
            onInput=${(e) => setDraft(e.currentTarget.value)} onKeyDown=${onKeyDown}></textarea>
        </div>
      </div>
    </div>
    ${problems.length > 0 && html`<ul class="problems" aria-label="Problems">${problems.map(
      (p) => html`<li><button type="button" class="linkish" onClick=${() => scrollTo(p.line)}>
        ${p.line}:${p.col}</button> ${p.message}</li>`,
    )}</ul>`}
  </div>`;
}
