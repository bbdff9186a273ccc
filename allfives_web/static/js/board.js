// Drawing tiles and the layout as SVG: real pips, doubles across the line, the spinner's four arms,
// each open end with its count. The server sends the layout already worked out by the rules core.

const NS = "http://www.w3.org/2000/svg";
export const H = 30; // one half of a tile is H x H
const GAP = 3;
const REACH = 5 * 2 * H; // how far an arm runs along the line before it turns, on a wide table
const COLUMN = 4 * 2 * H; // the most an arm runs after its turn, unless the reach is not reached

const PIP_SPOTS = {
  0: [],
  1: [[0.5, 0.5]],
  2: [[0.27, 0.27], [0.73, 0.73]],
  3: [[0.25, 0.25], [0.5, 0.5], [0.75, 0.75]],
  4: [[0.27, 0.27], [0.73, 0.27], [0.27, 0.73], [0.73, 0.73]],
  5: [[0.25, 0.25], [0.75, 0.25], [0.5, 0.5], [0.25, 0.75], [0.75, 0.75]],
  6: [[0.27, 0.22], [0.27, 0.5], [0.27, 0.78], [0.73, 0.22], [0.73, 0.5], [0.73, 0.78]],
};

export function svg(name, attrs = {}, parent = null) {
  const node = document.createElementNS(NS, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (parent) parent.append(node);
  return node;
}

// "a-b" with the lower half first, whatever order the halves lie in.
export function tileKey(text) {
  const [a, b] = halves(text);
  return `${Math.min(a, b)}-${Math.max(a, b)}`;
}

export function halves(text) {
  const [a, b] = text.split("-").map(Number);
  return [a, b];
}

function pips(parent, value, x, y, size, vertical) {
  for (const [sx, sy] of PIP_SPOTS[value]) {
    const [px, py] = vertical ? [sx, sy] : [sy, sx]; // the six's rows run along the tile
    svg("circle", { class: "pip", cx: x + px * size, cy: y + py * size, r: size * 0.085 }, parent);
  }
}

// A tile centred on (cx, cy): vertical puts `a` on top, horizontal puts `a` on the left.
export function drawTile(parent, a, b, cx, cy, vertical, extraClass = "") {
  const w = vertical ? H : 2 * H;
  const hgt = vertical ? 2 * H : H;
  const g = svg("g", { class: `tile ${extraClass}`.trim(), "data-tile": `${Math.min(a, b)}-${Math.max(a, b)}` }, parent);
  const x = cx - w / 2;
  const y = cy - hgt / 2;
  svg("rect", { class: "face", x, y, width: w, height: hgt, rx: 5, ry: 5 }, g);
  if (vertical) {
    svg("line", { class: "mid", x1: x + 5, y1: cy, x2: x + w - 5, y2: cy }, g);
    pips(g, a, x, y, H, true);
    pips(g, b, x, cy, H, true);
  } else {
    svg("line", { class: "mid", x1: cx, y1: y + 5, x2: cx, y2: y + hgt - 5 }, g);
    pips(g, a, x, y, H, false);
    pips(g, b, cx, y, H, false);
  }
  const title = svg("title", {}, g);
  title.textContent = `${a}-${b}`;
  return g;
}

// The table a drawing is framed in, in drawing units: MIN_W x MIN_H, or the element's own size in pixels
// where it is smaller (a phone), so that a short layout is drawn one unit to the pixel on every screen.
// A board not yet on the page is sized from the window.
const MIN_W = 820;
const MIN_H = 330;
function table(el) {
  const width = el.clientWidth || document.documentElement.clientWidth - 48;
  const height = el.clientHeight || MIN_H;
  return { width: Math.max(8 * H, Math.min(MIN_W, width)), height: Math.max(4 * H, Math.min(MIN_H, height)) };
}

// Frame the drawing, never closer than its table, so a short layout keeps the tiles' size.
function fit(el, box, pad) {
  const room = table(el);
  const width = Math.max(box.maxX - box.minX + 2 * pad, room.width);
  const height = Math.max(box.maxY - box.minY + 2 * pad, room.height);
  const cx = (box.minX + box.maxX) / 2;
  const cy = (box.minY + box.maxY) / 2;
  el.setAttribute("viewBox", `${cx - width / 2} ${cy - height / 2} ${width} ${height}`);
}

function grow(box, cx, cy, w, hgt) {
  box.minX = Math.min(box.minX, cx - w / 2);
  box.maxX = Math.max(box.maxX, cx + w / 2);
  box.minY = Math.min(box.minY, cy - hgt / 2);
  box.maxY = Math.max(box.maxY, cy + hgt / 2);
}

// What an end says, as terminal play writes it: "N 5 (counts 0)", the value to match and what it adds.
export function endText(end) {
  return `${end.slot} ${end.value} (counts ${end.count}${end.double ? " double" : ""})`;
}

// An open end: the value a tile must match in the badge, and the end's text above or below it, running
// away from the tiles (`align`: "start" runs right from the badge, "end" left, "middle" is centred).
function endBadge(parent, end, cx, cy, target, onEnd, below, align) {
  const g = svg("g", { class: `end${target ? " target" : ""}`, "data-slot": end.slot, transform: `translate(${cx},${cy})` }, parent);
  // The badge and its text are one click target: a transparent box over both, so no gap between them misses.
  const width = Math.max(34, 7 * endText(end).length);
  const left = { start: -17, end: 17 - width, middle: -width / 2 }[align];
  svg("rect", { class: "hit", x: Math.min(-17, left), y: below ? -17 : -38, width: Math.max(34, width), height: 55 + 3 }, g);
  svg("circle", { r: 17 }, g);
  const value = svg("text", { class: "value", "text-anchor": "middle", "dominant-baseline": "central", "font-size": 16 }, g);
  value.textContent = end.value;
  const x = { start: -17, end: 17, middle: 0 }[align];
  const label = svg("text", { class: "slot", "text-anchor": align, x, y: below ? 34 : -25, "font-size": 12 }, g);
  label.textContent = endText(end);
  const title = svg("title", {}, g);
  title.textContent = `${end.slot} end: match ${end.value}; it counts ${end.count}${end.double ? " (a double: both halves)" : ""}`;
  if (target) g.addEventListener("click", () => onEnd(end.slot));
  return g;
}

// The layout: the line west to east through the lead, the spinner's N branch above it, S below.
// `targets`: the slots the chosen tile can go to (drawn as clickable badges); `last`: the tile played last.
export function drawLayout(el, layout, { targets = new Set(), onEnd = () => {}, last = null } = {}) {
  el.replaceChildren();
  const box = { minX: 0, maxX: 0, minY: -H, maxY: H };
  if (layout.empty) {
    const note = svg("text", { class: "empty-note", x: 0, y: 0, "text-anchor": "middle", "dominant-baseline": "central" }, el);
    note.textContent = "No tile down yet: the first tile leads";
    grow(box, 0, 0, 420, 60);
    fit(el, box, 20);
    return;
  }
  // The line grows both ways from its centre piece (the spinner, else the lead); an arm longer than
  // REACH turns a corner, east downwards and west upwards, so a long line stays on the table.
  const centre = layout.spinner_index !== null ? layout.spinner_index : layout.lead_index;
  // On a narrow table the arms turn sooner, leaving room for the end badges, so the line fits the width.
  const turnAt = Math.max(2 * 2 * H, Math.min(REACH, table(el).width / 2 - 2 * H));
  const outerEnds = {};
  const drawPiece = (piece, a, b, cx, cy, vertical) => {
    const cls = [piece.spinner ? "spinner" : "", last !== null && tileKey(piece.tile) === last ? "last" : ""].join(" ");
    drawTile(el, a, b, cx, cy, vertical, cls);
    grow(box, cx, cy, vertical ? H : 2 * H, vertical ? 2 * H : H);
  };
  const mid = layout.line[centre];
  const [mw, me] = halves(mid.tile);
  drawPiece(mid, mw, me, 0, 0, mid.double);
  for (const dir of [1, -1]) {
    const pieces = dir > 0 ? layout.line.slice(centre + 1) : layout.line.slice(0, centre).reverse();
    let edge = dir * (mid.double ? H / 2 : H); // the outer edge of the last piece along the line
    let column = null; // once turned: the x of the column, and how far it reaches
    let reach = 0;
    // A long arm runs further along the line, so that its turned part stays short.
    const armLength = pieces.reduce((sum, p) => sum + (p.double ? H : 2 * H) + GAP, Math.abs(edge));
    const run = Math.max(turnAt, armLength - COLUMN);
    for (const piece of pieces) {
      const [w, e] = halves(piece.tile);
      const [inner, outer] = dir > 0 ? [w, e] : [e, w];
      const width = piece.double ? H : 2 * H;
      if (column === null && (piece.double || Math.abs(edge) + GAP + width <= run)) {
        const cx = edge + dir * (GAP + width / 2);
        drawPiece(piece, w, e, cx, 0, piece.double);
        edge = cx + dir * (width / 2);
        continue;
      }
      if (column === null) {
        column = edge + dir * (GAP + H / 2);
        reach = -dir * (H / 2) - dir * GAP; // the corner piece starts level with the line
      }
      const length = piece.double ? H : 2 * H;
      const cy = reach + dir * (GAP + length / 2);
      if (dir > 0) drawPiece(piece, inner, outer, column, cy, !piece.double);
      else drawPiece(piece, outer, inner, column, cy, !piece.double);
      reach = cy + dir * (length / 2);
    }
    outerEnds[dir > 0 ? "E" : "W"] = column === null ? [edge + dir * 30, 0, false] : [column, reach + dir * 30, true];
  }
  const spinX = 0;
  const tips = { N: -H, S: H };
  for (const slot of ["N", "S"]) {
    const sign = slot === "N" ? -1 : 1;
    let edge = sign * H; // the spinner is drawn across the line: it reaches H above and below
    for (const piece of layout.branches[slot]) {
      const [inner, outer] = halves(piece.tile);
      const length = piece.double ? H : 2 * H;
      const cy = edge + sign * (GAP + length / 2);
      const [a, b] = slot === "N" ? [outer, inner] : [inner, outer];
      drawTile(el, a, b, spinX, cy, !piece.double, last !== null && tileKey(piece.tile) === last ? "last" : "");
      grow(box, spinX, cy, piece.double ? 2 * H : H, length);
      edge = cy + sign * (length / 2);
    }
    tips[slot] = edge;
  }
  for (const end of layout.ends) {
    let cx, cy;
    let below = end.slot === "S";
    let align = "middle";
    if (end.slot === "W" || end.slot === "E") {
      let turned;
      [cx, cy, turned] = outerEnds[end.slot];
      below = turned && end.slot === "E";
      if (!turned) align = end.slot === "E" ? "start" : "end"; // a line end: the text runs outwards
    } else if (end.slot === "N") [cx, cy] = [spinX, tips.N - 30];
    else [cx, cy] = [spinX, tips.S + 30];
    endBadge(el, end, cx, cy, targets.has(end.slot), onEnd, below, align);
    const width = Math.max(40, 7 * endText(end).length);
    const shift = { start: width / 2 - 17, end: 17 - width / 2, middle: 0 }[align];
    grow(box, cx + shift, below ? cy + 12 : cy - 12, width, 64);
  }
  fit(el, box, 16);
}

// A row of upright tiles (a hand). `classes(tile)` adds classes; `onClick(tile)` makes them clickable.
export function drawHand(el, tiles, { classes = () => "", onClick = null, raise = () => false } = {}) {
  el.replaceChildren();
  const step = H + 10;
  tiles.forEach((tile, i) => {
    const [a, b] = halves(tile);
    const g = drawTile(el, a, b, i * step + H / 2, raise(tile) ? H - 8 : H + 2, true, classes(tile));
    if (onClick) g.addEventListener("click", () => onClick(tile));
  });
  const width = Math.max(1, tiles.length) * step;
  el.setAttribute("viewBox", `-6 -14 ${Math.max(width, 8 * step)} ${2 * H + 30}`);
  el.setAttribute("preserveAspectRatio", "xMinYMid meet");
}
