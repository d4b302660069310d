// "Open trace": a run's trace.zip in Playwright's own trace viewer, which this viewer
// serves under /trace/ (unotest/viewer/routes_trace.py), in a browser tab of its own.
// The trace is in the run directory with `trace: on`, in the failure bundle when the
// run failed (either way /api/runs/<id>/files/trace.zip serves it); the trace viewer's
// service worker fetches it from this origin, with the page's cookie.
import { html } from "../lib.js";
import { runFileUrl } from "../api.js";

const TRACE = "trace.zip";

/** Where the run's trace is (its directory, or its failure bundle's path), or null. */
export function traceOf(detail) {
  if (!detail) return null;
  if ((detail.files || []).includes(TRACE)) return "the run directory";
  const bundle = detail.bundle;
  return bundle && (bundle.files || []).includes(TRACE) ? bundle.path : null;
}

/** The trace viewer's address, loaded with the run's trace. */
export function traceViewerUrl(runId) {
  return `/trace/index.html?trace=${encodeURIComponent(runFileUrl(runId, TRACE))}`;
}

export function TraceLink({ runId, detail }) {
  const where = traceOf(detail);
  if (!where) return null;
  return html`<a class="trace-link" href=${traceViewerUrl(runId)} target="_blank" rel="noopener noreferrer"
    title=${`${TRACE} from ${where}, in Playwright's trace viewer (a new tab)`}>Open trace</a>`;
}
