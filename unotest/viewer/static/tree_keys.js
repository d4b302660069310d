// Keyboard moves in a role=tree (WAI-ARIA tree pattern) over the rows of a virtualised
// tree, not the DOM (most rows are not in it): Up/Down between shown rows, PageUp/
// PageDown by a screenful, Right/Left open/close a folder or move into/out of it,
// Home/End, Enter/Space activate. No DOM here: the tree applies the answer.
//
// rows: flattenTree's ({kind, expanded, parent}); index: the focused row's (-1: none);
// page: rows in a screenful. Answers {focus: index} (move there), {click: true} (do what
// a click on the focused row does: open or close a folder, open a scenario) or null
// (not a key of the tree's).
export function treeKeyAction(key, rows, index, page = 10) {
  if (!rows.length) return null;
  const row = rows[index];
  const last = rows.length - 1;
  const clamp = (i) => ({ focus: Math.min(Math.max(i, 0), last) });
  switch (key) {
    case "ArrowDown": return clamp(index + 1);
    case "ArrowUp": return clamp(index - 1);
    case "PageDown": return clamp(index + page);
    case "PageUp": return clamp(index - page);
    case "Home": return { focus: 0 };
    case "End": return { focus: last };
    case "ArrowRight":
      if (row?.kind === "folder") return row.expanded ? clamp(index + 1) : { click: true };
      return row ? { focus: index } : null;
    case "ArrowLeft":
      if (row?.kind === "folder" && row.expanded) return { click: true };
      return row && row.parent >= 0 ? { focus: row.parent } : row ? { focus: index } : null;
    case "Enter":
    case " ":
      return row ? { click: true } : null;
    default:
      return null;
  }
}
