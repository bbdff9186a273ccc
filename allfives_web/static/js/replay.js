// Replay: open a record (uploaded, or from the folder given to `serve --records`), then step, slide or jump by round.

import { api, fill, h, toast } from "./api.js";
import { drawLayout, svg } from "./board.js";
import { renderLog, renderScores, renderSeats } from "./common.js";

let root, options, parts;
let match = null;
let index = 0;

export async function init(section, opts) {
  root = section;
  options = opts;
  if (!parts) build();
  await listRecords();
}

function build() {
  const file = h("input", { type: "file", id: "replay-file", accept: ".json,application/json" });
  file.addEventListener("change", () => file.files[0] && upload(file.files[0]));
  parts = {
    file,
    folder: h("div", { id: "folder" }),
    error: h("div", { id: "replay-error", class: "error", hidden: true }),
    view: h("div", { id: "replay-view" }),
  };
  fill(
    root,
    h("h2", { text: "Replay a record" }),
    h(
      "div",
      { class: "card controls" },
      h("label", {}, "Open a record file (allfives-record/1): ", file),
      parts.folder,
    ),
    parts.error,
    parts.view,
  );
}

async function listRecords() {
  if (!options.records) {
    fill(parts.folder, h("span", { class: "muted", text: "Start the server with --records DIR to list a folder's records here." }));
    return;
  }
  try {
    const { records } = await api("GET", "/api/records");
    const select = h("select", { id: "record-list" }, h("option", { value: "", text: `${records.length} record${records.length === 1 ? "" : "s"} in the folder…` }), ...records.map((r) => h("option", { value: r.key, text: r.name })));
    select.addEventListener("change", () => select.value && open(`/api/records/${select.value}`));
    fill(parts.folder, h("label", {}, "or one from the records folder: ", select));
  } catch (err) {
    toast(err.message);
  }
}

async function upload(file) {
  const text = await file.text().catch(() => null);
  if (text === null) return showError("error: the file cannot be read");
  try {
    show(await api("POST", `/api/replays?name=${encodeURIComponent(file.name)}`, text, { raw: true }));
  } catch (err) {
    showError(err.message);
  }
}

async function open(path) {
  try {
    show(await api("GET", path));
  } catch (err) {
    showError(err.message);
  }
}

function showError(message) {
  parts.error.textContent = message;
  parts.error.hidden = false;
  root.dataset.state = "error";
}

function show(data) {
  parts.error.hidden = true;
  match = data;
  index = 0;
  const slider = h("input", { type: "range", id: "replay-slider", min: 0, max: data.frames.length - 1, value: 0 });
  slider.addEventListener("input", () => go(Number(slider.value)));
  const rounds = h(
    "select",
    { id: "replay-round" },
    ...data.round_starts.map((frame, i) => h("option", { value: frame, text: `Round ${i + 1}` })),
  );
  rounds.addEventListener("change", () => go(Number(rounds.value)));
  const names = data.rules.num_players ? Array.from({ length: data.rules.num_players }, (_, s) => `Seat ${s}${data.agents && data.agents[s] ? ` (${data.agents[s]})` : ""}`) : [];
  parts.shown = {
    slider,
    rounds,
    names,
    position: h("span", { id: "replay-position" }),
    status: h("div", { class: "status-bar", id: "status" }),
    caption: h("div", { class: "board-caption", id: "end-total" }),
    board: svg("svg", { class: "board", id: "board" }),
    seats: h("div", { class: "seats", id: "seats" }),
    result: h("div", { id: "replay-result" }),
    scores: h("div", { class: "card scores", id: "scores" }),
    log: h("ol", { class: "log", id: "log" }),
  };
  const p = parts.shown;
  fill(
    parts.view,
    h(
      "div",
      { class: "game" },
      h(
        "div",
        { class: "table-area" },
        h(
          "div",
          { class: "controls card" },
          h("button", { class: "secondary", id: "replay-first", text: "|◀", title: "first step", onclick: () => go(0) }),
          h("button", { id: "replay-prev", text: "◀ Back", onclick: () => go(index - 1) }),
          h("button", { id: "replay-next", text: "Forward ▶", onclick: () => go(index + 1) }),
          h("button", { class: "secondary", id: "replay-last", text: "▶|", title: "last step", onclick: () => go(data.frames.length - 1) }),
          slider,
          rounds,
          p.position,
        ),
        p.status,
        h("div", { class: "board-wrap" }, p.caption, p.board),
        p.result,
        p.seats,
      ),
      h("div", { class: "side-panel" }, p.scores, h("div", { class: "card" }, h("h3", { text: "Moves this round" }), p.log)),
    ),
  );
  go(0);
}

function go(target) {
  if (!match) return;
  index = Math.max(0, Math.min(match.frames.length - 1, target));
  const frame = match.frames[index];
  const p = parts.shown;
  p.slider.value = index;
  const roundStart = [...match.round_starts].reverse().find((f) => f <= index);
  p.rounds.value = String(roundStart);
  p.position.textContent = `step ${index} of ${match.frames.length - 1}`;
  const names = p.names;
  fill(
    p.status,
    h("span", { class: "big", id: "round-number", text: `Round ${frame.round}` }),
    h("span", { text: match.name }),
    h("span", { text: `Boneyard: ${frame.boneyard}` }),
    frame.event ? h("span", { id: "replay-event", text: `${names[frame.event.seat]}: ${frame.event.text}${frame.event.drew ? ` (${frame.event.drew})` : ""}` }) : h("span", { text: "Deal" }),
  );
  fill(p.caption, "End total ", h("b", { text: String(frame.layout.end_total) }));
  const last = frame.event && frame.event.end_total !== null ? frame.event.text.split(" ")[0].split("-").map(Number).sort().join("-") : null;
  drawLayout(p.board, frame.layout, { last });
  const seats = frame.hands.map((hand, s) => ({ seat: s, name: names[s], tiles: hand.length }));
  renderSeats(p.seats, seats, { toAct: frame.to_act, hands: frame.hands });
  renderScores(p.scores, match.rules, frame.scores, match.rules.target, { winners: index === match.frames.length - 1 && match.finished ? [].concat(match.winner) : [] });
  fill(p.result, frame.result ? h("p", { class: "result", id: "replay-round-result", text: `Round ${frame.result.round}: ${frame.result.text}. Pips left: ${frame.result.seat_pips.join(", ")}.` }) : "");
  const events = [];
  for (let i = roundStart + 1; i < match.frames.length && match.frames[i].event; i++) events.push(match.frames[i].event);
  renderLog(p.log, events, names, { current: frame.event ? frame.event.n : null });
  p.slider.blur();
  root.dataset.step = String(index);
  root.dataset.state = "loaded";
}

document.addEventListener("keydown", (event) => {
  if (!match || !root || root.hidden || event.target.tagName === "INPUT" && event.target.type !== "range") return;
  if (event.key === "ArrowRight") go(index + 1);
  if (event.key === "ArrowLeft") go(index - 1);
});
