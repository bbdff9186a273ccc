// Leaderboard: the evaluation harness's and the benchmark's results found by the server, with their commands.

import { api, fill, h, toast } from "./api.js";

export async function init(section) {
  fill(section, h("h2", { text: "Leaderboard" }));
  let results = [];
  try {
    ({ results } = await api("GET", "/api/leaderboard"));
  } catch (err) {
    toast(err.message);
  }
  if (!results.length) {
    section.append(
      h("p", { text: "No results found. Run an evaluation with --out inside ./results (or start the server with --results DIR), e.g.:" }),
      h("pre", { text: "python -m agents.evaluate heuristic greedy --matches 200 --out results/heuristic_vs_greedy" }),
    );
    return;
  }
  for (const entry of results) section.append(entry.kind === "evaluation" ? evaluation(entry) : markdown(entry));
}

const pct = (x) => (x === null ? "–" : `${(100 * x).toFixed(1)}%`);
const num = (x, d = 1) => (x === null ? "–" : x.toFixed(d));

function evaluation(entry) {
  const head = ["Agent", "Games", "Win rate", "95% CI", "Margin / match", "ms / decision", "Rating"];
  const table = h("table", { class: "lb" }, h("tr", {}, ...head.map((t) => h("th", { text: t }))));
  for (const r of entry.rows) {
    table.append(
      h(
        "tr",
        {},
        h("td", { text: r.agent }),
        h("td", { class: "num", text: num(r.games, 0) }),
        h("td", { class: "num", text: pct(r.win_rate) }),
        h("td", { class: "num", text: `${pct(r.ci_low)} – ${pct(r.ci_high)}` }),
        h("td", { class: "num", text: r.margin === null ? "–" : `${r.margin >= 0 ? "+" : ""}${num(r.margin)} ± ${num(r.margin_half_width)}` }),
        h("td", { class: "num", text: num(r.ms_per_decision, 2) }),
        h("td", { class: "num", text: r.rating === null ? "–" : num(r.rating, 2) }),
      ),
    );
  }
  return h(
    "div",
    { class: "card" },
    h("h3", { text: entry.source }),
    h("p", { class: "muted", text: entry.title }),
    table,
    entry.command ? h("div", {}, "Command: ", h("pre", { text: entry.command })) : null,
  );
}

// Markdown from a benchmark: tables become tables, fenced code stays code, the rest is text (never HTML).
function markdown(entry) {
  const card = h("div", { class: "card" }, h("h3", { text: entry.source }));
  const lines = entry.text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith("```")) {
      const code = [];
      for (i++; i < lines.length && !lines[i].startsWith("```"); i++) code.push(lines[i]);
      card.append(h("pre", { text: code.join("\n") }));
    } else if (line.trim().startsWith("|")) {
      const rows = [];
      for (; i < lines.length && lines[i].trim().startsWith("|"); i++) rows.push(lines[i]);
      i--;
      const cells = rows.filter((r) => !/^\s*\|[\s:|-]+\|\s*$/.test(r)).map((r) => r.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim().replace(/\*\*|`/g, "")));
      const table = h("table", { class: "lb" });
      cells.forEach((row, k) => table.append(h("tr", {}, ...row.map((c) => h(k === 0 ? "th" : "td", { text: c })))));
      card.append(table);
    } else if (line.trim()) {
      card.append(h("p", { text: line.replace(/^#+\s*/, "").replace(/\*\*|`/g, "") }));
    }
  }
  return card;
}
