// The Env page: unotest/.env through /api/env. Secret values are masked until revealed,
// "0"/"1" values are switches, commented lines are shown dimmed and read-only; Save
// sends only the changed values of active keys and the variables added here (the server
// keeps every other byte, and creates a missing file).
//
// The page follows the file (fs:env-changed, and a reconnect): what changed on disk is
// shown at once unless there are unsaved edits, which are never dropped unasked; the
// page then says the file changed and offers Reload from disk or Overwrite, as the
// source editor does for a scenario file. Every save carries the version it was made
// on, so one made on an older file is refused (409) and meets the same offer.
import { html, useEffect, useRef, useState } from "./lib.js";
import { api } from "./api.js";
import { onMessage, onResync } from "./live.js";

// A new variable's name: what every shell and os.environ take (the server checks it too).
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function Value({ v, value, onChange }) {
  const [revealed, setRevealed] = useState(false);
  if (v.commented) return html`<code class="env-commented">${v.value}</code>`;
  if (v.bool) {
    const on = value === "1";
    return html`<button role="switch" aria-checked=${on ? "true" : "false"} aria-label=${v.key}
      class=${`switch${on ? " on" : ""}`} onClick=${() => onChange(on ? "0" : "1")}>${on ? "on" : "off"}</button>`;
  }
  return html`<span class="env-value">
    <input type=${v.secret && !revealed ? "password" : "text"} aria-label=${v.key} value=${value}
      autocomplete="off" spellcheck=${false} onInput=${(e) => onChange(e.currentTarget.value)} />
    ${v.secret && html`<button aria-pressed=${revealed ? "true" : "false"} aria-label=${`Reveal ${v.key}`}
      onClick=${() => setRevealed(!revealed)}>Reveal</button>`}
  </span>`;
}

/** What is wrong with a new variable's name, or null. */
function nameProblem(row, file, added) {
  const name = row.key;
  if (!name) return "Give it a name.";
  if (!NAME.test(name)) return "A name is letters, digits and _, not starting with a digit.";
  if (file.vars.some((v) => v.key === name && !v.commented)) return `${name} is already in unotest/.env.`;
  if (added.some((other) => other !== row && other.key === name)) return `${name} is added twice.`;
  return null;
}

/** One variable being added: its name and its value (masked until revealed, as a secret). */
function NewRow({ row, n, problem, onChange, onRemove }) {
  const [revealed, setRevealed] = useState(false);
  const label = `new variable ${n}`;
  const hint = `env-new-${row.id}-problem`;
  return html`<tr class="env-new">
    <th scope="row"><input type="text" class="env-name" aria-label=${`Name of ${label}`}
      value=${row.key} autocomplete="off" spellcheck=${false} aria-invalid=${problem ? "true" : "false"}
      aria-describedby=${problem ? hint : undefined}
      onInput=${(e) => onChange({ ...row, key: e.currentTarget.value.trim() })} />
      ${problem && html`<div id=${hint} class="env-problem">${problem}</div>`}</th>
    <td><span class="env-value">
      <input type=${revealed ? "text" : "password"} aria-label=${`Value of ${label}`} value=${row.value}
        autocomplete="off" spellcheck=${false} onInput=${(e) => onChange({ ...row, value: e.currentTarget.value })} />
      <button aria-pressed=${revealed ? "true" : "false"} aria-label=${`Reveal ${label}`}
        onClick=${() => setRevealed(!revealed)}>Reveal</button>
      <button aria-label=${`Remove ${label}`} onClick=${onRemove}>Remove</button>
    </span></td>
  </tr>`;
}

function changedWords(disk) {
  return disk.exists ? "unotest/.env changed on disk since you opened it" : "unotest/.env was removed on disk since you opened it";
}

