// The page's frame: the reconnecting banner, the sidebar, the tab bar and the active tab.
import { html } from "./lib.js";
import { Banner } from "./banner.js";
import { Sidebar } from "./sidebar.js";
import { TabBar } from "./tabbar.js";
import { MainArea } from "./main_area.js";

export function Shell() {
  return html`
    <div class="shell">
      <${Banner} />
      <${Sidebar} />
      <div class="workspace">
        <${TabBar} />
        <${MainArea} />
      </div>
    </div>`;
}
