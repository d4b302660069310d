// The scenario, helper and collection tabs: the source, and Run / Debug (POST /api/runs,
// then the run's tab). A debug run takes its breakpoints from unotest/.debugger.json,
// which the runner reads when it starts, so none are passed inline. A save of a file a
// paused run uses offers to reload that run from here too (edits.js).
import { html, useEffect, useState } from "../lib.js";
import { api } from "../api.js";
import { currentTabs, openTab, replaceTab } from "../tabs.js";
import { projectState, useProject } from "../store.js";
import { SourceView } from "./source.js";
import { scenarioName } from "./breakpoints.js";
import { onSave, sendReload, useEdits, usedBy } from "./edits.js";

/**
 * The run tab a scenario's next run may take: one of its runs that has ended (a live
 * one stays in its own tab), the last opened.
 */
function endedRunTab(request, runs) {
  if (request.kind !== "scenario") return null;
  const ended = new Set(runs.filter((r) => r.ref === request.scenario && r.status !== "running")
    .map((r) => r.runId));
  const open = currentTabs().tabs.filter((t) => t.kind === "scenario-run" && ended.has(t.runId));
  return open.length ? open[open.length - 1] : null;
}

/**
 * POST /api/runs, then open the run's tab (a scenario's ended run's tab is reused, not
 * one more tab labelled the same); a refusal is `setError`'s sentence.
 */
export async function startRun(request, tabKind, setError, setBusy) {
  setBusy(true);
  setError(null);
  try {
    const reusable = endedRunTab(request, projectState().runs || []);
    const { runId } = await api("/api/runs", { method: "POST", body: request });
    if (reusable) replaceTab(reusable, { kind: tabKind, runId });
    else openTab({ kind: tabKind, runId });
  } catch (err) {
    setError(err.message);
  } finally {
    setBusy(false);
  }
}

/**
 * After a save in this tab: the runs paused in this page that use the file, each with
 * a button that sends it `reload` and opens its tab (where the answer shows).
 */
function ReloadPausedRuns({ path }) {
  const { paused } = useEdits();
  const [saved, setSaved] = useState(false);
  const [error, setError] = useState(null);
  useEffect(() => onSave((p) => { if (p === path) setSaved(true); }), [path]);
  const runs = paused.filter((run) => usedBy(path, run.scenarioFile));
  if (!saved || !runs.length) return null;
  const reload = (runId) => {
    setSaved(false);
    openTab({ kind: "scenario-run", runId });
    sendReload(runId).catch((err) => setError(`reload: ${err.message}`));
  };
  return html`<div class="reload-offer" role="group" aria-label="Paused runs">
    <span>Saved; paused runs use this file:</span>
    ${runs.map((run) => html`<button type="button" key=${run.runId} title=${`Reload run ${run.runId}`}
      onClick=${() => reload(run.runId)}>Reload ${run.scenario || run.runId}</button>`)}
    ${error && html`<span class="view-error">${error}</span>`}
  </div>`;
}

function Headed({ value, onChange }) {
  return html`<label class="check"><input type="checkbox" checked=${value}
    onChange=${(e) => onChange(e.currentTarget.checked)} /> headed</label>`;
}

/**
 * The scenarios a file makes: itself, or one per case of its `const CASES`
 * (`shop/pay[visa]`, ...), each run on its own; `chosen` is the one Run and Debug start.
 */
function CasePicker({ cases, chosen, onChange }) {
  if (cases.length < 2 && !(cases[0] && cases[0].name.endsWith("]"))) return null;
  return html`<label class="check">case <select aria-label="Case" value=${chosen}
      onChange=${(e) => onChange(e.currentTarget.value)}>
    ${cases.map((c) => html`<option key=${c.name} value=${c.name}>${c.name.slice(c.name.lastIndexOf("["))}</option>`)}
  </select></label>`;
}

