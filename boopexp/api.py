"""**The** public Python API (``boopexp.load_games``, ``load_moves``, ``play_game``, ``run``,
``ratings``, ``table_one``, ``table_two``): the stores as pandas frames, games played and runs run
from Python, through the same readers, runner and tables as the command line.

Importing it, or ``boopexp``, compiles nothing and loads no numba: the engine is loaded by the
first game :func:`play_game` or :func:`run` plays. Reading stores loads pandas and pyarrow only.
docs/python.md shows the whole API at work; every function here wraps the module that owns the
concept (``analysis.records`` reads, ``experiments.runner`` runs, ``analysis.paper_tables`` and
``analysis.ratings_report`` count and rate), so the frames are what ``boopexp tables`` and
``boopexp ratings`` read.

Examples
--------
>>> import boopexp
>>> games = boopexp.load_games("results/ablation")
>>> len(games)
800
>>> print(*games.loc[0, ["pairing", "game_index", "winner", "game", "budget_mode"]], sep=" | ")
mcts-co vs vanilla | 0 | p1 | boop | device
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from boopexp import schema
from boopexp.errors import StoreError

if TYPE_CHECKING:
    import pandas as pd

    from boopexp.analysis.records import GameData
    from boopexp.experiments.config import ExperimentConfig
    from boopexp.experiments.runner import RunReport
    from boopexp.play.contract import GameRecord

__all__ = ["load_games", "load_moves", "play_game", "ratings", "run", "table_one", "table_two"]

#: What a path argument may be.
PathLike = Union[str, "os.PathLike[str]"]
#: What :func:`run` accepts as its experiment: a config file, a config as a mapping (the YAML's
#: keys, docs/runner.md), or a parsed config.
ConfigLike = Union[str, "os.PathLike[str]", Mapping[str, Any], "ExperimentConfig"]

#: The columns :func:`load_games` adds to ``analysis.records``' game rows: the settings every game
#: of one ``config_hash`` shares (read from one record of each), and the game's opening.
SETTINGS_COLUMNS: tuple[str, ...] = ("game", "game_options", "budget_mode", "budget_seconds",
                                     "budget_iterations", "preset", "max_plies", "opening")
#: A telemetry entry's keys that are not counters (:func:`load_moves` reads every other as a number).
_NOT_COUNTERS = frozenset({"ply", "player", "agent"})


# ---------------------------------------------------------------------------------------------
# reading


def load_games(*paths: PathLike, warn: bool = True) -> pd.DataFrame:
    """One row per game of some results folders (sealed segments and live logs alike).

    Read as ``boopexp tables`` reads them (:func:`boopexp.analysis.records.load_results`): each
    game once (a game in several folders: the first copy, in the order given), the identity and
    outcome from the summary columns beside the sealed segments (no move is decoded), then the
    settings each ``config_hash`` shares from one record of each.

    Parameters
    ----------
    *paths : str or os.PathLike
        Results folders, each holding a store (``games.jsonl``, ``games-NNNN.jsonl.zst``).
    warn : bool, default True
        Issue the readers' warnings (a missing folder, a cut-short last line, games of settings
        not in the folder's plan, a pairing played under several settings) as
        :class:`boopexp.analysis.ReportWarning`; False silences them.

    Returns
    -------
    pandas.DataFrame
        One row per game, in reading order, with the columns

        - ``source``, ``line``: the folder and the game's line in its file;
        - ``experiment``, ``config_hash``, ``pairing``, ``game_index``: its identity;
        - ``p1``, ``p2``: the agents (p1 moves first);
        - ``winner`` (``"p1"``, ``"p2"`` or None: no winner), ``termination``
          (``victory``, ``ply_limit``, ``draw``, ``illegal_move``, ``agent_error``), ``plies``;
        - ``sweep``: a swept game's grid point as JSON text (``""`` otherwise);
        - ``in_plan``, ``planned``, ``selected``: whether its settings are in its folder's plan,
          the planned games of its pairing, whether Tables I and II count it;
        - ``game``, ``game_options`` (JSON text, ``""`` when none), ``budget_mode``,
          ``budget_seconds``, ``budget_iterations`` (NaN when the mode has none), ``preset``,
          ``max_plies``: the settings of its ``config_hash``;
        - ``opening``: the position string it started from (``""``: the empty board).

    Raises
    ------
    ValueError
        No path given, or a path that is not a string or path.
    boopexp.ConfigError
        None of the folders exists, or a config.yaml's plan is damaged.
    boopexp.StoreError
        A stored line is not a valid record (file and line named), or a file cannot be read.

    Examples
    --------
    >>> games = boopexp.load_games("results/ablation", "results/mirror")
    >>> print(len(games), games["selected"].all())
    1400 True
    >>> first = games[games["p1"] == games["p2"]]  # the mirror games: how often p1 wins
    >>> print(first.groupby("p1")["winner"].apply(lambda w: (w == "p1").mean()).round(2).to_dict())
    {'heuristics': 0.52, 'mcts+E': 0.32, 'mcts+P': 0.12, 'mcts+S': 0.5, 'mcts-co': 0.19, 'vanilla': 0.42}
    """
    data = _load(paths, warn)
    return _with_settings(data, warn)


def load_moves(*paths: PathLike, warn: bool = True) -> pd.DataFrame:
    """One row per ply of every game of some results folders, with its telemetry.

    The games are those :func:`load_games` reads (each once); their moves and telemetry are
    decoded record by record (the store's one decoder), so this reads every byte of the stores:
    about ten times slower than :func:`load_games`, and the frame holds one row per move.

    Parameters
    ----------
    *paths : str or os.PathLike
        Results folders, as for :func:`load_games`.
    warn : bool, default True
        As for :func:`load_games`.

    Returns
    -------
    pandas.DataFrame
        One row per ply: ``config_hash``, ``pairing``, ``game_index`` (the game, as in
        :func:`load_games`), ``ply`` (from 1), ``player`` (``p1``/``p2``), ``agent``, ``move``
        (the move in the game's notation), then the telemetry (docs/architecture.md, "The game
        record"): ``iterations``, ``solver_calls``, ``equivalent_moves``,
        ``equivalent_candidates``, ``tree_nodes``, ``device_seconds``, ``host_cpu_seconds``,
        ``search_depth``, ``tt_hits``, ``proven_nodes``, then every other counter the records
        hold (``nodes_created``, ``playout_plies``, ``solver_moves``, ...), NaN where a move has none.

    Raises
    ------
    ValueError, boopexp.ConfigError, boopexp.StoreError
        As :func:`load_games`.

    Examples
    --------
    >>> moves = boopexp.load_moves("results/mirror")
    >>> print(moves.groupby("agent")["iterations"].median().loc["vanilla"])
    83.0
    """
    import pandas as pd

    from boopexp.analysis.moves import TELEMETRY_FIELDS

    data = _load(paths, warn)
    rows = [row for _, rows in _records(data) for row in rows]
    columns = ["config_hash", "pairing", "game_index", "ply", "player", "agent", "move", *TELEMETRY_FIELDS]
    extra = dict.fromkeys(k for row in rows for k in row if k not in columns)  # the other counters, in order seen
    frame = pd.DataFrame(rows, columns=[*columns, *extra])
    return frame.astype({"ply": "int64", "game_index": "int64", **dict.fromkeys(extra, "float64")})


def _load(paths: Sequence[Any], warn: bool) -> GameData:
    """The games of ``paths`` as ``analysis.records`` reads them."""
    from boopexp.analysis.records import ReportWarning, load_results

    if not paths:
        raise ValueError("no results folder given: load_games('results/ablation', ...)")
    for p in paths:
        if not isinstance(p, (str, os.PathLike)):
            raise ValueError(f"a results folder must be a str or a path, got {p!r} ({type(p).__name__})")
    with warnings.catch_warnings():
        if not warn:
            warnings.simplefilter("ignore", ReportWarning)
        return load_results([Path(p) for p in paths])


def _locations(data: GameData) -> tuple[list[Path], Any, Any]:
    """The store files of ``data`` and, per game row, the index of its file and its line."""
    import numpy as np

    n = len(data.games)
    file_of = np.full(n, -1, dtype=np.int64)
    for i, f in enumerate(data.move_files):
        file_of[f.rows] = i
    return [f.path for f in data.move_files], file_of, data.games["line"].to_numpy(dtype=np.int64)


def _with_settings(data: GameData, warn: bool) -> pd.DataFrame:
    """``data.games`` with :data:`SETTINGS_COLUMNS`: a group's settings from its first game's
    record; the openings of the groups that start elsewhere than the empty board, game by game."""
    import numpy as np
    import pandas as pd

    games = data.games.copy()
    paths, file_of, lines = _locations(data)
    groups = pd.MultiIndex.from_arrays([games["source"], games["config_hash"]])
    codes, unique = groups.factorize()
    firsts = np.unique(codes, return_index=True)[1] if len(games) else np.zeros(0, dtype=np.int64)
    samples = _read_rows(paths, file_of, lines, firsts)
    settings = pd.DataFrame([_settings_of(s) for s in samples], columns=list(SETTINGS_COLUMNS[:-1]))
    for column in settings:
        games[column] = settings[column].to_numpy()[codes] if len(games) else settings[column]
    games = games.astype({"budget_seconds": "float64", "budget_iterations": "float64", "max_plies": "int64"})
    opening = np.full(len(games), "", dtype=object)
    started = [g for g, s in enumerate(samples) if s.get("start")]
    if started:
        rows = np.flatnonzero(np.isin(codes, started))
        for row, record in zip(rows, _read_rows(paths, file_of, lines, rows)):
            opening[row] = record.get("start") or ""
    games["opening"] = pd.Series(opening, index=games.index, dtype="str")
    return games


def _read_rows(paths: Sequence[Path], file_of: Any, lines: Any, rows: Any) -> list[dict[str, Any]]:
    """The records of some game rows (by the store file and line of each: :func:`_locations`), in
    the order of ``rows``: each file's lines streamed block by block (``StoreReader.blocks``), only
    the wanted ones decoded (``StoreReader.decode``), the file left once they are all found (the
    first game of each settings is near the start of a big segment: a few blocks, not the segment)."""
    import numpy as np

    from boopexp.experiments.store import StoreReader

    rows = np.asarray(rows, dtype=np.int64)
    found: list[dict[str, Any]] = [{} for _ in rows]
    for f in np.unique(file_of[rows]).tolist():
        path = paths[f]
        wanted: dict[int, list[int]] = {}
        for i in np.flatnonzero(file_of[rows] == f).tolist():
            wanted.setdefault(int(lines[rows[i]]), []).append(i)
        reader = StoreReader(path.parent)
        for block in reader.blocks(path):
            for line, raw in block:
                for i in wanted.pop(line, ()):
                    found[i] = dict(reader.decode(path, line, raw))
            if not wanted:
                break
        if wanted:
            raise StoreError(f"{path} changed while it was read (a seal or migrate?); read it again")
    return found


def _settings_of(record: Mapping[str, Any]) -> tuple[Any, ...]:
    """A record's settings as :data:`SETTINGS_COLUMNS` but the opening."""
    from boopexp.games.registry import DEFAULT_GAME
    from boopexp.play.contract import MAX_PLIES

    budget = record.get("budget") or {}
    options = record.get("game_options")
    return (record.get("game", DEFAULT_GAME), json.dumps(options, sort_keys=True) if options else "",
            budget.get("mode", ""), budget.get("seconds", float("nan")), budget.get("iterations", float("nan")),
            record.get("preset", ""), record.get("max_plies", MAX_PLIES))


def _records(data: GameData) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """Each counted game's ply rows (:func:`boopexp.analysis.moves.ply_rows`, with its moves), by
    row of ``data.games``, a store file's lines streamed block by block."""
    from boopexp.analysis.moves import number, ply_rows
    from boopexp.experiments.store import StoreReader

    games = data.games
    for f in data.move_files:
        reader = StoreReader(f.path.parent)
        wanted = dict(zip(f.lines.tolist(), f.rows.tolist()))
        for block in reader.blocks(f.path):
            for line, raw in block:
                row = wanted.get(line)
                if row is None:
                    continue
                record = reader.decode(f.path, line, raw)
                game = {k: games[k].iat[row] for k in ("config_hash", "pairing", "game_index", "p1", "p2")}
                rows = ply_rows(record, game)
                moves = record.get("moves") or []
                entries = [e for e in record.get("telemetry") or [] if isinstance(e, dict)]
                for i, (r, entry) in enumerate(zip(rows, entries)):
                    r["move"] = moves[i] if len(moves) == len(rows) else None
                    # the counters ply_rows does not read (nodes_created, playout_plies, ...), as numbers
                    r.update((k, number(v)) for k, v in entry.items() if k not in r and k not in _NOT_COUNTERS)
                yield row, rows


# ---------------------------------------------------------------------------------------------
# playing


def play_game(p1: str, p2: str, *, game: str | Mapping[str, Any] = "boop", budget: float | Mapping[str, Any] = 1.0,
         seed: int = 0, max_plies: int | None = None, agents: Mapping[str, Any] | None = None) -> GameRecord:
    """Play one game between two agents and return its record.

    Not ``play``: ``boopexp.play`` is the package of one game's code (:mod:`boopexp.play`).
    The game is game 0 of the pairing ``"p1 vs p2"`` of a one-pairing experiment with these
    settings: the same game ``boopexp game`` plays with the same options (the same seed, the
    same moves). The first game of a kind compiles the engine (numba, cached on disk after).

    Parameters
    ----------
    p1, p2 : str
        The agents (docs/agents.md): ``vanilla``, ``heuristics``, ``mcts+S`` ... ``mcts-co``,
        ``random``, ``alphabeta``, or one declared in ``agents``. p1 moves first.
    game : str or mapping, default "boop"
        The game: ``boop``, ``connect-four``, ``pentago-swap``, ``colosseum``, a user's
        ``module:attr``, or a mapping of its name and options (``{"name": "colosseum",
        "board_size": 8}``), as a config's ``game:`` (docs/games.md).
    budget : float or mapping, default 1.0
        Device seconds per move (the paper's emulated device), or a config's ``budget:`` mapping
        (``{"mode": "iterations", "iterations": 50}``, docs/budget.md).
    seed : int, default 0
        The experiment seed (0 .. 2**64 - 1); the game's seed derives from it and the settings.
    max_plies : int, optional
        The ply cap (default 1,000): a game that reaches it ends without a winner.
    agents : mapping, optional
        A config's ``agents:`` block: overrides, variants and plugin agents (docs/agents.md).

    Returns
    -------
    GameRecord
        The game record (a dict: docs/architecture.md, "The game record"): ``winner``, ``plies``,
        ``moves``, ``telemetry``, ...

    Raises
    ------
    boopexp.ConfigError
        An unknown agent or game, or a bad budget, seed or ply cap (named, with what is allowed).

    Examples
    --------
    >>> record = boopexp.play_game("random", "random", budget={"mode": "iterations", "iterations": 1}, seed=3)
    >>> record["winner"] in ("p1", "p2"), record["plies"] == len(record["moves"])
    (True, True)
    """
    from boopexp.play import match

    config = _config(_play_config(p1, p2, game=game, budget=budget, seed=seed, max_plies=max_plies, agents=agents))
    return match.play_game(config.plan()[0].task(0))


def _play_config(p1: str, p2: str, *, game: Any, budget: Any, seed: int, max_plies: int | None,
                 agents: Mapping[str, Any] | None) -> dict[str, Any]:
    """The one-pairing config :func:`play_game` plays (checked by the config's parser)."""
    if isinstance(budget, bool) or not isinstance(budget, (int, float, Mapping)):
        raise schema.invalid("budget", budget,
                             "device seconds per move (a number), or a mapping like {mode: iterations, iterations: 50}")
    block = dict(budget) if isinstance(budget, Mapping) else {"mode": "device", "seconds": float(budget)}
    data: dict[str, Any] = {"name": "play", "seed": seed, "games_per_side": 1, "pairings": [[p1, p2]],
                            "budget": block, "game": game if isinstance(game, str) else dict(game)}
    if max_plies is not None:
        data["max_plies"] = max_plies
    if agents:
        data["agents"] = dict(agents)
    return data


def _config(config: ConfigLike) -> ExperimentConfig:
    """An experiment config from a file, a mapping or a parsed config."""
    from boopexp.experiments.config import ExperimentConfig, load_config, parse_config

    if isinstance(config, ExperimentConfig):
        return config
    if isinstance(config, (str, os.PathLike)):
        return load_config(Path(config))
    if isinstance(config, Mapping):
        return parse_config(dict(config), source="<config mapping>")
    raise ValueError(f"config must be a config file's path, a mapping of a config's keys or an ExperimentConfig, "
                     f"got {type(config).__name__}")


def run(config: ConfigLike, *, out: PathLike | None = None, jobs: int = 1, progress: bool = True) -> RunReport:
    """Play the games of an experiment that its results folder lacks, as ``boopexp run`` does.

    The same runner (:func:`boopexp.experiments.runner.run_plan`): resumable (run it again and
    only the missing games are played), each game stored as it finishes, every game's seed from
    its identity (the results do not depend on ``jobs``).

    Parameters
    ----------
    config : str, os.PathLike, mapping or ExperimentConfig
        A config file (docs/runner.md), or its keys as a mapping (``{"name": ..., "seed": ...,
        "games_per_side": ..., "pairings": [...], "budget": {...}}``).
    out : str or os.PathLike, optional
        The results folder; default ``results/<name>`` under the current folder, as the command.
    jobs : int, default 1
        Worker processes; 1 plays in this process.
    progress : bool, default True
        A progress bar (tqdm's notebook widget in Jupyter with ipywidgets installed, its text bar
        elsewhere); False: only warnings.

    Returns
    -------
    boopexp.experiments.runner.RunReport
        The games planned, skipped, played and failed, the score of each pairing, ``out_dir``;
        read the games with ``load_games(report.out_dir)``.

    Raises
    ------
    ValueError
        ``config`` of another type, or ``jobs`` below 1.
    boopexp.ConfigError
        A bad config key or value (named, with what is allowed).
    boopexp.StoreError
        The folder's store is damaged or locked by another run.
    """
    from boopexp.experiments.pool import PoolOptions, release_pool
    from boopexp.experiments.runner import run_plan
    from boopexp.interfaces.commands.runs import RESULTS_DIR, QuietProgress

    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a whole number >= 1, got {jobs!r}")
    parsed = _config(config)
    if parsed.settings.openings is not None:  # a suite's moves checked against the rules before any game
        from boopexp.play.starts import check_suite

        check_suite(parsed.settings.openings, parsed.settings.game)
    out_dir = Path(out) if out is not None else RESULTS_DIR / parsed.name
    try:
        return run_plan(parsed, parsed.plan(), out_dir, PoolOptions(jobs),
                        progress=_auto_bar() if progress else QuietProgress())
    finally:
        release_pool()


def _auto_bar() -> Any:
    """``boopexp run``'s bar (its score per pairing, its warnings) drawn by ``tqdm.auto``: the
    notebook's widget in Jupyter (with ipywidgets; without, the text bar), the text bar elsewhere.
    The class is made here, on first use, so that importing this module does not load the
    command line's."""
    from boopexp.interfaces.commands.runs import BarProgress

    class AutoBarProgress(BarProgress):
        def start(self, planned: int, skipped: int, scores: Sequence[Any]) -> None:
            from tqdm import TqdmWarning

            with warnings.catch_warnings():  # Jupyter without ipywidgets: the text bar, without a warning
                warnings.simplefilter("ignore", TqdmWarning)
                from tqdm.auto import tqdm

            self.bar = tqdm(total=planned, initial=skipped, unit="game", smoothing=0.05)

    return AutoBarProgress()


# ---------------------------------------------------------------------------------------------
# tables and ratings


def ratings(games: pd.DataFrame, *, anchor: str | None = None) -> pd.DataFrame:
    """Bradley–Terry (logistic Elo) ratings with a first-move term, as ``boopexp ratings`` fits them.

    Every decided game of ``games`` counts (all settings; a draw is half a win each way; games
    without a winner are left out and counted).

    Parameters
    ----------
    games : pandas.DataFrame
        Games as :func:`load_games` returns them (any subset of its rows).
    anchor : str, optional
        The agent rated 0 (default ``random`` if it played, else the first agent).

    Returns
    -------
    pandas.DataFrame
        One row per agent, strongest first: ``agent``, ``elo``, ``ci_low``, ``ci_high`` (95 %
        Wald interval), ``games``, ``wins``, ``losses``, ``no_winner`` (and ``draws`` when a game
        was drawn). ``.attrs`` holds ``first_move`` (p1's edge in Elo), ``first_move_ci`` and ``anchor``.

    Raises
    ------
    ValueError
        ``games`` is not a frame of :func:`load_games`' columns.
    boopexp.ConfigError
        An unknown anchor, fewer than two agents, or agents no decided game links.

    Examples
    --------
    >>> table = boopexp.ratings(boopexp.load_games("results/ablation"), anchor="vanilla")
    >>> print(table.set_index("agent").loc["mcts-co", "elo"].round())
    829.0
    """
    from boopexp.analysis.ratings_report import ratings_from_data, ratings_table

    fit = ratings_from_data(_game_data(games, "ratings"), anchor=anchor)
    frame = ratings_table(fit).data.reset_index(drop=True)
    frame.attrs.update(first_move=fit.first_move, first_move_ci=fit.first_move_ci, anchor=fit.anchor)
    return frame


def table_one(games: pd.DataFrame) -> pd.DataFrame:
    """The paper's Table I from ``games``: mcts-co against each opponent, both sides, beside the paper's counts.

    The rows ``boopexp tables`` writes to table1.csv (docs/tables.md): per opponent, mcts-co's
    wins and games as p1 and as p2, its win rate with a 95 % Wilson interval, the paper's rate,
    Fisher's and Boschloo's exact tests of agreement and the verdict. Only the games Tables I and
    II count (``selected``) are used.

    Parameters
    ----------
    games : pandas.DataFrame
        Games as :func:`load_games` returns them (``results/ablation`` holds the paper's pairings).

    Returns
    -------
    pandas.DataFrame
        One row per opponent (the paper's order).

    Raises
    ------
    ValueError
        ``games`` is not a frame of :func:`load_games`' columns.

    Examples
    --------
    >>> t1 = boopexp.table_one(boopexp.load_games("results/ablation"))
    >>> row = t1.set_index("opponent").loc["vanilla"]
    >>> print(f"{row.wins:.0f}/{row.games:.0f}: {row.win_rate:.0%} [{row.ci_low:.1%}, {row.ci_high:.1%}]; "
    ...       f"the paper {row.paper_win_rate:.0%}, {row.verdict}")
    98/100: 98% [93.0%, 99.4%]; the paper 96%, consistent
    """
    from boopexp.analysis.paper_tables import table1

    return table1(_game_data(games, "table_one")).data.reset_index(drop=True)


def table_two(games: pd.DataFrame) -> pd.DataFrame:
    """The paper's Table II from ``games``: each agent's mirror games, p1's and p2's wins beside the paper's.

    The rows ``boopexp tables`` writes to table2.csv (docs/tables.md).

    Parameters
    ----------
    games : pandas.DataFrame
        Games as :func:`load_games` returns them (``results/mirror`` holds the paper's mirrors).

    Returns
    -------
    pandas.DataFrame
        One row per agent.

    Raises
    ------
    ValueError
        ``games`` is not a frame of :func:`load_games`' columns.
    """
    from boopexp.analysis.paper_tables import table2

    return table2(_game_data(games, "table_two")).data.reset_index(drop=True)


def _game_data(games: Any, caller: str) -> GameData:
    """``games`` (a frame of :func:`load_games`) as the ``GameData`` the tables read."""
    import pandas as pd

    from boopexp.analysis.records import GAME_COLUMNS, GameData

    if not isinstance(games, pd.DataFrame):
        raise ValueError(f"{caller}() takes the frame boopexp.load_games returns, got {type(games).__name__}")
    needed = [*GAME_COLUMNS, "selected"]
    missing = [c for c in needed if c not in games.columns]
    if missing:
        raise ValueError(f"{caller}(): the games frame lacks the columns {', '.join(missing)} "
                         "(pass the frame boopexp.load_games returns, or rows of it)")
    sources = tuple(dict.fromkeys(Path(s) for s in games["source"]))
    return GameData(games=games[needed].reset_index(drop=True), sources=sources)
