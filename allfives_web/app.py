"""The HTTP API and the static pages, as one Starlette application.

Every answer about a game is built by :meth:`Game.payload` from the seat's
view; every change goes through the rules core. Bots think in worker threads
(``run_in_threadpool``), so one game's search never stalls the others. Bad
input gets a 4xx JSON answer ``{"error": ...}`` and changes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from allfives_env.core import DEAL_TABLE, OPENINGS, RULE_SETS
from allfives_env.core.numbers import whole_number

from .games import BOT_CHOICES, MAX_SEARCH, GameError, GameStore, new_game, take_move, take_step
from .leaderboard import find_results
from .replays import MAX_RECORD_BYTES, RecordFolder, ReplayError, record_list, replay_frames

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY_BYTES = 20_000  # a game's settings or a move; records have their own limit


def error(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused (413) once it grows past ``limit`` bytes, whatever Content-Length claims."""
    declared = request.headers.get("content-length")
    if declared is not None:
        size = whole_number(declared.strip())
        if size is None:
            raise ReplayError(f"error: Content-Length {declared[:40]!r} is not a whole number of bytes", 400)
        if size > limit:
            raise ReplayError(f"error: the upload is larger than the limit of {limit} bytes", 413)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ReplayError(f"error: the upload is larger than the limit of {limit} bytes", 413)
        chunks.append(chunk)
    return b"".join(chunks)


async def json_body(request: Request):
    data = await read_body(request, MAX_BODY_BYTES)
    try:
        return json.loads(data or b"{}")
    except (ValueError, RecursionError):
        raise GameError("the body is not valid JSON") from None


def show_hands_param(request: Request) -> bool:
    value = request.query_params.get("show_hands", "0")
    if value not in ("0", "1", "true", "false"):
        raise GameError(f"show_hands={value!r} is not allowed; allowed: 0, 1, true or false")
    return value in ("1", "true")


def create_app(
    records: str | None = None,
    results: str | None = None,
    bots: dict[str, str] | None = None,
    leaderboard: str | None = None,
    idle_seconds: float = 1800.0,
    max_games: int = 2000,
) -> Starlette:
    """The app. ``records``: a folder of game records to offer for replay; ``results``: where to look for
    evaluation results; ``bots``: extra bots named by the server (e.g. ``{"mine": "checkpoint:PATH"}``);
    ``leaderboard``: a benchmark's Markdown leaderboard file, shown first when it exists."""
    store = GameStore(idle_seconds, max_games)
    folder = RecordFolder(records) if records else None
    extra_bots = dict(bots or {})

    async def options(request: Request) -> Response:
        return JSONResponse(
            {
                "rule_sets": list(RULE_SETS),
                "openings": list(OPENINGS),
                "deal_table": {r: {str(n): list(v) for n, v in t.items()} for r, t in DEAL_TABLE.items()},
                "bots": [*BOT_CHOICES, *sorted(extra_bots)],
                "max_search": MAX_SEARCH,
                "records": bool(folder),
                "max_record_bytes": MAX_RECORD_BYTES,
            }
        )

    async def create(request: Request) -> Response:
        body = await json_body(request)
        game = await run_in_threadpool(new_game, body, extra_bots)
        store.add(game)
        return JSONResponse(game.payload(), status_code=201)

    def _locked(game, change, body, show_hands):
        with game.lock:
            change(game, body)  # checks that body's version is the game's, so the page has seen it
            return game.payload(show_hands, since=body["version"])

    def _read(game, show_hands):
        with game.lock:  # waits, in a worker thread, for a bot thinking in this game
            return game.payload(show_hands)

    async def get_game(request: Request) -> Response:
        game = store.get(request.path_params["game_id"])
        show = show_hands_param(request)
        if show and game.mode != "watch":
            raise GameError("show_hands is for watch games; in play you see your own hand only", 403)
        return JSONResponse(await run_in_threadpool(_read, game, show))

    async def move(request: Request) -> Response:
        game = store.get(request.path_params["game_id"])
        body = await json_body(request)
        return JSONResponse(await run_in_threadpool(_locked, game, take_move, body, False))

    async def step(request: Request) -> Response:
        game = store.get(request.path_params["game_id"])
        show = show_hands_param(request)
        body = await json_body(request)
        return JSONResponse(await run_in_threadpool(_locked, game, take_step, body, show))

    def _record(game) -> dict:
        with game.lock:
            if game.mode == "play" and not game.state.finished:
                raise GameError("the record is given when the match is over (it holds every hand)", 409)
            return game.record()

    async def record(request: Request) -> Response:
        game = store.get(request.path_params["game_id"])
        data = await run_in_threadpool(_record, game)
        headers = {"Content-Disposition": f'attachment; filename="allfives-{game.id[:8]}.json"'}
        return Response(json.dumps(data, indent=1) + "\n", media_type="application/json", headers=headers)

    async def delete(request: Request) -> Response:
        store.remove(request.path_params["game_id"])
        return Response(status_code=204)

    async def upload(request: Request) -> Response:
        data = await read_body(request, MAX_RECORD_BYTES)
        name = request.query_params.get("name", "uploaded record")[:200]
        return JSONResponse(await run_in_threadpool(replay_frames, data, name))

    async def list_records(request: Request) -> Response:
        return JSONResponse({"records": await run_in_threadpool(record_list, folder)})

    async def open_record(request: Request) -> Response:
        if folder is None:
            raise ReplayError("no records folder: start the server with --records DIR", 404)
        name, data = await run_in_threadpool(folder.read, request.path_params["key"])
        return JSONResponse(await run_in_threadpool(replay_frames, data, name))

    async def results_page(request: Request) -> Response:
        return JSONResponse({"results": await run_in_threadpool(find_results, results, leaderboard)})

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    async def on_game_error(request: Request, exc: Exception) -> Response:
        return error(str(exc), getattr(exc, "status", 400))

    async def on_http_error(request: Request, exc: HTTPException) -> Response:
        if request.url.path.startswith("/api/"):
            return error(exc.detail if isinstance(exc.detail, str) else "bad request", exc.status_code)
        return Response(exc.detail, status_code=exc.status_code)

    routes = [
        Route("/", index),
        Route("/api/options", options),
        Route("/api/games", create, methods=["POST"]),
        Route("/api/games/{game_id}", get_game, methods=["GET"]),
        Route("/api/games/{game_id}", delete, methods=["DELETE"]),
        Route("/api/games/{game_id}/move", move, methods=["POST"]),
        Route("/api/games/{game_id}/step", step, methods=["POST"]),
        Route("/api/games/{game_id}/record", record),
        Route("/api/replays", upload, methods=["POST"]),
        Route("/api/records", list_records),
        Route("/api/records/{key}", open_record),
        Route("/api/leaderboard", results_page),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={GameError: on_game_error, ReplayError: on_game_error, HTTPException: on_http_error},
    )
    app.state.store = store
    return app
