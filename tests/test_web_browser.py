"""The browser app in a real headless Chromium (the Debian package), driven by Playwright.

A match is played to the end by clicking, a partnership match with a search
bot is finished, a replay is stepped back and forth against ``replay --json``,
and a broken record shows its error. Without Chromium or Playwright these
tests skip, except when the environment variable CI is set: there they fail.

Screenshots of the Play, Watch and Replay pages are taken on the way; set
ALLFIVES_SCREENSHOT_DIR=docs/images to refresh the ones in the docs.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import random
import re
import shutil
import socket
import threading
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from allfives_env.__main__ import main as cli_main
from allfives_env.core import DRAW, SLOT_NAMES, State, action_from_text, make_rules
from allfives_env.core.layout import Layout
from allfives_env.core.record import load_record, replay, write_record

CHROMIUM = os.environ.get("ALLFIVES_CHROMIUM", "/usr/bin/chromium")
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _missing() -> str | None:
    for module in ("playwright", "uvicorn", "starlette"):
        try:
            __import__(module)
        except ImportError:
            return f"{module} is not installed (pip install -e '.[dev]')"
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    return None


MISSING = _missing()
if MISSING:
    if os.environ.get("CI"):
        pytest.fail(f"browser tests cannot run in CI: {MISSING}", pytrace=False)
    pytest.skip(MISSING, allow_module_level=True)

import uvicorn  # noqa: E402
from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402

from allfives_web.app import create_app  # noqa: E402
from allfives_web.payload import layout_json  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def records_dir(tmp_path_factory) -> Path:
    """A records folder like the harness writes, with one seeded match in it."""
    folder = tmp_path_factory.mktemp("out") / "records"
    folder.mkdir()
    state = State(make_rules("pagat", 2, target=120), seed=21)
    rng = random.Random(21)
    while not state.finished:
        state.apply(rng.choice(state.legal_actions()))
    write_record(state, folder / "match00000-rot0.json", seed=21, agents=["random", "random"])
    return folder


@pytest.fixture(scope="module")
def server(records_dir) -> str:
    """The app served by uvicorn on 127.0.0.1 at a free port, for the whole module."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = uvicorn.Config(create_app(records=str(records_dir)), host="127.0.0.1", port=port, log_level="warning")
    app_server = uvicorn.Server(config)
    thread = threading.Thread(target=app_server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not app_server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}/"
    app_server.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture()
def page(browser, server) -> Page:
    context = browser.new_context(viewport={"width": 1280, "height": 860}, accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.on("requestfailed", lambda req: errors.append(f"request failed: {req.url}"))
    page.on("request", lambda req: req.url.startswith(server) or errors.append(f"outside request: {req.url}"))
    page.base = server  # type: ignore[attr-defined]
    yield page
    context.close()
    assert not errors, errors


def screenshot(page: Page, name: str, tmp_path: Path) -> None:
    """Save a screenshot; into the docs (small, as a palette PNG) when ALLFIVES_SCREENSHOT_DIR says so."""
    target = os.environ.get("ALLFIVES_SCREENSHOT_DIR")
    path = (Path(target) if target else tmp_path) / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path))
    assert path.stat().st_size > 10_000  # a drawn page, not a blank one
    if target:
        from PIL import Image

        Image.open(path).convert("RGB").quantize(colors=96).save(path, optimize=True)


def idle(page: Page) -> None:
    page.wait_for_function("document.body.dataset.busy === '0'")


def start_match(page: Page, settings: dict[str, str], bots: dict[int, str]) -> None:
    page.goto(page.base + "#play")
    for name, value in settings.items():
        field = page.locator(f"#page-play [name={name}]")
        if name == "partnerships":
            continue
        if field.evaluate("el => el.tagName") == "SELECT":
            field.select_option(value)
        else:
            field.fill(value)
    for seat, bot in bots.items():
        page.locator(f"#page-play select[name=bot{seat}]").select_option(bot)
    page.click("#start")
    page.wait_for_selector("#page-play[data-state]")


