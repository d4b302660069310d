// The main area: the active tab's view. Protocol tabs render the views helper's
// TAB_VIEWS; the shell's pages its own components. Terminals stay mounted while hidden
// (their screen and process live on). An error boundary keeps one view's bug from
// blanking the page.
import { Component } from "preact";
import { html } from "./lib.js";
import { tabKey, useTabs } from "./tabs.js";
import { TAB_VIEWS } from "./views/index.js";
import { RunsList } from "./runs_list.js";
import { EnvEditor } from "./env_editor.js";
import { TerminalView } from "./terminal_view.js";

class Boundary extends Component {
  constructor(props) {
    super(props);
    this.state = { error: null };
  }

  static getDerivedStateFromError(error) {
    return { error };
  }

  componentDidCatch(error) {
    console.warn("unotest view failed:", error);
  }

  render() {
    if (this.state.error) {
      return html`<div class="view-failed" role="alert">This view failed: ${String(this.state.error.message ?? this.state.error)}</div>`;
    }
    return this.props.children;
  }
}

function ActiveView({ tab }) {
  if (tab.kind === "runs") return html`<${RunsList} />`;
  if (tab.kind === "env") return html`<${EnvEditor} />`;
  const View = TAB_VIEWS[tab.kind];
  if (!View) return html`<p class="empty">No view for ${tab.kind}.</p>`;
  return html`<${View} tab=${tab} active=${true} />`;
}

export function MainArea() {
  const { tabs, activeKey } = useTabs();
  const active = tabs.find((t) => tabKey(t) === activeKey);
  const terminals = tabs.filter((t) => t.kind === "terminal");
  return html`<main class="main-area">
    ${active && active.kind !== "terminal" && html`<div class="tab-panel" role="tabpanel" key=${activeKey}>
      <${Boundary} key=${activeKey}><${ActiveView} tab=${active} /><//></div>`}
    ${terminals.map((t) => html`<div key=${tabKey(t)} role="tabpanel" class="tab-panel terminal-panel"
        hidden=${tabKey(t) !== activeKey}>
      <${Boundary}><${TerminalView} tab=${t} active=${tabKey(t) === activeKey} /><//></div>`)}
    ${!active && html`<div class="welcome"><h1>unotest</h1>
      <p>Pick a scenario in the sidebar, or open Runs, Env or a terminal.</p></div>`}
  </main>`;
}
