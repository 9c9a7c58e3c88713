"""Where ``boopexp play`` keeps a game: ``--out`` checked before the first move, the store's next
game, the finished game saved, or rescued into ``boopexp-play-unsaved-<time>`` when ``--out`` broke
(not by ``serve``, which writes only its play folder); ``PlaySettings``: what a played game is
played with (its ``GameSettings`` and its agents), and ``PlaySettings.of_config``, the one place
``--config`` gives it (the config's settings, its agents resolved: ``game``, ``play`` and
``serve``'s /play).

The session's rules are ``play/session.py`` (a layer below the store, so it cannot save itself);
this module is the one place a played game meets ``experiments/store.py``. Importing it loads no
engine: the session is imported when a session is made.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from boopexp import schema
from boopexp.agents.specs import AgentSpec
from boopexp.errors import ConfigError, StoreError
from boopexp.experiments.store import GameStore, StoreReader, writable_folder
from boopexp.game.sides import Colour
from boopexp.play.settings import GameSettings

if TYPE_CHECKING:
    from boopexp.experiments.config import ExperimentConfig
    from boopexp.play.contract import GameRecord
    from boopexp.play.session import PlaySession

#: The name of the folder a finished game is saved in when ``--out`` cannot take it (in the
#: working directory, else the system's temporary folder), with the time appended.
RESCUE_PREFIX = "boopexp-play-unsaved-"


@dataclass(frozen=True)
class PlaySettings:
    """What a played game (``boopexp game``, ``play``, ``engine``, ``serve``'s /play) is played
    with: its settings (:class:`~boopexp.play.settings.GameSettings`: the experiment's name, the
    seed, the budget, the preset, the ply cap and where the games start: ``--start``'s suite of
    one, a config's openings, or None: the empty board) and the agents."""

    settings: GameSettings
    agents: tuple[AgentSpec, ...]
    #: how these settings build an agent from its name and overrides (the registry under the
    #: preset, or the config's declarations): ``boopexp engine`` builds its agent again at each
    #: ``setoption`` through it, from the config read once. None: the settings do not say.
    build: Callable[[str, Mapping[str, Any]], AgentSpec] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of_config(cls, config: ExperimentConfig, agents: Sequence[tuple[str, str, str, Mapping[str, Any]]]
                  ) -> PlaySettings:
        """The settings ``--config`` gives a played game: the config's settings (name, seed,
        budget, preset, ply cap and openings), and each agent as the config declares it (a variant, a
        plugin, a built-in under its preset and params) with the overrides typed on top.

        Args:
            agents: (flag naming the agent, its name, option of its overrides, the overrides) of
                each agent: ``("--agent", "greedy", "--param", {})``.

        Raises:
            ConfigError: one line: an agent the config does not know or an override it refuses
                (named by the config, or by the override's option), or a plugin that cannot be
                imported or built (named by its flag).
        """
        def declared(name: str, overrides: Mapping[str, Any]) -> AgentSpec:
            with schema.within(config.source):
                return config.agent(name, overrides)

        specs = tuple(agent_spec(declared, name, option, over) for _, name, option, over in agents)
        if any(spec.kind == "plugin" for spec in specs):
            from boopexp.agents.plugins import check_plugin

            for (flag, _, _, _), spec in zip(agents, specs):
                if spec.kind == "plugin":
                    check_plugin(spec, where=f"{flag} {spec.name}")
        return cls(config.settings, specs, build=declared)


def agent_spec(build: Callable[[str, Mapping[str, Any]], AgentSpec], name: str, option: str,
               overrides: Mapping[str, Any]) -> AgentSpec:
    """``build(name, overrides)``; an error about a parameter typed with ``option`` names that
    option and the key as typed (``--p2-param: uct_c = -1 …``), not the agent (``agent 'mcts-co'``
    could be either player of "mcts-co vs mcts-co") nor the config (it is not at fault)."""
    try:
        return build(name, overrides)
    except ConfigError as exc:
        typed = exc.key.rpartition(".")[2] if exc.key else None
        if typed is not None and typed in overrides:
            raise exc.replace(key=typed, where=option) from None
        raise


def check_out(out: Path) -> None:
    """Refuse, before the first move, an ``--out`` that a finished game could not be saved in.

    Creates the folder (and its missing parents), writes and deletes a probe file in it and opens
    its games.jsonl for appending, then removes what it created: a game abandoned later leaves no
    trace. Every command with ``--out`` says it in the same line (``store.writable_folder``).

    Raises:
        StoreError: ``cannot write the results folder 'OUT': <reason>; choose another --out``.
    """
    created: list[Path] = []
    with writable_folder(out):
        try:
            missing = [p for p in (out, *out.parents) if not p.exists()]
            for folder in reversed(missing):
                folder.mkdir()
                created.append(folder)
            fd, probe = tempfile.mkstemp(dir=out, prefix=".play-probe-")
            os.close(fd)
            os.unlink(probe)
            games = GameStore(out).games_path
            if games.exists():
                os.close(os.open(games, os.O_WRONLY | os.O_APPEND))
        finally:
            for folder in reversed(created):
                with contextlib.suppress(OSError):
                    folder.rmdir()


def new_session(settings: GameSettings, agent: AgentSpec, human: Colour, out: str | Path,
                start: str | None = None) -> PlaySession:
    """A session whose game is the next free game of its pairing in the store at ``out``.

    Args:
        start: where the game starts (``--start``, docs/openings.md); None: the position of the
            game's index in the settings' openings, or the empty board without them.

    Raises:
        StoreError: the store cannot be read.
        ConfigError: a start the rules refuse, or an index the openings have no position for.
    """
    from boopexp.play.identity import pairing_name
    from boopexp.play.session import PlaySession, next_game_index, session_players
    from boopexp.play.throttle import resolve_throttle

    budget = settings.budget
    throttle = resolve_throttle(budget.throttle) if budget.mode == "cpu" else 1.0
    pairing = pairing_name(*(player.name for player in session_players(agent, human)))
    index = next_game_index(StoreReader(out).outcomes().records(), pairing)
    return PlaySession(settings, agent, human, index, throttle, start)


def save(session: PlaySession, out: str | Path) -> GameRecord:
    """Append the finished game's record to the store at ``out`` and return it.

    If another session stored the same game of the pairing meanwhile, the record takes the next
    free number (its seed stays the one the agent played with).

    Raises:
        StoreError: the store cannot be written, or the game is not finished.
    """
    from boopexp.play.session import next_game_index

    if not session.over:
        raise StoreError("only a finished game is saved")
    record = session.record()
    with GameStore(out).open() as writer:
        before = writer.stored.records()
        if any(r["pairing"] == record["pairing"] and r["game_index"] == record["game_index"] for r in before):
            record["game_index"] = next_game_index(before, record["pairing"])
        writer.append(record)
    return record


@dataclass(frozen=True)
class Saved:
    """Where a finished game went.

    Attributes:
        record: the game's record, as saved (or as it could not be).
        folder: the store that holds it: ``--out``, a rescue folder, or None when nothing could be
            written (the caller prints the record).
        problem: why ``--out`` could not take it (the StoreError's line), or None.
    """

    record: GameRecord
    folder: Path | None
    problem: str | None = None


def save_or_rescue(session: PlaySession, out: Path, *, rescue: bool = True, wait: float = 0.0,
                   clock: Callable[[], float] = time.monotonic, pause: Callable[[float], None] = time.sleep) -> Saved:
    """Save the finished game in ``out``; if ``out`` broke during the game (removed, made
    read-only, locked, damaged), in a new store ``boopexp-play-unsaved-<time>`` in the working
    directory or else in the system's temporary folder: a finished game is never lost.

    Args:
        rescue: False (``boopexp serve``, which writes nowhere but its play folder): no rescue
            folder; a game ``out`` cannot take is returned unsaved (``folder`` None, the record
            kept by the caller).
        wait: seconds to try ``out`` again, every :data:`SAVE_RETRY_S`, while it cannot take the
            game (another process holds its lock for the moment it appends a record).
        clock, pause: the clock read and the wait between tries (a test's fakes).
    """
    deadline = clock() + wait
    while True:
        try:
            return Saved(save(session, out), out)
        except StoreError as exc:
            problem = str(exc)
        if clock() >= deadline:
            break
        pause(SAVE_RETRY_S)
    if not rescue:
        return Saved(session.record(), None, problem)
    name = RESCUE_PREFIX + time.strftime("%Y%m%dT%H%M%S")
    for folder in (Path(name), Path(tempfile.gettempdir()) / name):
        try:
            return Saved(save(session, folder), folder, problem)
        except StoreError:
            continue
    return Saved(session.record(), None, problem)


#: Seconds between two tries of a save that ``wait`` s for its folder (:func:`save_or_rescue`).
SAVE_RETRY_S = 0.05
