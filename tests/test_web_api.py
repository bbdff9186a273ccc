"""The browser app's HTTP API: what a seat may see, bad input, records, expiry, and bots off the event loop."""

from __future__ import annotations

import io
import json
import os
import random
import re
import threading
import time
import warnings
from contextlib import redirect_stderr, redirect_stdout

import pytest
from optional import require

require("starlette")
require("httpx")

with warnings.catch_warnings():  # newer Starlette would rather have httpx2; httpx works the same here
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from agents.base import Agent  # noqa: E402
from agents.search import DEFAULT_SIMULATIONS  # noqa: E402
from allfives_env.__main__ import main as cli_main  # noqa: E402
from allfives_env.core import DRAW, NUM_TILES, PASS, TILE_TEXT, State, make_rules, tile_from_text  # noqa: E402
from allfives_env.core.record import load_record, replay, to_record  # noqa: E402
from allfives_env.options import MAX_SEED  # noqa: E402
from allfives_web import games as games_module  # noqa: E402
from allfives_web.app import create_app  # noqa: E402
from allfives_web.leaderboard import evaluate_command  # noqa: E402
from allfives_web.replays import MAX_RECORD_BYTES  # noqa: E402
from allfives_web.server import parse_bots  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
TILE_RE = re.compile(r"(?<![\d.])([0-6])-([0-6])(?![\d.])")


@pytest.fixture()
def client():
    with TestClient(create_app()) as c:
        yield c


def tiles_in(answer) -> set[int]:
    """Every tile an answer names anywhere, as tile ids (tiles travel only as 'a-b' texts).

    The game's id is random URL-safe text, which may hold a '2-6' by chance, so it is left out.
    """
    found = set()

    def walk(x):
        if isinstance(x, str):
            for a, b in TILE_RE.findall(x):
                found.add(tile_from_text(f"{a}-{b}"))
        elif isinstance(x, dict):
            for key, value in x.items():
                walk(key)
                if key != "id":
                    walk(value)
        elif isinstance(x, list):
            for value in x:
                walk(value)

    walk(answer)
    return found


def test_the_leak_checker_reads_tiles_everywhere_but_in_the_random_game_id():
    answer = {"id": "Xq2-6b_", "hand": ["0-1"], "events": [{"tile": "5-5", "end_total": 10}]}
    assert tiles_in(answer) == {tile_from_text("0-1"), tile_from_text("5-5")}


def visible_tiles(state, seat: int) -> set[int]:
    """What the rules let ``seat`` know now: its hand, the layout, and every finished round's tiles except
    the boneyard tiles nobody drew (all hands are shown when a round ends)."""
    view = state.view(seat)
    mask = view.hand | view.layout.played
    seen = {t for t in range(NUM_TILES) if mask >> t & 1}
    for log in state.past:
        draws = sum(1 for _, action in log.moves if action == DRAW)
        undrawn = set(log.deal.boneyard[draws:])
        seen |= set(range(NUM_TILES)) - undrawn
    return seen


def new_game(client, **settings) -> dict:
    response = client.post("/api/games", json=settings)
    assert response.status_code == 201, response.text
    return response.json()


def play_out(client, game: dict, rng: random.Random, check=None) -> dict:
    """Play the person's seat with random legal choices to the end of the match."""
    while not game["finished"]:
        assert game["to_act"] == game["human"] and game["legal"], game
        action = rng.choice(game["legal"])["action"]
        response = client.post(f"/api/games/{game['id']}/move", json={"version": game["version"], "action": action})
        assert response.status_code == 200, response.text
        game = response.json()
        if check:
            check(game)
    return game


