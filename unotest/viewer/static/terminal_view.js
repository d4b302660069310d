// One terminal tab: xterm.js on a PTY of /ws/terminal. The fit addon sizes it to its
// panel, and every size change (window, panel, tab shown again) becomes a resize frame.
import { Terminal } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import { html, useEffect, useRef } from "./lib.js";
import { attachTerminal, sendTerminal } from "./terminals.js";
import { closeTab } from "./tabs.js";

function open(el, tab) {
  const term = new Terminal({ cursorBlink: true, convertEol: false, fontSize: 13, scrollback: 5000 });
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.open(el);
  const safeFit = () => {
    if (el.offsetParent === null) return; // hidden: no size to fit
    try {
      fit.fit();
    } catch {
      // xterm not measurable yet; the next resize fits it
    }
  };
  safeFit();
  let spawned = false;
  const detach = attachTerminal(tab.id, (message) => {
    if (message.type === "output") term.write(message.data);
    else if (message.type === "exit") term.write(`\r\n[process exited with code ${message.exitCode}]\r\n`);
    else if (message.type === "error") term.write(`\r\n\x1b[31m${message.message}\x1b[0m\r\n`);
    else if (message.type === "disconnected") term.write("\r\n[the viewer closed this terminal]\r\n");
  });
  const typed = term.onData((data) => sendTerminal({ type: "data", id: tab.id, data }));
  const sized = term.onResize(({ cols, rows }) => {
    if (spawned) sendTerminal({ type: "resize", id: tab.id, cols, rows });
  });
  sendTerminal({ type: "spawn", id: tab.id, kind: tab.term, cols: term.cols, rows: term.rows });
  spawned = true;
  const observer = new ResizeObserver(() => safeFit());
  observer.observe(el);
  return {
    term,
    fit: safeFit,
    close() {
      observer.disconnect();
      typed.dispose();
      sized.dispose();
      sendTerminal({ type: "close", id: tab.id });
      detach();
      term.dispose();
    },
  };
}

export function TerminalView({ tab, active }) {
  const box = useRef(null);
  const session = useRef(null);
  useEffect(() => {
    session.current = open(box.current, tab);
    return () => session.current.close();
  }, [tab.id]);
  useEffect(() => {
    if (active && session.current) {
      session.current.fit();
      session.current.term.focus();
    }
  }, [active]);
  return html`<section class="terminal" aria-label=${`Terminal ${tab.id.replace(/^t/, "")} (${tab.term})`}>
    <div class="terminal-bar"><span>${tab.term} terminal</span>
      <button onClick=${() => closeTab(tab)}>Close terminal</button></div>
    <div class="terminal-screen" ref=${box}></div>
  </section>`;
}
