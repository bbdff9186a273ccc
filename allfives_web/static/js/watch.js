// Watch: bots against bots at a chosen speed, with pause and step, and every hand shown on request.

import { api, fill, h, toast } from "./api.js";
import { drawLayout, svg } from "./board.js";
import { lastMoves, renderLog, renderScores, renderSeats, setupForm, sideName } from "./common.js";

let root, options, parts;
let game = null;
let running = false;
let log = []; // every move seen (step answers carry only the new one)
let rounds = [];
let timer = null;

export async function init(section, opts) {
  root = section;
  options = opts;
  if (!game) showSetup();
}

function showSetup() {
  stop();
  game = null;
  fill(
    root,
    h("h2", { text: "Watch bots play" }),
    h("p", { class: "muted", text: "Pick a bot for every seat, then play, pause or step through the match." }),
    setupForm(options, { withSeat: false, startText: "Start watching", onStart: start }),
  );
}

async function start(settings) {
  try {
    game = null;
    absorb(await api("POST", "/api/games", { mode: "watch", ...settings }));
    build();
    render();
  } catch (err) {
    toast(err.message);
  }
}

function build() {
  const speed = h("input", { type: "range", id: "speed", min: 50, max: 2000, step: 50, value: 600 });
  const hands = h("input", { type: "checkbox", id: "show-hands" });
  hands.addEventListener("change", async () => {
    try {
      absorb(await api("GET", `/api/games/${game.id}?show_hands=${hands.checked ? 1 : 0}`));
      render();
    } catch (err) {
      toast(err.message);
    }
  });
  parts = {
    speed,
    hands,
    toggle: h("button", { id: "toggle", text: "Play", onclick: () => (running ? stop() : run()) }),
    step: h("button", { class: "secondary", id: "step", text: "Step", onclick: () => step() }),
    status: h("div", { class: "status-bar", id: "status" }),
    caption: h("div", { class: "board-caption", id: "end-total" }),
    board: svg("svg", { class: "board", id: "board" }),
    seats: h("div", { class: "seats", id: "seats" }),
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
        h("div", { class: "controls card" }, parts.toggle, parts.step, h("label", {}, "Speed ", speed), h("label", {}, hands, " Show every hand")),
        parts.banner,
        parts.status,
        h("div", { class: "board-wrap" }, parts.caption, parts.board),
        parts.seats,
      ),
      h(
        "div",
        { class: "side-panel" },
        parts.scores,
        h("div", { class: "card" }, h("h3", { text: "Moves" }), parts.log),
        h("div", { class: "card" }, h("h3", { text: "Rounds" }), parts.results),
        h("button", { class: "secondary", text: "New match", onclick: () => showSetup() }),
      ),
    ),
  );
}

function absorb(answer) {
  if (answer.since === null) {
    log = answer.events;
    rounds = answer.rounds;
  } else {
    const seen = log.length ? log[log.length - 1].n : 0;
    log = log.concat(answer.events.filter((e) => e.n > seen)).slice(-400);
    rounds = rounds.concat(answer.rounds.filter((r) => r.round > rounds.length));
  }
  game = answer;
}

function render() {
  const g = game;
  const names = g.seats.map((s) => s.name);
  fill(
    parts.status,
    h("span", { class: "big", text: `Round ${g.round}` }),
    h("span", { id: "boneyard", text: `Boneyard: ${g.boneyard}` }),
    h("span", { text: g.finished ? "Match over" : `To play: ${names[g.to_act]}` }),
  );
  fill(parts.caption, "End total ", h("b", { text: String(g.layout.end_total) }));
  drawLayout(parts.board, g.layout);
  renderSeats(parts.seats, g.seats, { toAct: g.to_act, last: lastMoves(log, g.round), hands: g.hands });
  renderScores(parts.scores, g.rules, g.scores, g.target, { winners: g.finished ? g.winners : [] });
  renderLog(parts.log, log, names);
  fill(parts.results, ...rounds.map((r) => h("p", { class: "result", text: `Round ${r.round}: ${r.text}.` })));
  parts.banner.replaceChildren();
  if (g.finished) {
    stop();
    const won = g.winners.map((s) => sideName(g.rules, s)).join(" and ");
    parts.banner.append(
      h(
        "div",
        { class: "winner-banner", id: "winner" },
        h("span", { text: `${won} won: ${g.scores.join(" to ")}.` }),
        h("a", { id: "download", href: `/api/games/${g.id}/record`, download: `allfives-${g.id.slice(0, 8)}.json`, text: "Download the record" }),
      ),
    );
  }
  parts.step.disabled = g.finished;
  parts.toggle.disabled = g.finished;
  root.dataset.version = g.version;
  root.dataset.state = g.finished ? "finished" : running ? "running" : "paused";
}

async function step() {
  if (!game || game.finished) return false;
  try {
    absorb(await api("POST", `/api/games/${game.id}/step?show_hands=${parts.hands.checked ? 1 : 0}`, { version: game.version }));
    render();
    return true;
  } catch (err) {
    toast(err.message);
    stop();
    return false;
  }
}

function run() {
  running = true;
  parts.toggle.textContent = "Pause";
  root.dataset.state = "running";
  const tick = async () => {
    if (!running) return;
    const ok = await step();
    if (ok && running) timer = setTimeout(tick, 2050 - Number(parts.speed.value));
  };
  tick();
}

function stop() {
  running = false;
  clearTimeout(timer);
  if (parts) {
    parts.toggle.textContent = "Play";
    if (game && root) root.dataset.state = game.finished ? "finished" : "paused";
  }
}