@pytest.mark.parametrize(
    "settings",
    [
        {"rules": "pagat", "players": 2, "bots": "greedy", "seat": 1, "seed": 5, "target": 120},
        {"rules": "pagat", "players": 4, "bots": "heuristic", "seat": 2, "seed": 8, "target": 150},
        {"rules": "fives", "players": 3, "bots": "random", "seat": 0, "seed": 2},
    ],
)
def test_every_answer_of_a_match_shows_only_what_the_seat_may_see(client, settings):
    store = client.app.state.store
    answers = []

    def check(answer):
        state = store.get(answer["id"]).state
        seat = answer["human"]
        view = state.view(seat)
        leaked = tiles_in(answer) - visible_tiles(state, seat)
        assert not leaked, f"hidden tiles sent: {[TILE_TEXT[t] for t in leaked]}"
        assert answer["hands"] is None
        assert answer["hand"] == [TILE_TEXT[t] for t in range(NUM_TILES) if view.hand >> t & 1]
        assert [s["tiles"] for s in answer["seats"]] == list(view.hand_counts)
        assert answer["boneyard"] == view.boneyard_left
        assert answer["round"] == state.round_index + 1
        assert sorted(a["action"] for a in answer["legal"]) == sorted(view.legal)
        for event in answer["events"]:
            assert event["drew"] is None or event["seat"] == seat
        answers.append(answer)

    game = new_game(client, mode="play", **settings)
    check(game)
    game = play_out(client, game, random.Random(settings["seed"]), check)
    assert len(answers) > 10 and game["winners"]
    # Each answer to a move carries what happened since the move's version: together, every event and round once.
    played = store.get(game["id"])
    assert [e["n"] for a in answers for e in a["events"]] == list(range(1, len(played.events) + 1))
    assert [r["round"] for a in answers for r in a["rounds"]] == list(range(1, len(played.state.past) + 1))
    if settings["players"] == 2:  # the person drew, and saw its own draws (others' draws stay hidden)
        assert any(e["drew"] for a in answers for e in a["events"])
    # The checker can fail: a watch answer with every hand shown names tiles a seat may not see.
    watch = new_game(client, mode="watch", bots="greedy", seed=settings["seed"], players=settings["players"])
    shown = client.get(f"/api/games/{watch['id']}?show_hands=1").json()
    state = store.get(watch["id"]).state
    assert tiles_in(shown) - visible_tiles(state, 0)
    hidden = client.get(f"/api/games/{watch['id']}").json()
    assert hidden["hands"] is None and not tiles_in(hidden)


def test_the_record_matches_the_match_and_replays_to_its_scores(client):
    game = new_game(client, mode="play", bots="greedy", seed=11, target=100)
    early = client.get(f"/api/games/{game['id']}/record")
    assert early.status_code == 409 and "over" in early.json()["error"]
    game = play_out(client, game, random.Random(1))
    record = client.get(f"/api/games/{game['id']}/record")
    assert record.status_code == 200 and "attachment" in record.headers["content-disposition"]
    data = json.loads(record.text)
    assert data["agents"] == ["human", "greedy"] and data["seed"] == 11
    summary = replay(load_record(record.text)).summary()
    assert summary["scores"] == game["scores"] and summary["finished"]
    rounds = client.get(f"/api/games/{game['id']}").json()["rounds"]
    assert [r["scores"] for r in summary["rounds"]] == [r["scores"] for r in rounds]
    assert [r["round"] for r in rounds] == list(range(1, len(rounds) + 1))
    frames = client.post("/api/replays", content=record.content).json()
    assert frames["scores"] == summary["scores"] and frames["frames"][-1]["scores"] == summary["scores"]
    ends = [f["scores"] for f in frames["frames"] if f["result"]]
    assert ends == [r["scores"] for r in summary["rounds"]]
    assert len(frames["frames"]) == len(summary["events"]) + len(summary["rounds"])


def test_every_replay_frame_counts_the_boneyard_round_ends_included(client):
    """A round's last frame shows the boneyard as the round left it: its size less the round's draws."""
    state = State(make_rules("pagat", 2, target=150), seed=8)
    rng = random.Random(8)
    while not state.finished:
        state.apply(rng.choice(state.legal_actions()))
    frames = client.post("/api/replays", content=json.dumps(to_record(state))).json()["frames"]
    ends = [f for f in frames if f["result"]]
    assert len(ends) == len(state.past) > 1
    for frame, log in zip(ends, state.past, strict=True):
        assert frame["boneyard"] == len(log.deal.boneyard) - sum(action == DRAW for _, action in log.moves)
    assert all(isinstance(f["boneyard"], int) for f in frames)


def test_forced_draws_and_passes_are_played_for_the_person(client):
    game = new_game(client, mode="play", bots="random", seed=3, target=150)
    game = play_out(client, game, random.Random(3))
    store_game = client.app.state.store.get(game["id"])
    forced = [e for e in store_game.events if e["forced"]]
    assert forced and all(e["seat"] == 0 and e["text"] in ("draw", "pass") for e in forced)
    # ... and the person was never asked to choose when a draw or a pass was the only move.
    for event in store_game.events:
        if event["seat"] == 0 and event["text"] in ("draw", "pass"):
            assert event["forced"]