def play_to_the_end(page: Page, tmp_path: Path, shot: str | None = None) -> list:
    """Click legal tiles (and an end where a tile fits several) until the match is over; the final scores shown."""
    moves = 0
    for _ in range(2000):
        idle(page)
        if page.locator("#round-modal").count():
            page.click("#modal-continue")
            continue
        state = page.get_attribute("#page-play", "data-state")
        if state == "finished":
            break
        assert state == "your-turn", state
        page.click("#hand .tile.legal >> nth=0")
        idle(page)
        if page.locator(".end.target").count():
            page.click(".end.target >> nth=0")
        moves += 1
        if shot and moves == 7:
            screenshot(page, shot, tmp_path)
    else:
        raise AssertionError("the match did not end")
    expect(page.locator("#winner")).to_be_visible()
    return [json.loads(x) for x in page.locator("#scores .points").evaluate_all("els => els.map(e => e.dataset.score)")]


def replay_json(path: Path) -> dict:
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli_main(["replay", "--json", str(path)]) == 0
    return json.loads(out.getvalue())


def downloaded_record(page: Page, tmp_path: Path) -> Path:
    with page.expect_download() as info:
        page.click("#download")
    path = tmp_path / "match.json"
    info.value.save_as(path)
    return path


def test_play_a_two_player_match_to_the_end_by_clicking(page, tmp_path):
    start_match(page, {"rules": "pagat", "players": "2", "target": "100", "seed": "5"}, {1: "greedy"})
    shown = play_to_the_end(page, tmp_path, shot="play")
    summary = replay_json(downloaded_record(page, tmp_path))
    assert summary["finished"] and shown == summary["scores"]
    assert max(shown) >= 100


def test_the_play_form_hides_the_fields_that_do_not_apply(page):
    """No bot choice for the person's own seat, and the fives opening only under fives."""
    page.goto(page.base + "#play")
    form = page.locator("#page-play form")
    opening = form.locator("label", has=page.locator("[name=opening]"))

    def bot_label(seat: int):
        return form.locator("label", has=page.locator(f"select[name=bot{seat}]"))

    expect(bot_label(0)).to_be_hidden()
    expect(bot_label(1)).to_be_visible()
    expect(opening).to_be_hidden()
    form.locator("[name=rules]").select_option("fives")
    expect(opening).to_be_visible()
    form.locator("[name=players]").select_option("3")
    form.locator("[name=seat]").select_option("2")
    expect(bot_label(2)).to_be_hidden()
    for seat in (0, 1):
        expect(bot_label(seat)).to_be_visible()
    form.locator("[name=rules]").select_option("pagat")
    expect(opening).to_be_hidden()
    expect(form.locator("#seed-note")).to_contain_text("whoever knows it can work out every hand")


BADGES_JS = """async (layout) => {
  const { drawLayout, svg } = await import("/static/js/board.js");
  const board = svg("svg", { class: "board" });
  document.body.append(board);
  drawLayout(board, layout);
  const badges = [...board.querySelectorAll(".end")].map((g) => ({
    slot: g.dataset.slot,
    value: g.querySelector("text:not(.slot)").textContent,
    label: g.querySelector("text.slot").textContent,
  }));
  board.remove();
  return badges;
}"""


@pytest.mark.parametrize("tiles", [["5-5", "5-3 E", "5-1 W"], ["3-4", "4-4 E"], ["6-6"]])
def test_each_end_badge_shows_the_value_to_match_and_what_the_end_counts(page, tiles):
    """As terminal play writes an end ('N 5 (counts 0)'): the open arm of a 5-5 spinner matches 5 and counts 0."""
    layout = Layout()
    for text in tiles:
        action = action_from_text(text)
        layout.place(action >> 2, action & 3)
    page.goto(page.base + "#leaderboard")
    badges = {b["slot"]: b for b in page.evaluate(BADGES_JS, layout_json(layout))}
    ends = {slot: value for slot, value in enumerate(layout.values) if value >= 0}
    assert set(badges) == {SLOT_NAMES[slot] for slot in ends}
    for slot, value in ends.items():
        badge = badges[SLOT_NAMES[slot]]
        double = " double" if layout.terminal_double(slot) else ""
        assert badge["value"] == str(value), badge
        assert badge["label"] == f"{SLOT_NAMES[slot]} {value} (counts {layout.counts[slot]}{double})", badge


