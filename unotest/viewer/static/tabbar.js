// The tab bar: one tab per open TabKind (and the shell's pages), the scenario's colour as
// a thin strip, a close button on each. Labels and colours come from the project.
import { html, useEffect, useRef } from "./lib.js";
import { useProject } from "./store.js";
import { closeTab, openTab, tabKey, useTabs } from "./tabs.js";
import { scenarioName } from "./views/breakpoints.js";

function stem(path) {
  return (path ?? "").split("/").pop().replace(/\.test\.js$|\.js$|\.ya?ml$/, "");
}

// {label, color} of a tab, from what the project knows (a file or run it no longer has
// keeps a label from its own fields).
export function describeTab(tab, project) {
  const byPath = (list) => list.find((x) => x.path === tab.path);
  const scenarioByName = (name) => project.scenarios.find((s) => s.name === name);
  switch (tab.kind) {
    case "scenario": {
      const s = byPath(project.scenarios);
      // One the index could not read (a wrong header) is named from its path, as the tree
      // does; a parameterised file (its scenarios are its cases) by its own name too.
      const name = s && !s.name.endsWith("]") ? s.name : scenarioName(tab.path);
      return { label: name ?? stem(tab.path), color: s?.color ?? null };
    }
    case "helper": return { label: `helper ${byPath(project.helpers)?.name ?? stem(tab.path)}`, color: null };
    case "collection": return { label: `collection ${byPath(project.collections)?.name ?? stem(tab.path)}`, color: null };
    case "scenario-run":
    case "collection-run": {
      const run = project.runs.find((r) => r.runId === tab.runId);
      const ref = run?.ref ?? tab.runId;
      const color = tab.kind === "scenario-run" ? scenarioByName(run?.ref)?.color ?? null : null;
      return { label: `${tab.kind === "collection-run" ? "collection run" : "run"} ${ref}`, color };
    }
    case "runs": return { label: "Runs", color: null };
    case "env": return { label: "Env", color: null };
    case "terminal": return { label: `Terminal ${tab.id.replace(/^t/, "")} (${tab.term})`, color: null };
    default: return { label: tab.kind, color: null };
  }
}

// Left/Right (Home/End) move to the neighbouring tab and show it (WAI-ARIA tabs).
function onTabKey(event, tabs, activeKey) {
  const index = tabs.findIndex((t) => tabKey(t) === activeKey);
  const to = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: tabs.length - 1 }[event.key];
  if (to === undefined || !tabs.length) return;
  event.preventDefault();
  const bar = event.currentTarget;
  const next = tabs[(to + tabs.length) % tabs.length];
  openTab(next);
  const key = tabKey(next);
  requestAnimationFrame(() => {
    for (const el of bar.querySelectorAll(".tab")) {
      if (el.dataset.key === key) el.querySelector('[role="tab"]')?.focus();
    }
  });
}

export function TabBar() {
  const { tabs, activeKey } = useTabs();
  const project = useProject();
  const bar = useRef(null);
  // The active tab in view, however many are open (a click in the tree, Run, a key).
  useEffect(() => {
    const active = bar.current && bar.current.querySelector(".tab.active");
    if (active) active.scrollIntoView({ block: "nearest", inline: "nearest" });
  }, [activeKey, tabs.length]);
  if (!tabs.length) return html`<div class="tabbar empty" role="tablist" aria-label="Open tabs"></div>`;
  return html`<div class="tabbar" role="tablist" aria-label="Open tabs" ref=${bar}
      onKeyDown=${(e) => onTabKey(e, tabs, activeKey)}>
    ${tabs.map((tab) => {
      const key = tabKey(tab);
      const { label, color } = describeTab(tab, project);
      const selected = key === activeKey;
      return html`<div key=${key} class=${`tab${selected ? " active" : ""}`} data-key=${key}>
        <span class="tab-strip" style=${{ background: color ?? "transparent" }}></span>
        <button role="tab" class="tab-label" aria-selected=${selected ? "true" : "false"}
          tabindex=${selected ? "0" : "-1"}
          title=${tab.path ?? tab.runId ?? label} onClick=${() => openTab(tab)}>${label}</button>
        <button class="tab-close" aria-label=${`Close ${label}`} title="Close"
          onClick=${() => closeTab(tab)}>×</button>
      </div>`;
    })}
  </div>`;
}