def test_a_bad_move_changes_nothing(client):
    game = new_game(client, mode="play", bots="greedy", seed=4)
    url = f"/api/games/{game['id']}"
    before = client.get(url).json()
    legal = {a["action"] for a in game["legal"]}
    illegal = next(a for a in range(112) if a not in legal)
    bad_bodies = [
        ({"version": game["version"], "action": illegal}, 400, "illegal"),
        ({"version": game["version"], "action": PASS}, 400, "illegal"),
        ({"version": game["version"], "action": 9999}, 400, "illegal"),
        ({"version": game["version"], "action": "0-1"}, 400, "action id"),
        ({"version": game["version"], "action": True}, 400, "action id"),
        ({"version": game["version"] + 1, "action": min(legal)}, 409, "stale"),
        ({"version": "x", "action": min(legal)}, 400, "version"),
        ({"action": min(legal)}, 400, "version"),
        ({"version": game["version"], "action": min(legal), "extra": 1}, 400, "body"),
        ([1, 2], 400, "body"),
    ]
    for body, status, word in bad_bodies:
        response = client.post(f"{url}/move", json=body)
        assert response.status_code == status, (body, response.text)
        assert word in response.json()["error"], (body, response.json())
        assert client.get(url).json() == before
    for raw, status in ((b"{not json", 400), (b"[" * 50000, 413), (b" " * 30000, 413)):
        response = client.post(f"{url}/move", content=raw, headers={"content-type": "application/json"})
        assert response.status_code == status and response.json()["error"]
    assert client.post(f"{url}/step", json={"version": game["version"]}).status_code == 409
    assert client.get(url).json() == before
    ok = client.post(f"{url}/move", json={"version": game["version"], "action": min(legal)})
    assert ok.status_code == 200 and ok.json()["version"] > game["version"]
    again = client.post(f"{url}/move", json={"version": game["version"], "action": min(legal)})
    assert again.status_code == 409 and "stale" in again.json()["error"]


@pytest.mark.parametrize(
    ("settings", "word"),
    [
        ({"mode": "duel"}, "mode"),
        ({"players": 5}, "num_players"),
        ({"rules": "poker"}, "rules"),
        ({"players": 2, "partnerships": True}, "partnerships"),
        ({"target": -5}, "target"),
        ({"seat": 2}, "seat"),
        ({"seat": "0"}, "seat"),
        ({"bots": "checkpoint:../../secret.pt"}, "not allowed"),
        ({"bots": "search:0"}, "not allowed"),
        ({"bots": "search:999999"}, "not allowed"),
        ({"bots": "search:²"}, "not allowed"),
        ({"bots": "search:٣"}, "not allowed"),
        ({"bots": "search:" + "9" * 4301}, "not allowed"),
        ({"bots": "search: 40"}, "not allowed"),
        ({"bots": "search:trained:²"}, "not allowed"),
        ({"bots": ["greedy"]}, "bots"),
        ({"seed": -1}, "seed"),
        ({"seed": 2**128}, "seed"),
        ({"colour": "red"}, "unknown field"),
    ],
)
def test_bad_settings_are_refused_with_a_reason(client, settings, word):
    response = client.post("/api/games", json={"mode": "play", **settings})
    assert response.status_code == 400, response.text
    assert word in response.json()["error"]
    if word == "not allowed":  # a bad bot: the answer lists what is allowed
        assert (
            "allowed: random, greedy, heuristic, search, trained, search[:belief][:equity][:N]"
            in response.json()["error"]
        )
    assert len(client.app.state.store) == 0


@pytest.mark.parametrize(
    ("declared", "status"),
    [("²".encode("latin-1"), 400), (b"1" * 4301, 400), (b"abc", 400), (b"99999999", 413)],
    ids=["superscript", "4301-digits", "letters", "too-large"],
)
def test_a_content_length_that_is_no_plain_number_is_refused(client, declared, status):
    headers = {"content-type": "application/json", "content-length": declared}
    response = client.post("/api/games", content=b"{}", headers=headers)
    assert response.status_code == status
    assert ("is not a whole number" if status == 400 else "larger than the limit") in response.json()["error"]
    assert len(client.app.state.store) == 0


