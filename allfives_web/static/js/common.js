// Pieces shared by the Play, Watch and Replay pages: the setup form, scores, seats, the move log, round results.

import { fill, h } from "./api.js";
import { drawHand, drawLayout, svg } from "./board.js";

export function sideName(rules, side, human = null) {
  const seats = rules.sides[side].seats;
  if (human !== null && human !== undefined && seats.includes(human)) return seats.length > 1 ? "Your side" : "You";
  return seats.length > 1 ? `Seats ${seats.join(" + ")}` : `Seat ${seats[0]}`;
}

export function renderScores(box, rules, scores, target, { human = null, winners = [] } = {}) {
  fill(box, h("h3", { text: `Scores (first to ${target})` }));
  scores.forEach((score, side) => {
    const share = Math.max(0, Math.min(100, (100 * score) / target));
    box.append(
      h(
        "div",
        { class: `row${winners.includes(side) ? " winner" : ""}`, "data-side": side },
        h("span", { class: "who", text: sideName(rules, side, human) }),
        h("span", { class: "points", "data-score": score, text: String(score) }),
        h("div", { class: "bar" }, h("span", { style: `width:${share}%` })),
      ),
    );
  });
}

export function lastMoves(events, round) {
  const last = {};
  for (const e of events) if (e.round === round) last[e.seat] = e;
  return last;
}

export function eventText(e) {
  let text = e.text;
  if (e.drew) text += ` (${e.drew})`;
  if (e.forced) text += " (forced)";
  return text;
}

// Seat panels: name, tiles held (face down, or the hand when it may be shown), the last action.
export function renderSeats(box, seats, { toAct = null, last = {}, hands = null } = {}) {
  box.replaceChildren();
  for (const seat of seats) {
    const event = last[seat.seat];
    const card = h(
      "div",
      { class: `seat${toAct === seat.seat ? " to-act" : ""}`, "data-seat": seat.seat },
      h("div", { class: "name" }, seat.name, toAct === seat.seat ? " ◀" : ""),
      h("div", {}, `${seat.tiles} tile${seat.tiles === 1 ? "" : "s"}`, h("span", { class: "backs" }, ...Array.from({ length: Math.min(seat.tiles, 14) }, () => h("i")))),
      h("div", { class: "last", text: event ? `${eventText(event)}${event.points ? `  +${event.points}` : ""}` : "" }),
    );
    if (hands) {
      const mini = svg("svg", { class: "hand-mini hand idle" });
      card.append(mini);
      drawHand(mini, hands[seat.seat]);
    }
    box.append(card);
  }
}

export function renderLog(list, events, names, { fresh = 0, current = null } = {}) {
  list.replaceChildren();
  let round = null;
  for (const e of events) {
    if (e.round !== round) {
      round = e.round;
      list.append(h("li", { class: "round-line", text: `Round ${round}` }));
    }
    const cls = [e.n > fresh && fresh > 0 ? "fresh" : "", current === e.n ? "current" : ""].join(" ").trim();
    list.append(
      h("li", { class: cls || null, "data-n": e.n }, `${names[e.seat]}: ${eventText(e)}`, e.points ? h("span", { class: "pts", text: `  +${e.points}` }) : null),
    );
  }
  const mark = list.querySelector(".current") || list.lastElementChild;
  if (mark) scrollWithin(list, mark);
}

// Bring `item` into view inside the scrolling `box` only. scrollIntoView would scroll every scrolling
// ancestor too, the page included, and on a narrow screen carry the board out of sight at every move.
function scrollWithin(box, item) {
  const outer = box.getBoundingClientRect();
  const inner = item.getBoundingClientRect();
  if (inner.top < outer.top) box.scrollTop -= outer.top - inner.top;
  else if (inner.bottom > outer.bottom) box.scrollTop += inner.bottom - outer.bottom;
}

// A finished round: how it ended, the award or the tie, every hand shown, and the layout it ended with.
export function roundResultBlock(result, rules, seatNames, human = null) {
  const block = h("div", { class: "round-result" });
  block.append(h("p", { class: "result", text: `Round ${result.round}: ${result.text}.` }));
  const table = h("table", {}, h("tr", {}, h("th", { text: "Seat" }), h("th", { text: "Tiles left" }), h("th", { text: "Pips" })));
  result.hands.forEach((hand, seat) => {
    const mini = svg("svg", { class: "hand-mini hand idle" });
    drawHand(mini, hand);
    table.append(h("tr", {}, h("td", { text: seatNames[seat] }), h("td", {}, hand.length ? mini : "none"), h("td", { text: String(result.seat_pips[seat]) })));
  });
  block.append(table);
  const gains = result.gains.map((g, side) => `${sideName(rules, side, human)} ${g >= 0 ? "+" : ""}${g}`).join(", ");
  const scores = result.scores.map((s, side) => `${sideName(rules, side, human)} ${s}`).join(", ");
  block.append(h("p", { text: `Hand award: ${gains}. Scores now: ${scores}.` }));
  const board = svg("svg", { class: "board" });
  drawLayout(board, result.layout);
  block.append(h("div", { class: "board-wrap" }, board));
  return block;
}

