// The page's entry: drop the token from the address bar (the cookie holds it now),
// reopen the tabs the address names, render the shell.
import { html, render } from "./lib.js";
import { restoreFromHash } from "./tabs.js";
import { Shell } from "./shell.js";

function dropToken() {
  const url = new URL(location.href);
  if (!url.searchParams.has("token")) return;
  url.searchParams.delete("token");
  history.replaceState(null, "", `${url.pathname}${url.search}${url.hash}`);
}

dropToken();
restoreFromHash();
window.addEventListener("hashchange", () => restoreFromHash());
render(html`<${Shell} />`, document.getElementById("app"));