def test_a_drawn_seed_spans_the_environments_whole_range_and_a_chosen_one_is_kept(client):
    """The deals follow from the seed alone: one drawn from 2**31 could be found by trying every seed against the
    tiles a seat sees. Games without a seed get one from 0..MAX_SEED (128 bits), the range reset() takes."""
    seeds = []
    for _ in range(12):
        game = new_game(client, mode="watch", bots="random")
        seeds.append(json.loads(client.get(f"/api/games/{game['id']}/record").text)["seed"])
    assert all(0 <= s <= MAX_SEED for s in seeds) and max(seeds) >= 2**64 and len(set(seeds)) == 12
    chosen = new_game(client, mode="watch", bots="search:5", seed=MAX_SEED)
    assert json.loads(client.get(f"/api/games/{chosen['id']}/record").text)["seed"] == MAX_SEED
    assert client.post(f"/api/games/{chosen['id']}/step", json={"version": 0}).status_code == 200


@pytest.mark.parametrize("spec", ["search:belief:30", "search:equity", "search:belief:equity:30"])
def test_a_search_keeps_the_belief_and_equity_words_a_page_asks_for(client, spec):
    game = new_game(client, mode="watch", bots=spec, seed=3)
    stored = client.app.state.store.get(game["id"])
    assert stored.specs == [spec, spec]
    for bot in stored.bots.values():
        assert (bot.belief is not None, bot.equity) == ("belief" in spec, "equity" in spec)
        assert bot.simulations == (30 if spec.endswith(":30") else DEFAULT_SIMULATIONS)
    assert client.post(f"/api/games/{game['id']}/step", json={"version": 0}).status_code == 200


def test_unknown_games_queries_and_paths(client):
    assert client.get("/api/games/not-a-game").status_code == 404
    assert "no such game" in client.post("/api/games/x/move", json={"version": 0, "action": 0}).json()["error"]
    assert client.get("/api/no-such-thing").json()["error"]
    play = new_game(client, mode="play", seed=1)
    watch = new_game(client, mode="watch", seed=1, bots="random")
    assert client.get(f"/api/games/{play['id']}?show_hands=1").status_code == 403
    for value in ("2", "yes", ""):
        response = client.get(f"/api/games/{watch['id']}?show_hands={value}")
        assert response.status_code == 400 and "show_hands" in response.json()["error"]
    assert client.delete(f"/api/games/{play['id']}").status_code == 204
    assert client.get(f"/api/games/{play['id']}").status_code == 404
    ids = {new_game(client, mode="watch", bots="random")["id"] for _ in range(20)}
    assert len(ids) == 20 and all(len(i) >= 24 and re.fullmatch(r"[A-Za-z0-9_-]+", i) for i in ids)


def test_watch_steps_one_action_at_a_time_and_shows_hands_on_request(client):
    game = new_game(client, mode="watch", bots=["search:8", "greedy", "heuristic", "random"], players=4, seed=2)
    assert game["version"] == 0 and game["hand"] is None and game["legal"] == []
    for n in range(1, 6):
        game = client.post(f"/api/games/{game['id']}/step?show_hands=1", json={"version": game["version"]}).json()
        assert game["version"] == n and len(game["hands"]) == 4
    state = client.app.state.store.get(game["id"]).state
    assert game["hands"] == [[TILE_TEXT[t] for t in state.hand_tiles(s)] for s in range(4)]
    stale = client.post(f"/api/games/{game['id']}/step", json={"version": 2})
    assert stale.status_code == 409
    assert (
        client.post(f"/api/games/{game['id']}/move", json={"version": game["version"], "action": 0}).status_code == 409
    )
    assert client.get(f"/api/games/{game['id']}/record").status_code == 200


def _cli_error(path) -> str:
    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        assert cli_main(["replay", str(path)]) == 2
    return err.getvalue().strip()


