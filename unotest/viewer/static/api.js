// The page's only way to the server: every HTTP request any module makes is a function
// here (the style guide: no component talks to the server on its own), so the URLs, the
// cookie, the headers and what a refusal means are decided in one place, and a test
// (tests/unotest/test_viewer_client_module.py) keeps `fetch(` out of every other module.
// The /ws and /ws/terminal sockets are not REST: live.js and terminals.js open them.
//
// Same-origin requests carry the viewer's HttpOnly cookie (set when the page was opened
// with ?token=), so no module ever sees or sends the token itself. A 401 or 403 on api()
// means the viewer no longer takes this page's cookie (restarted with a new token): the
// callbacks given to onRefused are told (live.js stops reconnecting and the banner says
// what to do). live.js registers itself there rather than being imported here, so the
// two modules do not import each other.

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

/** The file changed on disk since it was read (saveFile's 409): `message` is the
 *  server's sentence, `text`/`version` what is on disk now (both null when it is gone). */
export class FileConflict extends Error {
  constructor(message, text, version) {
    super(message);
    this.name = "FileConflict";
    this.text = text;
    this.version = version;
  }
}

export function runFileUrl(runId, name) {
  return `/api/runs/${encodeURIComponent(runId)}/files/${encodeURIComponent(name)}`;
}

export function filePath(path) {
  // Project-relative paths keep their slashes; each segment is escaped.
  return `/api/files/${path.split("/").map(encodeURIComponent).join("/")}`;
}

const refusedListeners = new Set();

/** fn() whenever api() gets a 401/403; returns the function that unregisters it. */
export function onRefused(fn) {
  refusedListeners.add(fn);
  return () => refusedListeners.delete(fn);
}

function refused() {
  for (const fn of [...refusedListeners]) fn();
}

async function send(path, init) {
  try {
    return await fetch(path, init);
  } catch (err) {
    throw new ApiError(0, `the viewer cannot be reached (${err.message})`);
  }
}

/** An error's status and sentence: the server's `error`, else the status text. */
function failure(response, data) {
  const said = data && typeof data.error === "string" ? data.error : response.statusText;
  return new ApiError(response.status, said || `HTTP ${response.status}`);
}

export async function api(path, { method = "GET", body } = {}) {
  const init = { method, headers: { Accept: "application/json" }, credentials: "same-origin" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await send(path, init);
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (response.status === 401 || response.status === 403) refused();
  if (!response.ok) throw failure(response, data);
  return data;
}

/** A page of runs, newest first: GET /api/runs with `params` ({limit, before, scenario,
 *  status}; empty ones are left out) → {runs, next}, `next` the `before` of the page
 *  after it (the answer's Link header names that page), null on the last one. */
export async function runsPage(params = {}) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") query.set(key, String(value));
  }
  const response = await send(`/api/runs?${query}`, {
    headers: { Accept: "application/json" },
    credentials: "same-origin",
  });
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (response.status === 401 || response.status === 403) refused();
  if (!response.ok) throw failure(response, data);
  const link = /<([^>]*)>\s*;\s*rel="next"/.exec(response.headers.get("Link") || "");
  const next = link ? new URL(link[1], window.location.href).searchParams.get("before") : null;
  return { runs: data || [], next };
}

/** PUT `text` at `path` if it is still at `baseVersion` (null: it must not exist yet;
 *  undefined: no check) → the saved file ({path, text, statements, problems, version});
 *  throws FileConflict on 409 with a current version, ApiError otherwise. Not api():
 *  the 409's body (what is on disk now) is what the page offers to reload. */
export async function saveFile(path, text, baseVersion) {
  const body = baseVersion === undefined ? { text } : { text, baseVersion };
  const response = await send(filePath(path), {
    method: "PUT",
    credentials: "same-origin",
    headers: { Accept: "application/json", "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (response.status === 409 && data && "version" in data) {
    throw new FileConflict(data.error, data.text, data.version);
  }
  if (!response.ok) throw failure(response, data);
  return data;
}

// Run files are read as they are, with no Accept header and no onRefused call.
function runFile(runId, name) {
  return fetch(runFileUrl(runId, name), { credentials: "same-origin" });
}

/** A run's file as text, or null when the server does not give it (missing, not yet
 *  written). A failed request (the viewer cannot be reached) rejects with fetch's error. */
export async function runFileTextOrNull(runId, name) {
  const response = await runFile(runId, name);
  if (!response.ok) return null;
  return response.text();
}

/** A run's file as text; an answer other than 2xx throws ApiError(status, "NAME: HTTP
 *  N"), a failed request rejects with fetch's error. */
export async function runFileText(runId, name) {
  const response = await runFile(runId, name);
  if (!response.ok) throw new ApiError(response.status, `${name}: HTTP ${response.status}`);
  return response.text();
}

/** The status of a plain GET /api/project, or 0 when the viewer cannot be reached (down,
 *  or moved to another port). How live.js learns why its socket closed: a browser does
 *  not tell why a handshake failed, the REST side does. Tells no onRefused callback. */
export function viewerStatus() {
  return fetch("/api/project", { credentials: "same-origin", headers: { Accept: "application/json" } })
    .then((response) => response.status, () => 0);
}