export function showModal(content, buttonText, onClose) {
  const button = h("button", { id: "modal-continue", text: buttonText });
  const back = h("div", { class: "modal-back", id: "round-modal" }, h("div", { class: "modal" }, content, h("div", { class: "actions" }, button)));
  button.addEventListener("click", () => {
    back.remove();
    onClose && onClose();
  });
  document.body.append(back);
  button.focus();
}

// The rules, players and bots form shared by Play and Watch.
export function setupForm(options, { withSeat, onStart, startText }) {
  const form = h("form", { class: "setup card" });
  const rules = h("select", { name: "rules" }, ...options.rule_sets.map((r) => h("option", { value: r, text: r })));
  const players = h("select", { name: "players" }, ...[2, 3, 4].map((n) => h("option", { value: n, text: `${n} players` })));
  const partners = h("input", { type: "checkbox", name: "partnerships" });
  const target = h("input", { type: "number", name: "target", min: 1, step: 1, placeholder: "default" });
  const opening = h("select", { name: "opening" }, ...options.openings.map((o) => h("option", { value: o, text: o.replace("_", " ") })));
  const seat = h("select", { name: "seat" });
  // The page sends the seed as a JSON number, exact up to 2**53; the server takes up to 2**128 - 1.
  const seed = h("input", { type: "number", name: "seed", min: 0, max: Number.MAX_SAFE_INTEGER, step: 1, placeholder: "random" });
  const botBox = h("div", { class: "bots", style: "display:contents" });
  const botChoices = [...options.bots.slice(0, 4), "search:40", "search:1000", ...options.bots.slice(4)];
  const botLabel = { search: "search (240 rollouts)", "search:40": "search (quick, 40)", "search:1000": "search (strong, 1000)" };
  const botSelects = [];
  const openingLabel = h("label", {}, "Opening (fives)", opening);
  const seatLabel = h("label", {}, "Your seat", seat);
  const refresh = () => {
    const n = Number(players.value);
    const r = rules.value;
    if (r === "pagat" && n === 4) {
      partners.checked = true;
      partners.disabled = true;
    } else if (n !== 4) {
      partners.checked = false;
      partners.disabled = true;
    } else partners.disabled = false;
    opening.disabled = r !== "fives";
    openingLabel.hidden = r !== "fives";
    target.placeholder = `default ${options.deal_table[r][String(n)][2]}`;
    const mySeat = withSeat ? Math.min(Number(seat.value || 0), n - 1) : null;
    fill(seat, ...Array.from({ length: n }, (_, s) => h("option", { value: s, text: `Seat ${s}` })));
    if (withSeat) seat.value = String(mySeat);
    const kept = botSelects.map((s) => s.value);
    botSelects.length = 0;
    botBox.replaceChildren();
    for (let s = 0; s < n; s++) {
      const select = h("select", { name: `bot${s}`, "data-seat": s }, ...botChoices.map((b) => h("option", { value: b, text: botLabel[b] || b })));
      select.value = kept[s] || "heuristic";
      botSelects.push(select);
      const partner = partners.checked && withSeat && (s + 2) % 4 === mySeat;
      const label = h("label", { hidden: withSeat && s === mySeat }, `Seat ${s}${partner ? " (partner)" : ""}`, select);
      botBox.append(label);
    }
  };
  for (const input of [rules, players, partners, seat]) input.addEventListener("change", refresh);
  form.append(
    h("label", {}, "Rule set", rules),
    h("label", {}, "Players", players),
    h("label", { class: "check" }, partners, "Partnerships (0+2 v 1+3)"),
    h("label", {}, "Target", target),
    openingLabel,
    withSeat ? seatLabel : null,
    botBox,
    h(
      "label",
      { class: "seed" },
      "Seed",
      seed,
      h("small", { id: "seed-note", text: "Empty: a fresh 128-bit seed. A seed fixes every deal: whoever knows it can work out every hand." }),
    ),
    h("div", { class: "actions" }, h("button", { type: "submit", id: "start", text: startText })),
  );
  refresh();
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const settings = { rules: rules.value, players: Number(players.value), partnerships: partners.checked, bots: botSelects.map((s) => s.value) };
    if (target.value) settings.target = Number(target.value);
    if (rules.value === "fives") settings.opening = opening.value;
    if (withSeat) settings.seat = Number(seat.value);
    if (seed.value !== "") settings.seed = Number(seed.value);
    onStart(settings);
  });
  return form;
}