def test_a_bad_record_gets_the_same_reason_as_replay(client, tmp_path):
    good = new_game(client, mode="watch", bots="greedy", seed=9)
    record = json.loads(client.get(f"/api/games/{good['id']}/record").text)
    record["rounds"][0]["actions"] = ["pass"] + record["rounds"][0]["actions"]  # never legal at the lead
    broken = [
        b'{"format": "allfives-record/1", "rounds": [}',
        b'{"format": "nope"}',
        b"[1, 2]",
        json.dumps(record).encode(),
        json.dumps({**record, "num_players": 7}).encode(),
        b'{"x": "\xff"}',
        b"[" * 100000,
        b'{"format": "allfives-record/1", "target": ' + b"9" * 5000 + b"}",
    ]
    for data in broken:
        path = tmp_path / "bad.json"
        path.write_bytes(data)
        response = client.post("/api/replays", content=data)
        assert response.status_code == 400
        assert response.json()["error"] == _cli_error(path)
    big = client.post("/api/replays", content=b" " * (MAX_RECORD_BYTES + 1))
    assert big.status_code == 413 and "larger than" in big.json()["error"]


def test_the_records_folder_lists_opaque_keys_and_cannot_be_escaped(tmp_path):
    folder = tmp_path / "out" / "records"
    folder.mkdir(parents=True)
    secret = tmp_path / "secret.json"
    secret.write_text('{"format": "allfives-record/1"}')
    os.symlink(secret, folder / "link.json")
    with TestClient(create_app(records=str(folder))) as c:
        game = new_game(c, mode="watch", bots="greedy", seed=1)
        (folder / "match00000-rot0.json").write_text(c.get(f"/api/games/{game['id']}/record").text)
        (folder / "broken.json").write_text("{")
        c.app.state  # noqa: B018
        listed = c.get("/api/records").json()["records"]
        names = {r["name"]: r["key"] for r in listed}
        assert set(names) >= {"match00000-rot0.json", "broken.json"}
        assert all("/" not in key and len(key) == 20 for key in names.values())
        opened = c.get(f"/api/records/{names['match00000-rot0.json']}")
        assert opened.status_code == 200 and opened.json()["name"] == "match00000-rot0.json"
        assert c.get(f"/api/records/{names['broken.json']}").json()["error"].startswith("error: malformed JSON")
        if "link.json" in names:  # a link out of the folder is listed by name but never read
            assert c.get(f"/api/records/{names['link.json']}").status_code == 404
        for probe in ("..%2Fsecret.json", "%2e%2e", "secret.json", "0" * 20):
            response = c.get(f"/api/records/{probe}")
            assert response.status_code == 404, probe
    with TestClient(create_app()) as c:
        assert c.get("/api/records").json() == {"records": []}
        assert c.get("/api/records/abc").status_code == 404


def test_idle_games_expire_and_the_store_is_bounded():
    with TestClient(create_app(idle_seconds=0.2, max_games=3)) as c:
        first = new_game(c, mode="watch", bots="random")
        for _ in range(2):
            new_game(c, mode="watch", bots="random")
        full = c.post("/api/games", json={"mode": "watch", "bots": "random"})
        assert full.status_code == 503 and "3 games" in full.json()["error"]
        time.sleep(0.3)
        assert c.get(f"/api/games/{first['id']}").status_code == 404
        new_game(c, mode="watch", bots="random")


class SlowAgent(Agent):
    """Thinks for a long time, the way a deep search does."""

    name = "slow"

    def act(self, view):
        time.sleep(1.5)
        return view.legal[0]


def test_a_thinking_bot_does_not_stall_other_games(monkeypatch):
    real = games_module.make_agent
    monkeypatch.setattr(
        games_module, "make_agent", lambda spec, seed=None: SlowAgent() if spec == "slow" else real(spec, seed)
    )
    with TestClient(create_app(bots={"slow": "slow"})) as c:
        slow = new_game(c, mode="watch", bots="slow", seed=1)
        other = new_game(c, mode="watch", bots="greedy", seed=1)
        answers = {}
        threads = [
            threading.Thread(target=lambda: c.post(f"/api/games/{slow['id']}/step", json={"version": 0})),
            # a page asking after the same game waits for the bot, but not on the event loop
            threading.Thread(target=lambda: answers.setdefault("get", c.get(f"/api/games/{slow['id']}"))),
        ]
        threads[0].start()
        time.sleep(0.15)
        threads[1].start()
        time.sleep(0.05)
        start = time.perf_counter()
        for version in range(5):
            assert c.post(f"/api/games/{other['id']}/step", json={"version": version}).status_code == 200
        assert c.get(f"/api/games/{other['id']}/record").status_code == 200
        elapsed = time.perf_counter() - start
        for thread in threads:
            thread.join()
        assert answers["get"].json()["version"] == 1
        assert elapsed < 1.0, f"other games waited {elapsed:.2f} s for a thinking bot"
        assert c.get(f"/api/games/{slow['id']}").json()["version"] == 1


