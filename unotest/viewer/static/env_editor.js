// The Env page: unotest/.env through /api/env. Secret values are masked until revealed,
// "0"/"1" values are switches, commented lines are shown dimmed and read-only; Save
// sends only the changed values of active keys (the server keeps every other byte).
import { html, useEffect, useState } from "./lib.js";
import { api } from "./api.js";
import { onResync } from "./live.js";

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

export function EnvEditor() {
  const [file, setFile] = useState(null);
  const [edits, setEdits] = useState({});
  const [note, setNote] = useState(null);
  // After a reconnect the file is read again; values being edited stay as typed.
  const load = () => api("/api/env").then(setFile, (err) => setNote({ error: true, text: err.message }));
  useEffect(() => { load(); return onResync(load); }, []);
  if (!file) return html`<section class="env-editor" aria-label="Env"><h1>Env</h1>
    ${note ? html`<p role="alert">${note.text}</p>` : html`<p>Loading…</p>`}</section>`;
  const dirty = Object.keys(edits).length > 0;
  const save = async () => {
    try {
      const saved = await api("/api/env", { method: "PUT", body: { version: 1, values: edits } });
      setFile(saved);
      setEdits({});
      setNote({ error: false, text: "Saved." });
    } catch (err) {
      setNote({ error: true, text: err.message });
    }
  };
  return html`<section class="env-editor" aria-label="Env">
    <h1>Env <small>unotest/.env</small></h1>
    ${file.vars.length === 0 && html`<p class="empty">unotest/.env has no variables.</p>`}
    <table class="env-table"><tbody>
      ${file.vars.map((v, i) => html`<tr key=${`${i}:${v.key}`} class=${v.commented ? "commented" : ""}
          aria-disabled=${v.commented ? "true" : undefined}>
        <th scope="row">${v.commented ? `# ${v.key}` : v.key}</th>
        <td><${Value} v=${v} value=${edits[v.key] ?? v.value}
          onChange=${(value) => { setNote(null); setEdits({ ...edits, [v.key]: value }); }} /></td>
      </tr>`)}
    </tbody></table>
    <div class="env-actions">
      <button onClick=${save} disabled=${!dirty}>Save</button>
      ${note && html`<span role="status" class=${note.error ? "error" : "ok"}>${note.text}</span>`}
    </div>
  </section>`;
}
