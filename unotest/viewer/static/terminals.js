// Terminal tabs and the page's one /ws/terminal socket: every terminal's frames share it,
// each under the id the page chose ({"event": "terminal", "data": message}).
import { openTab } from "./tabs.js";

const EVENT = "terminal";
const handlers = new Map();
let socket = null;
let queue = [];
let counter = 0;

function dispatch(raw) {
  let frame;
  try {
    frame = JSON.parse(raw);
  } catch {
    return;
  }
  if (frame?.event !== EVENT || !frame.data) return;
  const message = frame.data;
  const handler = handlers.get(message.id);
  if (handler) handler(message);
  else if (message.type === "error") console.warn("terminal:", message.message);
}

function ensureSocket() {
  if (socket) return socket;
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws/terminal`);
  socket = ws;
  ws.onopen = () => {
    for (const frame of queue) ws.send(frame);
    queue = [];
  };
  ws.onmessage = (event) => dispatch(event.data);
  ws.onclose = () => {
    if (socket === ws) socket = null;
    queue = [];
    // The server ended every terminal of this socket: tell each open one.
    for (const handler of [...handlers.values()]) handler({ type: "disconnected" });
  };
  ws.onerror = () => {};
  return ws;
}

export function sendTerminal(message) {
  const frame = JSON.stringify({ event: EVENT, data: message });
  const ws = ensureSocket();
  if (ws.readyState === WebSocket.OPEN) ws.send(frame);
  else queue.push(frame);
}

// handler(message) gets this terminal's output, exit, error (and "disconnected").
export function attachTerminal(id, handler) {
  handlers.set(id, handler);
  ensureSocket();
  return () => handlers.delete(id);
}

export function openTerminal(kind) {
  counter += 1;
  openTab({ kind: "terminal", id: `t${counter}`, term: kind });
}
