// The main area's views, one Preact component per tab kind (issue 15).
// The shell renders TAB_VIEWS[tab.kind] with { tab, active }.
import { html, useEffect, useState } from "../lib.js";
import { api } from "../api.js";

function SourceTab({ tab }) {
  const [file, setFile] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    api(`/api/files/${tab.path}`).then(setFile, (e) => setError(e.message));
  }, [tab.path]);
  if (error) return html`<p class="view-error">${error}</p>`;
  if (!file) return html`<p>Loading ${tab.path}…</p>`;
  return html`<pre class="source-plain">${file.text}</pre>`;
}

function RunTab({ tab }) {
  return html`<p>Run ${tab.runId}</p>`;
}

export const TAB_VIEWS = {
  scenario: SourceTab,
  helper: SourceTab,
  collection: SourceTab,
  "scenario-run": RunTab,
  "collection-run": RunTab,
};
