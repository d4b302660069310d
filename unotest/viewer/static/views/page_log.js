// A run's Network and Console messages regions: the requests its page made and what it
// logged (console messages, page errors, answered dialogs). The runner appends them to
// network.jsonl / console.jsonl in the run directory as they happen, passing runs too;
// this reads them through GET /api/runs/<runId>/page-log from where the last read
// ended: at once, after each step or end the run reports on /ws (at most one read in
// flight, a few a second at most), every second while the run goes (its page talks
// during a pause or a long wait too), and from the start again after a reconnect. Each
// region has its own filter; a failed request and an error say so in words and a mark,
// besides their colour.
import { html, useCallback, useEffect, useRef, useState } from "../lib.js";
import { api } from "../api.js";
import { afterFirstConnect, onMessage, onResync } from "../live.js";
import { useFollowTail } from "./follow.js";

const KINDS = ["network", "console"];
const POLL_MS = 1000;
const MIN_GAP_MS = 250;
const MAX_SHOWN = 500;

function empty() {
  return {
    network: [], console: [], next: { network: 0, console: 0 },
    capped: { network: null, console: null }, recorded: null,
  };
}

/** The run's page log, read on from its last offsets whenever `read()` is scheduled. */
function usePageLog(runId, live) {
  const state = useRef(empty());
  const [, setVersion] = useState(0);
  const busy = useRef(false);
  const again = useRef(false);
  const generation = useRef(0);
  const timer = useRef(null);
  const last = useRef(0);
  // A read in flight when the tab moves to another run goes on with the run shown now.
  const shownRun = useRef(runId);
  shownRun.current = runId;

  const read = useCallback(async () => {
    if (busy.current) {
      again.current = true;
      return;
    }
    busy.current = true;
    try {
      do {
        again.current = false;
        last.current = Date.now();
        const ours = generation.current;
        const s = state.current;
        const data = await api(
          `/api/runs/${shownRun.current}/page-log?network=${s.next.network}&console=${s.next.console}`);
        if (ours !== generation.current) { // reset meanwhile: read from the start
          again.current = true;
          continue;
        }
        let changed = false;
        for (const kind of KINDS) {
          const chunk = data[kind];
          if (chunk.entries.length) {
            s[kind] = s[kind].concat(chunk.entries);
            changed = true;
          }
          s.next[kind] = chunk.next;
          if (chunk.capped && !s.capped[kind]) {
            s.capped[kind] = chunk.capped;
            changed = true;
          }
          if (chunk.more) again.current = true;
        }
        const recorded = data.network.recorded || data.console.recorded;
        if (recorded !== s.recorded) {
          s.recorded = recorded;
          changed = true;
        }
        if (changed) setVersion((n) => n + 1);
      } while (again.current);
    } catch {
      // the viewer is away: the next step, tick or reconnect reads again
    } finally {
      busy.current = false;
    }
  }, []);

  // A busy run reports many steps a second: one read per MIN_GAP_MS is enough.
  const schedule = useCallback(() => {
    if (timer.current !== null) return;
    const wait = Math.max(0, last.current + MIN_GAP_MS - Date.now());
    timer.current = setTimeout(() => {
      timer.current = null;
      read();
    }, wait);
  }, [read]);

  useEffect(() => {
    const restart = () => {
      generation.current++;
      state.current = empty();
      setVersion((n) => n + 1);
      read();
    };
    restart();
    const offResync = onResync(restart);
    const offFirst = afterFirstConnect(schedule);
    const offMessage = onMessage((msg) => {
      if (msg.runId === runId && (msg.kind === "fs:run-step" || msg.kind === "fs:run-finished")) schedule();
    });
    return () => {
      offResync();
      offFirst();
      offMessage();
      clearTimeout(timer.current);
      timer.current = null;
    };
  }, [runId]);

  useEffect(() => {
    schedule(); // once more when the run ends: what its last moment wrote
    if (!live) return undefined;
    const every = setInterval(schedule, POLL_MS);
    return () => clearInterval(every);
  }, [live, schedule]);

  return state.current;
}

export function requestFailed(r) {
  return Boolean(r.failure) || (typeof r.status === "number" && r.status >= 400);
}

export function consoleError(m) {
  return m.type === "error" || m.type === "pageerror";
}

function ms(value) {
  return typeof value === "number" ? `${Math.round(value)} ms` : "—";
}

function bytes(value) {
  if (typeof value !== "number") return "—";
  if (value < 1024) return `${value} B`;
  if (value < 1024 * 1024) return `${(value / 1024).toFixed(1)} kB`;
  return `${(value / 1024 / 1024).toFixed(1)} MB`;
}

/** The filter box and what it keeps: every entry whose words hold the text (any case). */
function useFilter(entries, words) {
  const [text, setText] = useState("");
  const needle = text.trim().toLowerCase();
  const kept = needle ? entries.filter((e) => words(e).toLowerCase().includes(needle)) : entries;
  return { text, setText, kept };
}