def test_a_four_player_partnership_match_with_a_search_bot(page, tmp_path):
    start_match(
        page,
        {"rules": "pagat", "players": "4", "target": "60", "seed": "3", "seat": "0"},
        {1: "search:40", 2: "heuristic", 3: "greedy"},
    )
    expect(page.locator("#seats .seat")).to_have_count(4)
    expect(page.locator("#seats [data-seat='2'] .name")).to_contain_text("Partner")
    shown = play_to_the_end(page, tmp_path)
    record = downloaded_record(page, tmp_path)
    assert json.loads(record.read_text())["agents"] == ["human", "search:40", "heuristic", "greedy"]
    summary = replay_json(record)
    assert summary["finished"] and shown == summary["scores"] and len(shown) == 2


def boxes(page: Page, selector: str) -> list[dict]:
    return page.locator(selector).evaluate_all("els => els.map(e => e.getBoundingClientRect().toJSON())")


def test_a_phone_keeps_the_board_in_view_the_nav_on_one_row_and_the_tiles_full_size(page):
    """At 390 px: moves do not scroll the page (only the move list scrolls), the nav fits, the board uses the width."""
    page.set_viewport_size({"width": 390, "height": 844})
    start_match(page, {"rules": "pagat", "players": "2", "target": "250", "seed": "5"}, {1: "greedy"})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing wider than the screen
    links, header = boxes(page, "nav a"), boxes(page, "header.top")[0]
    assert len(links) == 4 and len({round(b["top"]) for b in links}) == 1  # one row
    assert all(b["left"] >= 0 and b["right"] <= 390 and b["bottom"] <= header["bottom"] for b in links)
    assert all(a["right"] <= b["left"] for a, b in itertools.pairwise(links))  # side by side, none over another
    board = boxes(page, "#board")[0]
    assert board["width"] >= 340
    moves = measured = 0
    while moves < 14:
        idle(page)
        if page.locator("#round-modal").count():
            page.locator("#modal-continue").dispatch_event("click")
            continue
        assert page.get_attribute("#page-play", "data-state") == "your-turn"
        page.evaluate("window.scrollTo(0, 0)")
        faces = [max(b["width"], b["height"]) for b in boxes(page, "#board .tile rect.face")]
        if faces and len(faces) <= 5:  # a short layout: near full size (a tile's long side is 60; it was 25)
            assert min(faces) >= 48, faces
            measured += 1
        page.locator("#hand .tile.legal >> nth=0").dispatch_event("click")  # a click that scrolls nothing itself
        idle(page)
        if page.locator(".end.target").count():
            page.locator(".end.target >> nth=0").dispatch_event("click")
            idle(page)
        moves += 1
        assert page.evaluate("window.scrollY") == 0, f"move {moves} scrolled the page"
    assert measured >= 2
    log = page.locator("#log")
    assert log.evaluate("el => el.scrollHeight > el.clientHeight")  # the list overflows its box ...
    assert log.evaluate("el => el.scrollTop + el.clientHeight >= el.scrollHeight - 2")  # ... and shows its end


def expected_scores(summary: dict, side_of: list[int]) -> list[list]:
    """The scores after every replay step, from ``replay --json``: a step at each round's start, then one per
    action (placement points as they come; a round's last action brings its cumulative scores)."""
    steps, before = [], [0] * len(summary["scores"])
    for r, entry in enumerate(summary["rounds"]):
        steps.append(list(before))
        mine = [e for e in summary["events"] if e["round"] == r]
        running = list(before)
        for k, event in enumerate(mine):
            running[side_of[event["seat"]]] += event.get("points", 0)
            steps.append(list(entry["scores"]) if k == len(mine) - 1 else list(running))
        before = list(entry["scores"])
    return steps


def shown_scores(page: Page) -> list:
    return [json.loads(x) for x in page.locator("#scores .points").evaluate_all("els => els.map(e => e.dataset.score)")]