export function EnvEditor() {
  const [file, setFile] = useState(null);
  const [edits, setEdits] = useState({});
  const [added, setAdded] = useState([]);
  const [note, setNote] = useState(null);
  // What is on disk now when it differs from what the edits were made on: { disk, said }.
  const [conflict, setConflict] = useState(null);
  const [saving, setSaving] = useState(false);
  const nextId = useRef(1);
  const state = useRef({});
  state.current = { file, edits, added };

  const dirty = () => Object.keys(state.current.edits).length > 0 || state.current.added.length > 0;
  // Read the file again; shown at once unless edits would be lost, then only offered.
  // Only the latest read's answer counts (two changes in a row: an editor's truncate and
  // write).
  const latest = useRef(0);
  const load = () => {
    const ticket = ++latest.current;
    return api("/api/env").then(
      (disk) => {
        if (ticket !== latest.current) return;
        const shown = state.current.file;
        if (shown && shown.fileVersion === disk.fileVersion) {
          setConflict(null); // our own save, nothing, or a change undone on disk
          return;
        }
        if (shown && dirty()) setConflict({ disk, said: changedWords(disk) });
        else {
          setFile(disk);
          setConflict(null);
        }
      },
      (err) => setNote({ error: true, text: err.message }),
    );
  };
  useEffect(() => {
    load();
    const offResync = onResync(load);
    const offMessage = onMessage((msg) => { if (msg.kind === "fs:env-changed") load(); });
    return () => {
      offResync();
      offMessage();
    };
  }, []);
  if (!file) return html`<section class="env-editor" aria-label="Env"><h1>Env</h1>
    ${note ? html`<p role="alert">${note.text}</p>` : html`<p>Loading…</p>`}</section>`;

  const problems = new Map(added.map((row) => [row.id, nameProblem(row, file, added)]));
  const valid = [...problems.values()].every((p) => p === null);
  const changed = Object.keys(edits).length > 0 || added.length > 0;
  const save = async (baseVersion = file.fileVersion) => {
    if (saving) return;
    setSaving(true);
    try {
      const body = { version: 1, values: edits, baseVersion, added: added.map(({ key, value }) => ({ key, value })) };
      const saved = await api("/api/env", { method: "PUT", body });
      setFile(saved);
      setEdits({});
      setAdded([]);
      setConflict(null);
      setNote({ error: false, text: "Saved." });
    } catch (err) {
      if (err.status === 409) {
        // Changed on disk since it was read: what is there now is what Overwrite saves over.
        api("/api/env").then((disk) => setConflict({ disk, said: err.message }), () => {});
        setNote(null);
      } else {
        setNote({ error: true, text: `Not saved: ${err.message}` });
      }
    } finally {
      setSaving(false);
    }
  };
  const reloadFromDisk = () => {
    setFile(conflict.disk);
    setEdits({});
    setAdded([]);
    setConflict(null);
    setNote({ error: false, text: "Reloaded from disk." });
  };
  const addRow = () => {
    setNote(null);
    setAdded([...added, { id: nextId.current++, key: "", value: "" }]);
  };
  const activeVars = file.vars.filter((v) => !v.commented);
  return html`<section class="env-editor" aria-label="Env">
    <h1>Env <small>unotest/.env</small></h1>
    ${!file.exists && html`<p class="empty">There is no unotest/.env yet. Add a variable and save: saving creates the file (readable by you only).</p>`}
    ${file.exists && activeVars.length === 0 && html`<p class="empty">unotest/.env has no variables yet.</p>`}
    ${conflict && html`<div class="reload-offer env-conflict" role="alert">
      <span>${conflict.said}: Reload from disk drops your edits, Overwrite saves them over it.</span>
      <button type="button" onClick=${reloadFromDisk} disabled=${saving}>Reload from disk</button>
      <button type="button" onClick=${() => save(conflict.disk.fileVersion)} disabled=${saving || !valid}>Overwrite</button>
    </div>`}
    <table class="env-table"><tbody>
      ${file.vars.map((v, i) => html`<tr key=${`${i}:${v.key}`} class=${v.commented ? "commented" : ""}
          aria-disabled=${v.commented ? "true" : undefined}>
        <th scope="row">${v.commented ? `# ${v.key}` : v.key}</th>
        <td><${Value} v=${v} value=${edits[v.key] ?? v.value}
          onChange=${(value) => { setNote(null); setEdits({ ...edits, [v.key]: value }); }} /></td>
      </tr>`)}
      ${added.map((row, i) => html`<${NewRow} key=${row.id} row=${row} n=${i + 1} problem=${problems.get(row.id)}
        onChange=${(next) => setAdded(added.map((r) => (r.id === row.id ? next : r)))}
        onRemove=${() => setAdded(added.filter((r) => r.id !== row.id))} />`)}
    </tbody></table>
    <div class="env-actions">
      <button type="button" onClick=${addRow}>Add variable</button>
      <button type="button" onClick=${() => save()} disabled=${!changed || !valid || saving}>Save</button>
      ${note && html`<span role="status" class=${note.error ? "error" : "ok"}>${note.text}</span>`}
    </div>
  </section>`;
}
