// The page's one /ws connection: every WsMessage to every listener, a reconnect with
// backoff when it drops, and a "resync" after each reconnect (nothing is replayed by the
// server, so views refetch their state over REST then).

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
const STEADY_MS = 2000; // a connection this old resets the backoff

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
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
  const ws = new WebSocket(url);
  socket = ws;
  ws.onopen = () => {
    if (socket !== ws) return;
    steady = setTimeout(() => { delay = 250; }, STEADY_MS);
    const reconnect = everConnected;
    everConnected = true;
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
    schedule();
  };
  ws.onerror = () => {}; // onclose follows and reconnects
}

function schedule() {
  if (timer !== null) return;
  timer = setTimeout(connect, delay);
  delay = Math.min(delay * 2, 5000);
}

function ensure() {
  if (socket === null && timer === null) connect();
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