def test_step_a_replay_back_and_forth_against_replay_json(page, records_dir, tmp_path):
    record = records_dir / "match00000-rot0.json"
    summary = replay_json(record)
    steps = expected_scores(summary, side_of=[0, 1])
    page.goto(page.base + "#replay")
    page.set_input_files("#replay-file", str(record))
    expect(page.locator("#page-replay")).to_have_attribute("data-state", "loaded")
    assert int(page.get_attribute("#replay-slider", "max")) == len(steps) - 1
    for step in range(1, 40):
        page.click("#replay-next")
        assert page.get_attribute("#page-replay", "data-step") == str(step)
        assert shown_scores(page) == steps[step], step
    screenshot(page, "replay", tmp_path)
    for step in range(38, 20, -1):
        page.click("#replay-prev")
        assert shown_scores(page) == steps[step], step
    for step in (len(steps) - 1, 0, len(steps) // 2):
        page.locator("#replay-slider").evaluate(f"el => {{ el.value = {step}; el.dispatchEvent(new Event('input')); }}")
        assert shown_scores(page) == steps[step], step
    starts = page.locator("#replay-round option").evaluate_all("els => els.map(e => Number(e.value))")
    assert len(starts) == len(summary["rounds"])
    page.select_option("#replay-round", str(starts[-1]))
    assert shown_scores(page) == steps[starts[-1]] == summary["rounds"][-2]["scores"]
    expect(page.locator("#round-number")).to_have_text(f"Round {len(starts)}")
    page.click("#replay-last")
    assert shown_scores(page) == summary["scores"]
    # The same record, opened from the folder given to the server.
    page.select_option("#record-list", label="match00000-rot0.json")
    expect(page.locator("#replay-position")).to_have_text(f"step 0 of {len(steps) - 1}")


def test_the_replay_status_bar_never_shows_a_missing_value(page, records_dir):
    """Every step's status bar names the round and the boneyard, round ends included, and never 'null'."""
    record = records_dir / "match00000-rot0.json"
    state = replay(load_record(record.read_text())).state
    page.goto(page.base + "#replay")
    page.set_input_files("#replay-file", str(record))
    expect(page.locator("#page-replay")).to_have_attribute("data-state", "loaded")
    last = int(page.get_attribute("#replay-slider", "max"))
    ends = 0
    for step in range(last + 1):
        text = page.inner_text("#status")
        assert "null" not in text and "undefined" not in text, (step, text)
        assert re.search(r"Boneyard: \d+", text), (step, text)
        if page.locator("#replay-round-result").count():
            log = state.past[ends]
            left = len(log.deal.boneyard) - sum(action == DRAW for _, action in log.moves)
            assert f"Boneyard: {left}" in text, (step, text)
            ends += 1
        page.click("#replay-next")
    assert ends == len(state.past) > 1


def test_a_broken_record_shows_the_replay_error(page, tmp_path, records_dir):
    broken = tmp_path / "broken.json"
    data = json.loads((records_dir / "match00000-rot0.json").read_text())
    data["rounds"][0]["actions"][0] = "banana"
    broken.write_text(json.dumps(data))
    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        assert cli_main(["replay", str(broken)]) == 2
    page.goto(page.base + "#replay")
    page.set_input_files("#replay-file", str(broken))
    expect(page.locator("#replay-error")).to_have_text(err.getvalue().strip())
    assert "banana" in err.getvalue()


def test_watch_bots_with_every_hand_shown(page, tmp_path):
    page.goto(page.base + "#watch")
    page.select_option("#page-watch [name=players]", "3")
    page.select_option("#page-watch [name=rules]", "fives")
    page.fill("#page-watch [name=seed]", "4")
    page.click("#start")
    page.wait_for_selector("#toggle")
    page.check("#show-hands")
    idle(page)
    for version in range(1, 9):
        page.click("#step")
        expect(page.locator("#page-watch")).to_have_attribute("data-version", str(version))
    assert page.locator("#seats .seat svg .tile").count() > 10  # every hand is drawn
    page.locator("#speed").evaluate("el => { el.value = 2000; }")
    page.click("#toggle")
    expect(page.locator("#page-watch")).to_have_attribute("data-state", "running")
    page.wait_for_function("Number(document.querySelector('#page-watch').dataset.version) >= 14")
    page.click("#toggle")
    expect(page.locator("#page-watch")).to_have_attribute("data-state", "paused")
    screenshot(page, "watch", tmp_path)
