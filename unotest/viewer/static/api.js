// REST on the viewer: JSON in, JSON out, the server's one-sentence error as ApiError.
// Same-origin fetches carry the viewer's HttpOnly cookie (set when the page was opened
// with ?token=), so no module ever sees or sends the token itself. A 401 or 403 means
// the viewer no longer takes this page's cookie (restarted with a new token): live.js is
// told, stops reconnecting and the banner says what to do.
import { markRefused } from "./live.js";

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

export async function api(path, { method = "GET", body } = {}) {
  const init = { method, headers: { Accept: "application/json" }, credentials: "same-origin" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    throw new ApiError(0, `the viewer cannot be reached (${err.message})`);
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (response.status === 401 || response.status === 403) markRefused();
  if (!response.ok) {
    const said = data && typeof data.error === "string" ? data.error : response.statusText;
    throw new ApiError(response.status, said || `HTTP ${response.status}`);
  }
  return data;
}

export function runFileUrl(runId, name) {
  return `/api/runs/${encodeURIComponent(runId)}/files/${encodeURIComponent(name)}`;
}

export function filePath(path) {
  // Project-relative paths keep their slashes; each segment is escaped.
  return `/api/files/${path.split("/").map(encodeURIComponent).join("/")}`;
}
