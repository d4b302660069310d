// Saving a source with the version it was read at (PUT /api/files with baseVersion): the
// server refuses with 409 when the file changed on disk meanwhile (an editor, an agent's
// write_file, another tab), and says what is there now. api.js drops an error's body, so
// this one request is made here: the 409's body is what the page offers to reload.
import { ApiError, filePath } from "../api.js";

/** The file changed on disk since it was read: `message` is the server's sentence,
 *  `text`/`version` what is on disk now (both null when the file is gone). */
export class FileConflict extends Error {
  constructor(message, text, version) {
    super(message);
    this.name = "FileConflict";
    this.text = text;
    this.version = version;
  }
}

/** PUT `text` at `path` if it is still at `baseVersion` (null: it must not exist yet;
 *  undefined: no check) → the saved file ({path, text, statements, problems, version});
 *  throws FileConflict on 409 with a current version, ApiError otherwise. */
export async function saveFile(path, text, baseVersion) {
  const body = baseVersion === undefined ? { text } : { text, baseVersion };
  let response;
  try {
    response = await fetch(filePath(path), {
      method: "PUT",
      credentials: "same-origin",
      headers: { Accept: "application/json", "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError(0, `the viewer cannot be reached (${err.message})`);
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (response.status === 409 && data && "version" in data) {
    throw new FileConflict(data.error, data.text, data.version);
  }
  if (!response.ok) {
    const said = data && typeof data.error === "string" ? data.error : response.statusText;
    throw new ApiError(response.status, said || `HTTP ${response.status}`);
  }
  return data;
}
