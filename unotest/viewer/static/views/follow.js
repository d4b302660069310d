// Following the end of a scrolling list as it grows (the Output pane's logs), unless the
// person scrolled up: only a scroll within a moment of their wheel, key, pointer or touch
// stops the following, and scrolling back to the end starts it again. (Scroll events are
// asynchronous and the browser moves scrollTop itself as a list grows, so a position
// alone cannot tell a person's scroll from ours; the Steps list does the same.)
import { useLayoutEffect, useRef } from "../lib.js";

const NEAR_END_PX = 24;

/** Props for the scrolling element: `ref`, `onScroll` and the person's own events.
 *  `size` is what grows (a line count): at each change the element is scrolled to its
 *  end while following. */
export function useFollowTail(size) {
  const box = useRef(null);
  const follow = useRef(true);
  const touched = useRef(0);
  const touch = () => {
    touched.current = Date.now();
  };
  const onScroll = () => {
    const el = box.current;
    if (!el) return;
    if (el.scrollTop + el.clientHeight >= el.scrollHeight - NEAR_END_PX) follow.current = true;
    else if (Date.now() - touched.current < 1000) follow.current = false;
  };
  // A wheel or a key that moves up stops the following at once: a line arriving before
  // the browser's scroll event would otherwise pull the view back down first.
  const onWheel = (event) => {
    touch();
    if (event.deltaY < 0) follow.current = false;
  };
  const onKeyDown = (event) => {
    touch();
    if (["ArrowUp", "PageUp", "Home"].includes(event.key)) follow.current = false;
  };
  useLayoutEffect(() => {
    const el = box.current;
    if (el && follow.current) el.scrollTop = el.scrollHeight;
  }, [size]);
  return { ref: box, onScroll, onWheel, onKeyDown, onPointerDown: touch, onTouchMove: touch };
}