def test_a_bot_that_cannot_start_is_refused_without_server_paths(monkeypatch, caplog):
    def broken(spec, seed=None):
        raise ValueError(f"checkpoint '{os.sep}srv{os.sep}policies{os.sep}x.pt' cannot be read")

    monkeypatch.setattr(games_module, "make_agent", broken)
    with TestClient(create_app()) as c:
        response = c.post("/api/games", json={"mode": "play", "bots": "trained"})
    assert response.status_code == 400 and "'trained' cannot be started" in response.json()["error"]
    assert "x.pt" not in response.text and "x.pt" in caplog.text


def test_options_and_pages_are_served(client):
    options = client.get("/api/options").json()
    assert "search:N" not in options["bots"] and "trained" in options["bots"]
    page = client.get("/")
    assert page.status_code == 200 and 'type="module"' in page.text
    for name in (
        "app.css",
        "js/main.js",
        "js/board.js",
        "js/play.js",
        "js/watch.js",
        "js/replay.js",
        "js/leaderboard.js",
    ):
        response = client.get(f"/static/{name}")
        assert response.status_code == 200, name
        text = response.text.replace('"http://www.w3.org/2000/svg"', "")  # SVG's namespace name, never fetched
        assert "http://" not in text and "https://" not in text and "//cdn" not in text, f"{name} names a web address"
    assert client.get("/static/../games.py").status_code == 404


def test_leaderboard_reads_the_harness_results_with_their_command(tmp_path):
    from agents.evaluate import evaluate
    from agents.evaluation.cli import _parser

    evaluate(["greedy", "random"], 2, seed=7, workers=1, progress=False, target=60).write(str(tmp_path / "g_vs_r"))
    board = tmp_path / "LEADERBOARD.md"
    with TestClient(create_app(results=str(tmp_path), leaderboard=str(board))) as c:
        assert [r["kind"] for r in c.get("/api/leaderboard").json()["results"]] == ["evaluation"]
        board.write_text(
            "# Leaderboard\n\n| agent | WP |\n|---|---|\n| trained | 61% |\n\n`python -m agents.benchmark trained`\n"
        )
        results = c.get("/api/leaderboard").json()["results"]
    assert results[0] == {"kind": "markdown", "source": "LEADERBOARD.md", "text": board.read_text()}
    entry = results[1]
    assert entry["source"] == "g_vs_r" and [r["agent"] for r in entry["rows"]][0] == "greedy"
    args = _parser().parse_args(entry["command"].split()[3:])
    assert (args.lineup, args.matches, args.seed, args.target, args.rules, args.players) == (
        ["greedy", "random"], 2, 7, 60, "pagat", 2
    )  # fmt: skip
    assert evaluate_command("not a title") is None


def test_serve_command_line():
    assert parse_bots(["mine=checkpoint:x.pt"]) == {"mine": "checkpoint:x.pt"}
    for bad in ("mine", "=greedy", "my bot=greedy", "x="):
        with pytest.raises(ValueError, match="NAME=SPEC"):
            parse_bots([bad])
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(SystemExit):
        cli_main(["serve", "--help"])
    assert "127.0.0.1" in out.getvalue() and "--records" in out.getvalue()
    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        assert cli_main(["serve", "--port", "70000"]) == 2
    assert "--port" in err.getvalue()


def test_serve_starts_on_loopback_and_prints_its_url():
    import socket
    import subprocess
    import sys
    import urllib.request

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "allfives_env", "serve", "--port", str(port), "--results", os.devnull]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = server.stdout.readline()
        assert line.startswith(f"All Fives is at http://127.0.0.1:{port}/"), line
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/options", timeout=2) as answer:
                    assert json.loads(answer.read())["bots"][0] == "random"
                break
            except OSError:
                assert time.monotonic() < deadline, "serve did not answer"
                time.sleep(0.1)
    finally:
        server.terminate()
        server.wait(10)