function Shown({ kept, total, noun }) {
  if (kept.length > MAX_SHOWN) {
    return html`<p class="muted page-log-note">The last ${MAX_SHOWN} of ${kept.length} ${noun} are shown.</p>`;
  }
  if (kept.length < total) return html`<p class="muted page-log-note">${kept.length} of ${total} ${noun} match.</p>`;
  return null;
}

function Capped({ capped, noun }) {
  if (!capped) return null;
  const bound = capped.limit === "bytes" ? "its size bound" : "its line bound";
  return html`<p class="page-log-note page-log-capped" role="note">Capped: the run recorded its first
    ${capped.kept} ${noun} and then stopped at ${bound}; later ones are not shown.</p>`;
}

function Empty({ log, live, noun }) {
  if (log.recorded === false && !live) return html`<p class="muted">This run recorded no ${noun} (it is older than page logs).</p>`;
  return html`<p class="muted">${live ? `No ${noun} yet.` : `No ${noun}.`}</p>`;
}

const requestWords = (r) => [r.method, r.url, r.status, r.failure, r.routed, requestFailed(r) ? "failed" : ""].join(" ");

function NetworkRegion({ log, live }) {
  const entries = log.network;
  const { text, setText, kept } = useFilter(entries, requestWords);
  const shown = kept.slice(-MAX_SHOWN);
  const follow = useFollowTail(shown.length);
  const failed = entries.filter(requestFailed).length;
  return html`<section class="pane page-log" role="region" aria-label="Network">
    <div class="pane-title">Network <span class="page-log-count">${entries.length} ${entries.length === 1 ? "request" : "requests"}${
      failed ? `, ${failed} failed` : ""}</span></div>
    <input type="search" class="page-log-filter" aria-label="Filter requests" placeholder="Filter requests"
      value=${text} onInput=${(e) => setText(e.currentTarget.value)} />
    ${entries.length === 0 ? html`<${Empty} log=${log} live=${live} noun="requests" />` : html`
      <div class="page-log-scroll" tabindex="0" ...${follow}>
        <table class="page-log-table" aria-label="Requests">
          <thead><tr><th scope="col">Method</th><th scope="col">Status</th><th scope="col">URL</th>
            <th scope="col">Time</th><th scope="col">Size</th></tr></thead>
          <tbody>${shown.map((r, i) => {
            const bad = requestFailed(r);
            return html`<tr key=${i} class=${bad ? "pl-failed" : ""}>
              <td>${r.method}</td>
              <td>${bad && html`<span class="pl-flag">✗ failed </span>`}${r.failure || (r.status ?? "—")}${
                r.routed && html` <span class="pl-routed">(${r.routed} by a route)</span>`}</td>
              <td class="pl-url" title=${r.url}>${r.url}</td>
              <td>${ms(r.durationMs)}</td>
              <td>${bytes(r.size)}</td>
            </tr>`;
          })}</tbody>
        </table>
      </div>`}
    <${Shown} kept=${kept} total=${entries.length} noun="requests" />
    <${Capped} capped=${log.capped.network} noun="requests" />
  </section>`;
}

const messageWords = (m) => [m.type, m.text, m.url, consoleError(m) ? "error" : ""].join(" ");

function ConsoleRegion({ log, live }) {
  const entries = log.console;
  const { text, setText, kept } = useFilter(entries, messageWords);
  const shown = kept.slice(-MAX_SHOWN);
  const follow = useFollowTail(shown.length);
  const errors = entries.filter(consoleError).length;
  return html`<section class="pane page-log" role="region" aria-label="Console messages">
    <div class="pane-title">Console messages <span class="page-log-count">${entries.length} ${entries.length === 1 ? "message" : "messages"}${
      errors ? `, ${errors} ${errors === 1 ? "error" : "errors"}` : ""}</span></div>
    <input type="search" class="page-log-filter" aria-label="Filter console messages"
      placeholder="Filter console messages" value=${text} onInput=${(e) => setText(e.currentTarget.value)} />
    ${entries.length === 0 ? html`<${Empty} log=${log} live=${live} noun="console messages" />` : html`
      <ol class="page-log-list page-log-scroll" aria-label="Messages" tabindex="0" ...${follow}>${shown.map((m, i) => {
        const bad = consoleError(m);
        return html`<li key=${i} class=${bad ? "pl-error" : `pl-${m.type}`}>
          <span class="pl-type">${bad ? "✗ " : ""}${m.type}</span>
          <span class="pl-text">${m.text}</span>
          ${m.url && html`<span class="muted pl-place">${m.url}${m.line != null ? `:${m.line}` : ""}</span>`}
        </li>`;
      })}</ol>`}
    <${Shown} kept=${kept} total=${entries.length} noun="messages" />
    <${Capped} capped=${log.capped.console} noun="messages" />
  </section>`;
}

/** Both regions of one run; `live` while it runs (read every second besides its steps). */
export function PageLog({ runId, live }) {
  const log = usePageLog(runId, live);
  return html`<div class="page-logs">
    <${NetworkRegion} log=${log} live=${live} />
    <${ConsoleRegion} log=${log} live=${live} />
  </div>`;
}
