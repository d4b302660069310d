// The page's one /ws connection: every WsMessage to every listener, a reconnect with
// backoff when it drops, and a "resync" after each reconnect (nothing is replayed by the
// server, so views refetch their state over REST then). When the viewer refuses the
// page (401/403: it was restarted with a new token, or the token is no longer valid),
// retrying cannot help: the page stops and says so (`isRefused`); api.js tells it so
// through onRefused, registered below. When the viewer cannot be reached at all for
// GONE_AFTER tries in a row (stopped, or restarted on another port: a restarted
// `unotest view` takes its last port again when it is free, so usually it comes back
// here), the page says so (`isGone`) and goes on trying every 5 s.
import { onRefused, viewerStatus } from "./api.js";

const messageListeners = new Set();
const resyncListeners = new Set();
const firstOpenListeners = new Set();
const stateListeners = new Set();
let socket = null;
let connected = false;
let everConnected = false;
let delay = 250;
let timer = null;
let steady = null;
let refused = false;
let failures = 0; // tries in a row that found no viewer at all
const STEADY_MS = 2000; // a connection this old resets the backoff
const GONE_AFTER = 6; // 250 ms + 0.5 + 1 + 2 + 4 + 5 s: about 13 s without a viewer

function call(listeners, arg) {
  for (const fn of [...listeners]) {
    try {
      fn(arg);
    } catch (err) {
      // A listener's bug must not stop the others nor the socket: show it, keep going.
      console.warn("unotest live listener failed:", err);
    }
  }
}

function setConnected(value) {
  if (connected === value) return;
  connected = value;
  call(stateListeners, value);
}

function connect() {
  timer = null;
  if (refused) return;
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
  const ws = new WebSocket(url);
  socket = ws;
  ws.onopen = () => {
    if (socket !== ws) return;
    steady = setTimeout(() => { delay = 250; }, STEADY_MS);
    const reconnect = everConnected;
    everConnected = true;
    failures = 0;
    setConnected(true);
    if (reconnect) call(resyncListeners, undefined);
    else {
      const first = [...firstOpenListeners];
      firstOpenListeners.clear();
      call(new Set(first), undefined);
    }
  };
  ws.onmessage = (event) => {
    let message;
    try {
      message = JSON.parse(event.data);
    } catch {
      return;
    }
    call(messageListeners, message);
  };
  ws.onclose = () => {
    if (socket !== ws) return;
    socket = null;
    clearTimeout(steady);
    setConnected(false);
    // A browser does not tell why a handshake failed: ask the REST side, which does.
    viewerStatus().then((status) => {
      if (status === 401 || status === 403) {
        markRefused();
        return;
      }
      // 0: down or moved to another port, it may come back. Anything else answered: the
      // viewer is there (its socket was closed for falling behind, or it is stopping).
      failures = status === 0 ? failures + 1 : 0;
      if (failures === GONE_AFTER) call(stateListeners, false); // the banner's words change
      schedule();
    });
  };
  ws.onerror = () => {}; // onclose follows and reconnects
}

/** The viewer refused this page (a 401/403 from the socket or the API): stop retrying. */
export function markRefused() {
  if (refused) return;
  refused = true;
  clearTimeout(timer);
  timer = null;
  const ws = socket;
  socket = null;
  if (ws) ws.close();
  connected = false;
  call(stateListeners, false); // even when already down: the banner changes its words
}

onRefused(markRefused);

export function isRefused() {
  return refused;
}

/** No viewer answered the last GONE_AFTER tries: stopped, or moved to another port. */
export function isGone() {
  return !refused && failures >= GONE_AFTER;
}

function schedule() {
  if (timer !== null || refused) return;
  timer = setTimeout(connect, delay);
  delay = Math.min(delay * 2, 5000);
}

function ensure() {
  if (socket === null && timer === null && !refused) connect();
}

export function onMessage(fn) {
  messageListeners.add(fn);
  ensure();
  return () => messageListeners.delete(fn);
}

export function onResync(fn) {
  resyncListeners.add(fn);
  ensure();
  return () => resyncListeners.delete(fn);
}

// A view that read its state over REST before the socket first opened refetches once it
// is open: what changed in between came over no socket (a run's lines appended then
// would be missing until the next reconnect). Nothing when it is open already.
export function afterFirstConnect(fn) {
  if (everConnected) return () => {};
  firstOpenListeners.add(fn);
  ensure();
  return () => firstOpenListeners.delete(fn);
}

export function isConnected() {
  return connected;
}

// The shell's banner: fn(connected) whenever the connection goes up or down.
export function onConnectionChange(fn) {
  stateListeners.add(fn);
  ensure();
  return () => stateListeners.delete(fn);
}

export function start() {
  ensure();
}
