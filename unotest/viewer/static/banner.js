// "Reconnecting…" while /ws is down (after it was up once): what the page shows then may
// be stale; once back, every part of the page refetches (live.js onResync).
import { html, useEffect, useState } from "./lib.js";
import { isConnected, onConnectionChange } from "./live.js";

export function Banner() {
  const [connected, setConnected] = useState(isConnected());
  const [wasUp, setWasUp] = useState(isConnected());
  useEffect(() => onConnectionChange((up) => {
    setConnected(up);
    if (up) setWasUp(true);
  }), []);
  if (connected || !wasUp) return null;
  return html`<div class="banner reconnecting" role="alert">
    Reconnecting to the viewer… what you see may be out of date.</div>`;
}
