// The failure panel of a run tab, from its failure bundle (`bundle` in the run detail,
// files through /api/runs/<id>/files/<name>): the error's name and message with a code
// frame around the failing line, the screenshot, the aria snapshot, console errors,
// failed requests, and the command that opens the trace.
import { html, useEffect, useState } from "../lib.js";
import { api, filePath, runFileText, runFileUrl } from "../api.js";

async function json(runId, name) {
  return JSON.parse(await runFileText(runId, name));
}

/** Lines `line - 2 … line + 2` of `source` with a caret under `col`. */
function CodeFrame({ source, line, col }) {
  const lines = source.split("\n");
  const from = Math.max(1, line - 2);
  const to = Math.min(lines.length, line + 2);
  const width = String(to).length;
  const out = [];
  for (let n = from; n <= to; n++) {
    const mark = n === line ? ">" : " ";
    out.push(html`<div class=${n === line ? "frame-line failing" : "frame-line"}>${
      `${mark} ${String(n).padStart(width)} | ${lines[n - 1]}`}</div>`);
    if (n === line && typeof col === "number") {
      out.push(html`<div class="frame-line caret">${`  ${" ".repeat(width)} | ${" ".repeat(col)}^`}</div>`);
    }
  }
  return html`<pre class="code-frame" aria-label="Code frame">${out}</pre>`;
}

/** What the bundle holds, loaded once per bundle path. */
function useBundle(runId, bundle) {
  const [loaded, setLoaded] = useState({});
  const key = bundle ? bundle.path : null;
  useEffect(() => {
    if (!bundle) return undefined;
    let live = true;
    const has = new Set(bundle.files || []);
    const get = async (name, how) => (has.has(name) ? how(runId, name).catch(() => null) : null);
    (async () => {
      const [error, aria, consoleLog, network] = await Promise.all([
        get("error.json", json), get("page.aria.yaml", runFileText),
        get("console.json", json), get("network.json", json),
      ]);
      let source = null;
      if (error && typeof error.file === "string" && error.file.startsWith("unotest/e2e/")) {
        source = await api(filePath(error.file)).then((f) => f.text, () => null);
      }
      if (live) setLoaded({ error, aria, consoleLog, network, source });
    })();
    return () => { live = false; };
  }, [runId, key]);
  return loaded;
}

export function FailurePanel({ runId, bundle }) {
  const { error, aria, consoleLog, network, source } = useBundle(runId, bundle);
  if (!bundle) return null;
  const files = new Set(bundle.files || []);
  const consoleErrors = (Array.isArray(consoleLog) ? consoleLog : []).filter(
    (c) => c.type === "error" || c.type === "pageerror",
  );
  // alert/confirm/prompt and how the run answered them (runner/dialogs.py)
  const dialogs = (Array.isArray(consoleLog) ? consoleLog : []).filter((c) => c.type === "dialog");
  const requests = Array.isArray(network) ? network : [];
  const failedRequests = requests.filter(
    (r) => r.failure || (typeof r.status === "number" && r.status >= 400),
  );
  // Answered by the scenario's route(): mocked, aborted or recorded (runner/builtins/network.py)
  const routedRequests = requests.filter((r) => r.routed);
  return html`<section class="failure" role="region" aria-label="Failure">
    <h3 class="failure-title">${error ? error.errorName || "Error" : "Failure"}</h3>
    ${error && html`<p class="failure-message">${error.error}</p>`}
    ${error && error.file && html`<p class="muted">at ${error.file}:${error.line}:${error.col}</p>`}
    ${source && error && error.line && html`<${CodeFrame} source=${source} line=${error.line} col=${error.col} />`}
    ${files.has("screenshot.png") && html`<figure class="failure-shot">
      <img src=${runFileUrl(runId, "screenshot.png")} alt="Screenshot at the failure" loading="eager" />
    </figure>`}
    ${aria && html`<details class="failure-aria"><summary>Aria snapshot</summary><pre>${aria}</pre></details>`}
    ${consoleErrors.length > 0 && html`<div class="failure-console"><h4>Console errors</h4><ul>${
      consoleErrors.map((c) => html`<li>${c.type}: ${c.text}${c.url ? ` (${c.url}${c.line != null ? ":" + c.line : ""})` : ""}</li>`)}</ul></div>`}
    ${dialogs.length > 0 && html`<div class="failure-dialogs"><h4>Dialogs</h4><ul>${
      dialogs.map((d) => html`<li>${d.text}</li>`)}</ul></div>`}
    ${failedRequests.length > 0 && html`<div class="failure-network"><h4>Failed requests</h4><ul>${
      failedRequests.map((r) => html`<li>${r.method} ${r.url} ${r.failure || r.status}${r.routed ? ` (${r.routed} by a route)` : ""}</li>`)}</ul></div>`}
    ${routedRequests.length > 0 && html`<div class="failure-routed"><h4>Requests a route answered</h4><ul>${
      routedRequests.map((r) => html`<li>${r.method} ${r.url} → ${r.routed}${r.status != null ? ` ${r.status}` : ""}</li>`)}</ul></div>`}
    ${files.has("trace.zip") && html`<p class="failure-trace">Trace: <code>playwright show-trace ${bundle.path}/trace.zip</code></p>`}
  </section>`;
}
