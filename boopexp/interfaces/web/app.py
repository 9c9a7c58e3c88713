"""``boopexp serve``'s FastAPI application (optional extra ``web``): the pages (dashboard, store,
game viewer; Jinja2 templates and plain JS + SVG in ``web/templates/``, ``web/static/``, package
data) and the JSON API behind them (the dashboard's listing also as server-sent events, sent again
when it changes); a refused request is a 4xx with one line of JSON.

Pages: ``/`` every store under the root and its progress (server-sent events, so a run in
progress shows live), ``/store?store=`` one store's pairings, SPRT, forfeits, report files and
games, ``/game?store=&pairing=&index=`` the game viewer (any game's, drawn by the game's own SVG,
docs/games.md), ``/play`` a game against an agent (``/play/<game>``: a built-in game chosen). API:
``/api/stores`` (``/api/stores/events``: the same, sent again whenever it changes), ``/api/store``
(``offset``, ``limit``: a page of its games),
``/api/game`` (the record as ``build_record`` returns it), ``/api/game/plies`` (its positions),
``/api/game/search`` (the root of the search that chose a move, re-run),
``/files?path=`` (a report file), ``/api/opponents`` (the agents to play against, with the configs'
agents), ``/api/play...`` (a game being played; ``DELETE /api/play/{id}`` abandons one). A refused
request is a 4xx with ``{"error": "<one line>"}``; only the play folder is ever written.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import Body, FastAPI, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException

from boopexp import __version__, schema
from boopexp.errors import ConfigError, show_value
from boopexp.interfaces.web import stores
from boopexp.interfaces.web.stores import RequestError, Root, StatusCache
from boopexp.play.contract import cut_text
from boopexp.play.identity import MAX_GAME_INDEX

if TYPE_CHECKING:
    from boopexp.experiments.config import ExperimentConfig

HERE = Path(__file__).resolve().parent
#: The dashboard's events (``/api/stores/events``): the stores looked at every this many seconds
#: (as often as the page polled), the stream closed after ``EVENTS_SECONDS`` (the browser
#: connects again after ``EVENTS_RETRY_MS``: a server that stops is not held by an endless stream).
EVENTS_INTERVAL = 2.0
EVENTS_SECONDS = 300.0
EVENTS_RETRY_MS = 1000

_STORE = Query(..., description="The store's folder relative to the root, as /api/stores lists it.")
_PAIRING = Query(..., description='The pairing, p1 first: "mcts-co vs vanilla".')
#: The largest integer a request may give (a game's index, a ply): the store's columns are 64-bit.
#: Every integer parameter is declared with its range (``Query(ge=, le=)``), so that FastAPI refuses
#: one out of range in the one 400 line of any malformed parameter, before a route reads it.
MAX_INT = MAX_GAME_INDEX
_INDEX = Query(..., ge=0, le=MAX_INT, description="The game's index in its pairing (0-based).")
_PLY = Query(..., ge=1, le=MAX_INT, description="The move (1-based) whose search is shown.")
_HASH = Query(None, description="The settings hash (or a prefix): only when the store holds the game under "
                                "several settings.")


def _json(data: Any, status: int = 200) -> Response:
    # json.dumps writes the records' enum members (str subclasses) as their strings, as the store does
    return Response(json.dumps(data, allow_nan=False), status_code=status, media_type="application/json")


def _validation_line(exc: RequestValidationError) -> str:
    first = exc.errors()[0]
    loc = [str(p) for p in first.get("loc", ())]
    given = first.get("input")
    shown = f" (got {show_value(given)})" if given is not None and not isinstance(given, dict) else ""
    where = "the request's body" if loc[:1] == ["body"] else f"query parameter {'.'.join(loc[1:] or loc)!r}"
    return f"{where}: {first.get('msg', 'invalid')}{shown}"


#: The most characters of a refusal: a message quotes what it refuses, and a request may be long
#: (a 100 KB settings hash came back whole in its 404).
MAX_MESSAGE = 500
#: The largest request body the server reads (its JSON bodies are a few hundred bytes): a longer
#: one is refused (413) before it is read.
MAX_BODY_BYTES = 64 * 1024


def create_app(root: str | Path, warm: bool = True, play_out: str | Path | None = None,
               configs: Sequence[ExperimentConfig] = (), events_interval: float = EVENTS_INTERVAL,
               events_seconds: float = EVENTS_SECONDS, max_searches: int | None = None) -> FastAPI:
    """The application serving the stores under ``root``.

    Args:
        root: the folder shown (``--root``); nothing outside it is served.
        play_out: where games played in the browser are saved (default ``root/play``): the one
            folder the server writes.
        configs: the configs (``--config``, names unique) whose agents /play offers besides the
            built-in ones, each played with its config's settings.
        events_interval, events_seconds: how often ``/api/stores/events`` looks at the stores,
            and how long one stream lasts.
        warm: read every store's status in a background thread at once (no engine), so that the
            first dashboard is served from the cache.
        max_searches: the agents' searches /play runs at once (None: one per core); one more is
            refused (503).
    """
    from boopexp.games.registry import DEFAULT_GAME
    from boopexp.interfaces.web.game import SearchCache
    from boopexp.interfaces.web.play import MAX_SEARCHES, ChoiceNeeded, Games, check_game

    base = Root.of(root)
    cache = StatusCache(root=base)
    searches = SearchCache()
    games = Games(base, Path(play_out) if play_out is not None else Path(root) / "play", configs,
                  MAX_SEARCHES if max_searches is None else max_searches)
    app = FastAPI(title="boopexp", version=__version__,
                  description=f"The stores under {base.path.name}/: progress, games and reports (read only).")
    app.state.root = base
    app.state.cache = cache
    app.state.games = games
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    def wants_html(request: Request) -> bool:
        return not request.url.path.startswith(("/api/", "/files", "/openapi", "/static"))

    def refuse(request: Request, status: int, message: str) -> Response:
        # no refusal shows the server's own paths, nor the whole of a long input
        message = cut_text(base.shown(message), MAX_MESSAGE)
        if wants_html(request):
            return templates.TemplateResponse(request, "error.html", {"message": message, "status": status,
                                                                      "root": base.path.name}, status_code=status)
        return JSONResponse({"error": message}, status_code=status)

    @app.middleware("http")
    async def _bounded_body(request: Request, call_next: Any) -> Response:
        length = request.headers.get("content-length")
        if length is not None and (not length.isascii() or not length.isdigit() or int(length) > MAX_BODY_BYTES):
            return refuse(request, 413, f"a request body of {show_value(length)} bytes: at most {MAX_BODY_BYTES:,}")
        if length is None and request.headers.get("transfer-encoding"):  # a body of unknown length
            return refuse(request, 411, "a request body needs its Content-Length")
        return await call_next(request)

    @app.exception_handler(RequestError)
    async def _refused(request: Request, exc: RequestError) -> Response:
        return refuse(request, exc.status, str(exc))

    @app.exception_handler(ChoiceNeeded)
    async def _choose(request: Request, exc: ChoiceNeeded) -> Response:
        return JSONResponse({"error": str(exc), "choices": exc.choices}, status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        return refuse(request, 400, _validation_line(exc))

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> Response:
        message = "no such page or API route; see /docs" if exc.status_code == 404 else str(exc.detail)
        return refuse(request, exc.status_code, message)

    # --- the JSON API -------------------------------------------------------------------------

    @app.get("/api/stores", summary="Every store under the root and its progress")
    def api_stores() -> Response:
        """Each store: ``folder`` (relative to the root), its settings, games done/planned per pairing,
        SPRT state, forfeits and warnings (``boopexp status --json``'s fields), or ``error``."""
        return _json({"root": base.path.name, "stores": stores.list_stores(base, cache)})

    @app.get("/api/stores/events", summary="/api/stores as server-sent events: again whenever it changes",
             response_class=StreamingResponse)
    async def api_stores_events(request: Request) -> StreamingResponse:
        """Server-sent events (``text/event-stream``): at once an event whose data is
        ``/api/stores``'s JSON, then another each time that changes (the stores looked at every
        few seconds; a comment line when nothing changed, so that a closed page is noticed). The
        stream ends after a few minutes and the browser's EventSource connects again."""
        return StreamingResponse(store_events(request), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store"})

    async def store_events(request: Request) -> AsyncIterator[str]:
        yield f"retry: {EVENTS_RETRY_MS}\n\n"
        last, end = None, time.monotonic() + events_seconds
        while time.monotonic() < end and not await request.is_disconnected():
            listing = await run_in_threadpool(stores.list_stores, base, cache)  # reads files: off the event loop
            text = json.dumps({"root": base.path.name, "stores": listing}, allow_nan=False)
            yield f"data: {text}\n\n" if text != last else ": unchanged\n\n"
            last = text
            await asyncio.sleep(events_interval)

    @app.get("/api/store", summary="One store: its progress, a page of its games and its report files")
    def api_store(store: str = _STORE,
                  offset: int = Query(0, ge=0, le=MAX_INT, description="The first game of the page (0-based)."),
                  limit: int = Query(stores.DEFAULT_PAGE, ge=0, le=stores.MAX_PAGE,
                                     description="The games in the page (0: none, the progress only).")) -> Response:
        """``status`` (as /api/stores lists it), ``files``, and ``games``: a page of the store's
        games by pairing, settings hash and index (``games_total`` of them in all), one row each:
        ``pairing``, ``game_index``, ``config_hash``, ``winner``, ``termination``."""
        folder = base.store(store)
        rows, total = stores.store_games(cache, folder, offset, limit)
        return _json({"status": cache.status(folder, store), "games": rows, "games_total": total, "offset": offset,
                      "limit": limit, "files": stores.report_files(base, folder)})

    @app.get("/api/reports", summary="The folders of report files (tables, ratings, figures) under the root")
    def api_reports() -> Response:
        return _json({"reports": stores.report_folders(base)})

    @app.get("/api/game", summary="One game's record, as build_record returns it")
    def api_game(store: str = _STORE, pairing: str = _PAIRING, index: int = _INDEX,
                 config_hash: str | None = _HASH) -> Response:
        return _json(stores.find_record(base, cache, store, pairing, index, config_hash))

    @app.get("/api/game/plies", summary="One game's positions, ply by ply (the board, pushes, promotions)")
    def api_game_plies(store: str = _STORE, pairing: str = _PAIRING, index: int = _INDEX,
                       config_hash: str | None = _HASH) -> Response:
        from boopexp.interfaces.web.game import game_plies

        return _json(game_plies(stores.find_record(base, cache, store, pairing, index, config_hash)))

    @app.get("/api/game/search", summary="The root of the MCTS search that chose one move, re-run from the record")
    def api_game_search(store: str = _STORE, pairing: str = _PAIRING, index: int = _INDEX,
                        ply: int = _PLY,
                        config_hash: str | None = _HASH) -> Response:
        """The game is played again from its record's settings and seed up to the search that chose
        move ``ply`` (device and iterations budgets replay exactly; nothing is stored with the
        game): ``{"ply", "side", "agent", "move", "chosen", "visits", "children": [{"move",
        "visits", "value", "selectable", "proven"}]}``, the children as the search ranked them
        (:func:`boopexp.play.replay.root_search`; the searches a re-play passes are kept, so a ply
        already reached costs none). 400: not an MCTS move, a cpu or wall game, a ply
        out of range; 422: the re-played game departs from the record."""
        from boopexp.errors import ConfigError, StoreError

        record = stores.find_record(base, cache, store, pairing, index, config_hash)
        try:
            return _json(searches.search(record, ply).to_dict())
        except ConfigError as exc:
            raise RequestError(400, str(exc)) from None
        except StoreError as exc:
            raise RequestError(422, str(exc)) from None

    @app.get("/files", summary="A report file under the root (png, svg, md, csv, tex, json)")
    def files(path: str = Query(..., description="The file, relative to the root.")) -> Response:
        found, kind = stores.report_file(base, path)
        return FileResponse(found, media_type=kind)

    # --- the pages ----------------------------------------------------------------------------

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def dashboard(request: Request) -> Response:
        return templates.TemplateResponse(request, "dashboard.html", {"root": base.path.name})

    @app.get("/store", response_class=HTMLResponse, include_in_schema=False)
    def store_page(request: Request, store: str = _STORE) -> Response:
        base.store(store)
        return templates.TemplateResponse(request, "store.html", {"root": base.path.name, "store": store})

    @app.get("/game", response_class=HTMLResponse, include_in_schema=False)
    def game_page(request: Request, store: str = _STORE, pairing: str = _PAIRING, index: int = _INDEX,
                  config_hash: str | None = _HASH) -> Response:
        from boopexp.interfaces.web.game import game_plies

        record = stores.find_record(base, cache, store, pairing, index, config_hash)
        data = {"store": store, "record": record, **game_plies(record)}
        return templates.TemplateResponse(request, "game.html", {"root": base.path.name, "store": store,
                                                                 "record": record, "data": data})

    # --- playing in the browser ---------------------------------------------------------------

    @app.get("/play", response_class=HTMLResponse, include_in_schema=False)
    def play_page(request: Request, game: str | None = Query(None)) -> Response:
        if game is not None:
            games.get(game)
        return play_form(request, game, DEFAULT_GAME)

    @app.get("/play/{name}", response_class=HTMLResponse, include_in_schema=False)
    def play_game_page(request: Request, name: str) -> Response:
        """The form with the built-in game ``name`` chosen (``/play/connect-four``)."""
        try:
            check_game(name)
        except ConfigError as exc:
            raise RequestError(404, f"no page /play/{name}: {exc}") from None
        return play_form(request, None, name)

    def play_form(request: Request, game_id: str | None, chosen: str) -> Response:
        return templates.TemplateResponse(request, "play.html", {"root": base.path.name, "game_id": game_id,
                                                                 "opponents": games.opponents(), "chosen": chosen,
                                                                 "out": str(games.out)})

    @app.get("/api/opponents", summary="The games and agents to play: the built-in ones and those of each --config")
    def opponents() -> Response:
        """``builtin``: each built-in agent and its settings (default preset); ``games``: each
        built-in game (``name``) with the built-in agents' settings under its own parameters;
        ``configs``: each config given to ``serve --config`` with its budget, preset, seed, ply
        cap, openings and game, and its agents (variants, plugins, built-ins under its params)
        with their settings."""
        return _json(games.opponents())

    @app.post("/api/play", summary="Start a game against an agent (the agent moves at once if it moves first)")
    def play_new(options: dict[str, Any] = Body(default={}, examples=[{  # noqa: B008 - FastAPI's idiom
            "agent": "mcts-co", "colour": "blue", "budget": "device", "seconds": 1.0, "iterations": 80, "seed": 0},
            {"game": "connect-four", "agent": "vanilla", "colour": "red", "budget": "iterations", "iterations": 200},
            {"config": "greedy-example", "agent": "greedy-noisy", "colour": "red"}])
    ) -> Response:
        """A built-in agent in a built-in ``game`` (default boop.; ``colour`` blue: the human moves
        first) under the budget and seed given; or, with ``config`` (a config's name, as
        /api/opponents lists them), an agent of that config played with the config's settings
        (budget, preset, seed, ply cap, openings, game: no budget, seed or game given)."""
        return _json(games.state(games.new(options)))

    @app.get("/api/play/{game_id}", summary="A game being played: position, whose turn, legal moves, result")
    def play_state(game_id: str) -> Response:
        return _json(games.state(games.get(game_id)))

    @app.post("/api/play/{game_id}/move", summary="Play your move in the game's notation (boop.: c3 small, C3 large; "
                                                  "choice: the group to promote; Connect Four: a column, a..g)")
    def play_move(game_id: str, body: dict[str, Any] = Body(..., examples=[{"move": "c3"}])) -> Response:  # noqa: B008
        game = games.get(game_id)
        try:
            schema.check_keys(body, ("move", "choice"))  # as /api/play's body: a misspelt key is no move
        except ConfigError as exc:
            raise RequestError(400, str(exc)) from None
        move, choice = body.get("move"), body.get("choice")
        if not isinstance(move, str):
            raise RequestError(400, "give the move as {\"move\": \"c3\"} (C3 for a large piece)")
        if choice is not None and (isinstance(choice, bool) or not isinstance(choice, int)):
            raise RequestError(400, f"choice {choice!r}: the index of the group to promote (0, 1, ...)")
        games.move(game, move, choice)
        return _json(games.state(game))

    @app.delete("/api/play/{game_id}", summary="Abandon a game: forget it (nothing is saved), its search stopped")
    def play_abandon(game_id: str) -> Response:
        """The game is forgotten, unfinished and unsaved; if its agent is thinking (or a hint is
        searched), the search is stopped, freeing its core: ``{"id", "abandoned": true,
        "search_stopped"}``."""
        return _json(games.abandon(games.get(game_id)))

    @app.post("/api/play/{game_id}/undo", summary="Take back your last move and the agent's reply")
    def play_undo(game_id: str) -> Response:
        game = games.get(game_id)
        games.undo(game)
        return _json(games.state(game))

    @app.post("/api/play/{game_id}/hint", summary="Ask what mcts-co would play (searched in the background)")
    def play_hint(game_id: str) -> Response:
        game = games.get(game_id)
        games.ask_hint(game)
        return _json(games.state(game))

    if warm:
        app.state.warm = stores.warm(base, cache)
    return app
