// The one place the page imports Preact and htm from: every module builds its markup
// with `html` and its state with these hooks, so swapping a vendored file touches one line.
import { h } from "preact";
import htm from "htm";

export { h, render } from "preact";
export {
  useState, useEffect, useRef, useMemo, useCallback, useLayoutEffect,
} from "preact/hooks";
export const html = htm.bind(h);
