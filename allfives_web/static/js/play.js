// Play: you against bots. Click a highlighted tile, then the end to play it on; a tile that fits one end plays at once.

import { api, fill, h, toast } from "./api.js";
import { drawHand, drawLayout, svg } from "./board.js";
import { lastMoves, renderLog, renderScores, renderSeats, roundResultBlock, setupForm, showModal, sideName } from "./common.js";

let root, options;
let game = null;
let selected = null;
let seenEvents = 0;
let shownRounds = 0;
let parts = null;
let log = []; // the moves seen so far (answers to moves carry only the new ones)
let rounds = []; // the finished rounds seen so far

export async function init(section, opts) {
  root = section;
  options = opts;
  if (!game) showSetup();
}

function showSetup() {
  game = null;
  fill(
    root,
    h("h2", { text: "Play against bots" }),
    h("p", { class: "muted", text: "Choose the rules, your seat and a bot for every other seat. The trained bot needs PyTorch." }),
    setupForm(options, { withSeat: true, startText: "Start the match", onStart: start }),
  );
}

async function start(settings) {
  try {
    const answer = await api("POST", "/api/games", { mode: "play", ...settings });
    game = answer;
    selected = null;
    seenEvents = 0;
    shownRounds = 0;
    log = [];
    rounds = [];
    build();
    update(answer);
  } catch (err) {
    toast(err.message);
  }
}

function build() {
  const board = svg("svg", { class: "board", id: "board" });
  const hand = svg("svg", { class: "hand", id: "hand" });
  parts = {
    status: h("div", { class: "status-bar", id: "status" }),
    caption: h("div", { class: "board-caption", id: "end-total" }),
    board,
    seats: h("div", { class: "seats", id: "seats" }),
    prompt: h("div", { class: "prompt", id: "prompt" }),
    hand,
    choices: h("div", { class: "choices", id: "choices" }),
    scores: h("div", { class: "card scores", id: "scores" }),
    log: h("ol", { class: "log", id: "log" }),
    results: h("div", { id: "results" }),
    banner: h("div", { id: "banner" }),
  };
  fill(
    root,
    h(
      "div",
      { class: "game" },
      h(
        "div",
        { class: "table-area" },
        parts.banner,
        parts.status,
        h("div", { class: "board-wrap" }, parts.caption, board),
        parts.seats,
        h("div", { class: "hand-area" }, parts.prompt, hand, parts.choices),
      ),
      h(
        "div",
        { class: "side-panel" },
        parts.scores,
        h("div", { class: "card" }, h("h3", { text: "Moves" }), parts.log),
        h("div", { class: "card" }, h("h3", { text: "Rounds" }), parts.results),
        h("button", { class: "secondary", id: "new-game", text: "New match", onclick: () => showSetup() }),
      ),
    ),
  );
}

function update(answer) {
  const fresh = seenEvents;
  if (answer.since === null) {
    log = answer.events;
    rounds = answer.rounds;
  } else {
    log = log.concat(answer.events.filter((e) => e.n > seenEvents)).slice(-400);
    rounds = rounds.concat(answer.rounds.filter((r) => r.round > rounds.length));
  }
  game = answer;
  selected = null;
  render(fresh);
  seenEvents = log.length ? log[log.length - 1].n : 0;
  nextRoundModal();
}

function nextRoundModal() {
  if (shownRounds >= rounds.length || document.getElementById("round-modal")) return;
  const result = rounds[shownRounds];
  const names = game.seats.map((s) => s.name);
  const last = shownRounds === rounds.length - 1 && game.finished;
  showModal(
    h("div", {}, h("h3", { text: `Round ${result.round} over` }), roundResultBlock(result, game.rules, names, game.human)),
    last ? "See the result" : "Next round",
    () => {
      shownRounds += 1;
      render(0);
      nextRoundModal();
    },
  );
}

