// The open tabs and the active one, mirrored in the address bar's hash
// (#open=scenario:unotest/e2e/smoke.test.js&open=runs&active=runs), so a reload or a
// shared link opens the same tabs. Protocol tabs (TabKind) and the shell's own pages
// (runs, env) are restored; terminals are not (their processes end with the page).
import { useEffect, useState } from "./lib.js";

export const PROTOCOL_KINDS = ["scenario", "helper", "collection", "scenario-run", "collection-run"];
const RESTORABLE = [...PROTOCOL_KINDS, "runs", "env"];

let tabs = [];
let activeKey = null;
const listeners = new Set();

export function tabKey(tab) {
  const ref = tab.path ?? tab.runId ?? tab.id;
  return ref === undefined ? tab.kind : `${tab.kind}:${ref}`;
}

// Readable in the address bar: a key's "/" and ":" stay as they are.
function encodeKey(key) {
  return encodeURIComponent(key).replace(/%2F/g, "/").replace(/%3A/g, ":");
}

function fromKey(key) {
  const at = key.indexOf(":");
  const kind = at < 0 ? key : key.slice(0, at);
  const ref = at < 0 ? "" : key.slice(at + 1);
  if (!RESTORABLE.includes(kind)) return null;
  if (kind === "runs" || kind === "env") return { kind };
  if (!ref) return null;
  return kind.endsWith("-run") ? { kind, runId: ref } : { kind, path: ref };
}

function writeHash() {
  const parts = tabs.filter((t) => RESTORABLE.includes(t.kind)).map((t) => `open=${encodeKey(tabKey(t))}`);
  if (activeKey && RESTORABLE.includes(activeKey.split(":")[0])) parts.push(`active=${encodeKey(activeKey)}`);
  const hash = parts.join("&");
  const url = `${location.pathname}${hash ? `#${hash}` : ""}`;
  if (url !== `${location.pathname}${location.hash}`) history.replaceState(null, "", url);
}

function changed() {
  writeHash();
  const snapshot = { tabs: [...tabs], activeKey };
  for (const fn of [...listeners]) fn(snapshot);
}

// A tab already open is brought forward with what the new one says of it (the case of a
// parameterised scenario's file that a click chose).
export function openTab(tab) {
  const key = tabKey(tab);
  if (!tabs.some((t) => tabKey(t) === key)) tabs = [...tabs, tab];
  else tabs = tabs.map((t) => (tabKey(t) === key ? { ...t, ...tab } : t));
  activeKey = key;
  changed();
}

// `tab` in `old`'s place (a scenario's next run in its last run's tab), active; where
// `old` is not open, `tab` opens as openTab would.
export function replaceTab(old, tab) {
  const oldKey = tabKey(old);
  const key = tabKey(tab);
  if (!tabs.some((t) => tabKey(t) === oldKey) || tabs.some((t) => tabKey(t) === key)) {
    openTab(tab);
    return;
  }
  tabs = tabs.map((t) => (tabKey(t) === oldKey ? tab : t));
  activeKey = key;
  changed();
}

export function closeTab(tab) {
  const key = tabKey(tab);
  const index = tabs.findIndex((t) => tabKey(t) === key);
  if (index < 0) return;
  tabs = tabs.filter((t) => tabKey(t) !== key);
  if (activeKey === key) {
    const next = tabs[Math.min(index, tabs.length - 1)];
    activeKey = next ? tabKey(next) : null;
  }
  changed();
}

export function activateTab(tab) {
  openTab(tab);
}

export function restoreFromHash(hash = location.hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const terminals = tabs.filter((t) => !RESTORABLE.includes(t.kind)); // their PTYs live on
  tabs = [...params.getAll("open").map(fromKey).filter(Boolean), ...terminals];
  const active = params.get("active");
  activeKey = tabs.some((t) => tabKey(t) === active) ? active : (tabs[0] ? tabKey(tabs[0]) : null);
  changed();
}

export function currentTabs() {
  return { tabs: [...tabs], activeKey };
}

// A Preact hook: { tabs, activeKey }, re-rendered on every change.
export function useTabs() {
  const [state, setState] = useState(currentTabs);
  useEffect(() => {
    listeners.add(setState);
    setState(currentTabs());
    return () => listeners.delete(setState);
  }, []);
  return state;
}
