// "Reconnecting…" while /ws is down (after it was up once): what the page shows then may
// be stale; once back, every part of the page refetches (live.js onResync). When no
// viewer has answered for a while (live.js isGone: stopped, or restarted on another port
// because its last one was taken), it says so and what to do, while the page goes on
// trying in case it comes back at the same address.
import { html, useEffect, useState } from "./lib.js";
// When the viewer refuses the page (restarted: a new token, maybe a new port), it says so
// instead, for good: no retry can succeed with this page's cookie.
import { isConnected, isGone, isRefused, onConnectionChange } from "./live.js";

export function Banner() {
  const [connected, setConnected] = useState(isConnected());
  const [wasUp, setWasUp] = useState(isConnected());
  const [refused, setRefused] = useState(isRefused());
  const [gone, setGone] = useState(isGone());
  useEffect(() => onConnectionChange((up) => {
    setConnected(up);
    setRefused(isRefused());
    setGone(isGone());
    if (up) setWasUp(true);
  }), []);
  if (refused) {
    return html`<div class="banner refused" role="alert">The viewer was restarted with a new token, or this page's token is no longer valid: open the URL <code>unotest view</code> printed (run <code>unotest view</code> again to print it).</div>`;
  }
  if (connected || !wasUp) return null;
  if (gone) {
    return html`<div class="banner gone" role="alert">The viewer stopped or moved: run <code>unotest view</code> and open the URL it prints.</div>`;
  }
  return html`<div class="banner reconnecting" role="alert">
    Reconnecting to the viewer… what you see may be out of date.</div>`;
}