function render(fresh) {
  const g = game;
  const names = g.seats.map((s) => s.name);
  const legalTiles = new Set(g.legal.filter((a) => a.tile).map((a) => a.tile));
  const myTurn = !g.finished && g.to_act === g.human && g.legal.length > 0;
  const toAct = g.to_act === null ? "nobody" : g.seats[g.to_act].name;
  fill(
    parts.status,
    h("span", { class: "big", id: "round-number", text: `Round ${g.round}` }),
    h("span", { text: `${g.rules.rules}, ${g.rules.num_players} players${g.rules.partnerships ? ", partnerships" : ""}` }),
    h("span", { id: "boneyard", text: `Boneyard: ${g.boneyard}` }),
    h("span", { text: g.finished ? "Match over" : `To play: ${toAct}` }),
  );
  fill(parts.caption, "End total ", h("b", { text: String(g.layout.end_total) }));
  const options = selected ? g.legal.filter((a) => a.tile === selected) : [];
  const lastPlaced = [...log].reverse().find((e) => e.round === g.round && e.end_total !== null);
  drawLayout(parts.board, g.layout, {
    targets: new Set(options.map((a) => a.slot)),
    onEnd: (slot) => play(options.find((a) => a.slot === slot)),
    last: lastPlaced ? tileOf(lastPlaced.text) : null,
  });
  renderSeats(parts.seats, g.seats, { toAct: g.to_act, last: lastMoves(log, g.round) });
  drawHand(parts.hand, g.hand, {
    classes: (t) => [myTurn && legalTiles.has(t) ? "legal" : "", t === selected ? "selected" : "", t === g.drawn ? "drawn" : ""].join(" "),
    raise: (t) => myTurn && legalTiles.has(t),
    onClick: (t) => choose(t, legalTiles),
  });
  parts.hand.classList.toggle("idle", !myTurn);
  let prompt = "";
  if (g.finished) prompt = "The match is over.";
  else if (!myTurn) prompt = "Waiting for the bots…";
  else if (g.drawn) prompt = `You drew ${g.drawn}; it fits, so place it now.`;
  else if (g.layout.empty) prompt = "Your lead: click a highlighted tile.";
  else if (selected) prompt = `Where does ${selected} go? Click a glowing end, or a choice below.`;
  else prompt = "Your turn: click a highlighted tile.";
  parts.prompt.textContent = prompt;
  fill(
    parts.choices,
    ...options.map((a) =>
      h("button", { "data-action": a.action, onclick: () => play(a) }, `${a.text} → total ${a.end_total}${a.points ? `, +${a.points}` : ""}`),
    ),
  );
  renderScores(parts.scores, g.rules, g.scores, g.target, { human: g.human, winners: g.finished ? g.winners : [] });
  renderLog(parts.log, log, names, { fresh });
  fill(parts.results, ...rounds.slice(0, shownRounds).map((r) => h("p", { class: "result", text: `Round ${r.round}: ${r.text}.` })));
  parts.banner.replaceChildren();
  if (g.finished && shownRounds >= rounds.length) {
    const won = g.winners.map((s) => sideName(g.rules, s, g.human)).join(" and ");
    const final = g.scores.map((s, side) => `${sideName(g.rules, side, g.human)} ${s}`).join(", ");
    parts.banner.append(
      h(
        "div",
        { class: "winner-banner", id: "winner" },
        h("span", { text: `${won} won. Final scores: ${final}.` }),
        h("a", { id: "download", href: `/api/games/${g.id}/record`, download: `allfives-${g.id.slice(0, 8)}.json`, text: "Download the record" }),
        h("button", { onclick: () => showSetup(), text: "Play again" }),
      ),
    );
  }
  root.dataset.version = g.version;
  root.dataset.state = g.finished ? "finished" : myTurn ? "your-turn" : "waiting";
}

function tileOf(text) {
  const [a, b] = text.split(" ")[0].split("-").map(Number);
  return `${Math.min(a, b)}-${Math.max(a, b)}`;
}

function choose(tile, legalTiles) {
  if (game.finished || game.to_act !== game.human) return;
  if (!legalTiles.has(tile)) {
    toast(`${tile} fits no open end now.`);
    return;
  }
  const actions = game.legal.filter((a) => a.tile === tile);
  if (actions.length === 1) play(actions[0]);
  else {
    selected = tile;
    render(0);
  }
}

async function play(action) {
  if (!action || root.dataset.state !== "your-turn") return;
  root.dataset.state = "sending";
  try {
    update(await api("POST", `/api/games/${game.id}/move`, { version: game.version, action: action.action }));
  } catch (err) {
    toast(err.message);
    try {
      update(await api("GET", `/api/games/${game.id}`));
    } catch (again) {
      toast(again.message);
    }
  }
}