export function ScenarioView({ tab, active }) {
  const project = useProject();
  const cases = ((project && project.scenarios) || []).filter((s) => s.path === tab.path);
  const [picked, setPicked] = useState(tab.case);
  useEffect(() => { if (tab.case) setPicked(tab.case); }, [tab.case]);
  const meta = cases.find((s) => s.name === picked) || cases[0];
  const name = meta ? meta.name : scenarioName(tab.path);
  const [headed, setHeaded] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const run = (debug) =>
    startRun({ kind: "scenario", scenario: name, headed, debug }, "scenario-run", setError, setBusy);
  return html`<section class="view scenario-view" aria-label=${`Scenario ${scenarioName(tab.path)}`}>
    <header class="view-bar">
      <h2 class="view-title">${meta ? meta.title : name}</h2>
      <span class="muted">${name}</span>
      <span class="spacer"></span>
      <${CasePicker} cases=${cases} chosen=${name} onChange=${setPicked} />
      <${Headed} value=${headed} onChange=${setHeaded} />
      <button type="button" onClick=${() => run(false)} disabled=${busy || !name}>Run</button>
      <button type="button" onClick=${() => run(true)} disabled=${busy || !name}>Debug</button>
    </header>
    ${error && html`<p class="view-error" role="alert">${error}</p>`}
    <${ReloadPausedRuns} path=${tab.path} />
    <${SourceView} path=${tab.path} active=${active} />
  </section>`;
}

export function HelperView({ tab, active }) {
  return html`<section class="view helper-view" aria-label=${`Helper ${tab.path}`}>
    <${ReloadPausedRuns} path=${tab.path} />
    <${SourceView} path=${tab.path} active=${active} />
  </section>`;
}

/** A collection's name from its path (`unotest/e2e/_collections/nightly.yaml`). */
function collectionName(path) {
  const base = path.split("/").pop() || "";
  return base.replace(/\.ya?ml$/, "");
}

export function CollectionView({ tab, active }) {
  const project = useProject();
  const name = collectionName(tab.path);
  const meta = ((project && project.collections) || []).find((c) => c.path === tab.path);
  const scenarios = (project && project.scenarios) || [];
  const byName = new Map(scenarios.map((s) => [s.name, s]));
  const [headed, setHeaded] = useState(false);
  const [workers, setWorkers] = useState(1);
  const [bail, setBail] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const run = () =>
    startRun(
      { kind: "collection", collection: name, headed, workers: Number(workers) || 1, bail },
      "collection-run",
      setError,
      setBusy,
    );
  return html`<section class="view collection-view" aria-label=${`Collection ${name}`}>
    <header class="view-bar">
      <h2 class="view-title">${name}</h2>
      ${meta && meta.description && html`<span class="muted">${meta.description}</span>`}
      <span class="spacer"></span>
      <${Headed} value=${headed} onChange=${setHeaded} />
      <label class="check">workers <input type="number" min="1" max="64" value=${workers}
        aria-label="Workers" onInput=${(e) => setWorkers(e.currentTarget.value)} /></label>
      <label class="check"><input type="checkbox" checked=${bail}
        onChange=${(e) => setBail(e.currentTarget.checked)} /> bail</label>
      <button type="button" onClick=${run} disabled=${busy}>Run</button>
    </header>
    ${error && html`<p class="view-error" role="alert">${error}</p>`}
    <ul class="collection-scenarios" aria-label="Scenarios of the collection">
      ${((meta && meta.scenarios) || []).map((s) => {
        const found = byName.get(s);
        // Until the project has loaded, no entry is called missing.
        if (!found && !(project && project.loaded)) return html`<li>${s}</li>`;
        return found
          ? html`<li><button type="button" class="linkish"
              onClick=${() => openTab({ kind: "scenario", path: found.path, case: s })}>${s}</button></li>`
          : html`<li class="orphan" title="file not found">${s} <span>(file not found)</span></li>`;
      })}
    </ul>
    <${SourceView} path=${tab.path} active=${active} />
  </section>`;
}
