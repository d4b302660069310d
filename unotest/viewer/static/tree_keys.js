// Keyboard moves in a role=tree (WAI-ARIA tree pattern): Up/Down between visible items,
// Right/Left open/close a folder or move into/out of it, Home/End, Enter/Space activate.
export function onTreeKey(event) {
  const tree = event.currentTarget;
  const items = [...tree.querySelectorAll('[role="treeitem"]')].filter((el) => el.offsetParent !== null);
  const current = document.activeElement?.closest('[role="treeitem"]');
  const index = items.indexOf(current);
  const focus = (el) => {
    if (!el) return;
    for (const item of items) item.tabIndex = -1;
    el.tabIndex = 0;
    el.focus();
  };
  const expanded = current?.getAttribute("aria-expanded");
  switch (event.key) {
    case "ArrowDown": focus(items[index + 1]); break;
    case "ArrowUp": focus(items[Math.max(index - 1, 0)]); break;
    case "Home": focus(items[0]); break;
    case "End": focus(items[items.length - 1]); break;
    case "ArrowRight":
      if (expanded === "false") current.click();
      else if (expanded === "true") focus(items[index + 1]);
      break;
    case "ArrowLeft":
      if (expanded === "true") current.click();
      else focus(current?.parentElement?.closest('[role="treeitem"]'));
      break;
    case "Enter":
    case " ":
      current?.click();
      break;
    default:
      return;
  }
  event.preventDefault();
}
