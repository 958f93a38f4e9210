// Keyed rendering of a list: rows already shown are updated in place and moved only when out of
// place, new ones made, gone ones removed; nothing else is touched (focus and hover stay where they
// are). No DOM of its own: `list` needs only children, insertBefore and removeChild, so Node tests it.

// A render function for `list`: render(items) shows one row per item ({key, ...}) in that order,
// made by make(item) the first time its key is seen and brought up to date by update(row, item).
export function keyedList(list, make, update) {
  const rows = new Map(); // key -> row
  return function render(items) {
    const keys = new Set(items.map((i) => i.key));
    for (const [key, row] of rows) {
      if (!keys.has(key)) { list.removeChild(row); rows.delete(key); }
    }
    items.forEach((item, i) => {
      let row = rows.get(item.key);
      if (!row) { row = make(item); rows.set(item.key, row); }
      update(row, item);
      if (list.children[i] !== row) list.insertBefore(row, list.children[i] || null);
    });
  };
}

// Sets a node's text only when it changed (no needless layout, no lost selection).
export function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}
