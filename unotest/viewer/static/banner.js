// "Reconnecting…" while /ws is down (after it was up once): what the page shows then may
// be stale; once back, every part of the page refetches (live.js onResync).
import { html, useEffect, useState } from "./lib.js";
// When the viewer refuses the page (restarted: a new token, maybe a new port), it says so
// instead, for good: no retry can succeed with this page's cookie.
import { isConnected, isRefused, onConnectionChange } from "./live.js";

export function Banner() {
  const [connected, setConnected] = useState(isConnected());
  const [wasUp, setWasUp] = useState(isConnected());
  const [refused, setRefused] = useState(isRefused());
  useEffect(() => onConnectionChange((up) => {
    setConnected(up);
    setRefused(isRefused());
    if (up) setWasUp(true);
  }), []);
  if (refused) {
    return html`<div class="banner refused" role="alert">The viewer was restarted, or this page's token is no longer valid: open the URL <code>unotest view</code> printed (run <code>unotest view</code> again to print it).</div>`;
  }
  if (connected || !wasUp) return null;
  return html`<div class="banner reconnecting" role="alert">
    Reconnecting to the viewer… what you see may be out of date.</div>`;
}
