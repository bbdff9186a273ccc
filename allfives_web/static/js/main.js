// The page switcher: #play, #watch, #replay, #leaderboard, each a module that draws into its section.

import { api, toast } from "./api.js";
import * as leaderboard from "./leaderboard.js";
import * as play from "./play.js";
import * as replay from "./replay.js";
import * as watch from "./watch.js";

const PAGES = { play, watch, replay, leaderboard };
let options = null;

async function route() {
  const name = location.hash.slice(1) in PAGES ? location.hash.slice(1) : "play";
  for (const key of Object.keys(PAGES)) document.getElementById(`page-${key}`).hidden = key !== name;
  for (const link of document.querySelectorAll("nav a")) link.classList.toggle("active", link.dataset.page === name);
  try {
    options = options || (await api("GET", "/api/options"));
    await PAGES[name].init(document.getElementById(`page-${name}`), options);
    document.body.dataset.page = name;
  } catch (err) {
    toast(err.message);
  }
}

window.addEventListener("hashchange", route);
route();
