"""YAML → frozen dataclasses, validation, the plan and its tasks.

Experiment configurations: YAML → validated frozen dataclasses → the planned list of games.

A config names its pairings; a non-mirror pairing ``[A, B]`` plans ``games_per_side`` games
"A vs B" (A = p1 = Blue, moves first) and as many "B vs A"; a mirror ``[A, A]`` plans
``2 × games_per_side`` games "A vs A" (EXPERIMENTS.md §1). Each pairing string has its own
settings hash (:func:`boopexp.play.identity.settings_hash`) and its games are indexed 0..n-1, so the
plan is deterministic and independent of how it is run. Every mistake raises
:class:`~boopexp.errors.ConfigError` with one line naming the file, the key, the value and what
is allowed.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from boopexp import __version__, schema
from boopexp.agents import roster
from boopexp.agents.budget import AGENT_BUDGET_KEY, Budget
from boopexp.agents.specs import (
    DEFAULT_PRESET,
    PAPER_PARAMS,
    PRESETS,
    AgentSpec,
    canonical_name,
)
from boopexp.errors import ConfigError
from boopexp.errors import show_value as _show
from boopexp.experiments.sprt import SprtSpec, parse_sprt
from boopexp.experiments.sweep import Sweep, apply_point, label, parse_sweep
from boopexp.experiments.tournament import Tournament, parse_tournament
from boopexp.games import registry as games
from boopexp.games.registry import DEFAULT_GAME
from boopexp.play import identity
from boopexp.play.contract import GameTask, check_max_plies
from boopexp.play.openings import Draw, parse_openings
from boopexp.play.settings import GameSettings

#: Top-level keys of a config file, and which of them must be present.
CONFIG_KEYS: tuple[str, ...] = (
    "name",
    "seed",
    "games_per_side",
    "budget",
    "preset",
    "params",
    "agents",
    "pairings",
    "max_plies",
    "sprt",
    "tournament",
    "sweep",
    "openings",
    "game",
)
REQUIRED_KEYS: tuple[str, ...] = ("name", "seed", "games_per_side", "pairings")
#: The most games of one pairing: every game index must be an int64 (the store's columns, the
#: shards' and tallies' arithmetic: identity.MAX_GAME_INDEX).
MAX_GAMES = identity.MAX_GAME_INDEX
#: The most games per side: a mirror pairing plays twice as many.
MAX_GAMES_PER_SIDE = MAX_GAMES // 2
#: Keys that plan the games (which pairings, how many, at which points, when to stop):
#: :func:`parse_settings` takes none of them.
PLANNING_KEYS: tuple[str, ...] = ("games_per_side", "pairings", "tournament", "sweep", "sprt")
#: Keys of which a config needs exactly one: the pairings written out, or a tournament that makes them.
PAIRING_KEYS: tuple[str, ...] = ("pairings", "tournament")

#: Why a command that plans the games itself (:func:`parse_settings`) refuses each planning key.
_PLANNED_BY_THE_COMMAND: dict[str, str] = {key: "the games are planned by the command" for key in PLANNING_KEYS}

# The name becomes a folder (results/<name>/), so keep it to characters safe in any shell.
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class PlanEntry:
    """One planned pairing as the store sees it: its identity and how many games it should hold."""

    pairing: str
    p1: str
    p2: str
    config_hash: str
    games: int
    sweep: tuple[tuple[str, Any], ...] = ()
    shard: identity.Shard | None = None

    @property
    def share(self) -> int:
        """The games of the pairing this store is to hold: all ``games``, or a shard's share."""
        return self.games if self.shard is None else self.shard.share(self.config_hash, self.pairing, self.games)

    def counts(self, game_index: int) -> bool:
        """Whether game ``game_index`` of this pairing is planned here (below ``games``, and the
        shard's when the store is a shard's)."""
        return game_index < self.games and (self.shard is None
                                            or self.shard.holds(self.config_hash, self.pairing, game_index))

    @property
    def label(self) -> str:
        """The pairing string, with the sweep point in brackets if there is one."""
        return self.pairing if not self.sweep else f"{self.pairing} [{label(dict(self.sweep))}]"


@dataclass(frozen=True)
class PlannedPairing:
    """A pairing string with both resolved agents, its settings hash and its number of games.

    Attributes:
        settings: the settings of its games (a sweep varies the budget from point to point).
        sweep: the sweep point it belongs to, ``((axis, value), ...)``; empty when not swept.
    """

    p1_spec: AgentSpec
    p2_spec: AgentSpec
    config_hash: str
    games: int
    settings: GameSettings
    sweep: tuple[tuple[str, Any], ...] = ()
    shard: identity.Shard | None = None

    @property
    def budget(self) -> Budget:
        """The budget of its games."""
        return self.settings.budget

    @property
    def p1(self) -> str:
        return self.p1_spec.name

    @property
    def p2(self) -> str:
        return self.p2_spec.name

    @property
    def pairing(self) -> str:
        return identity.pairing_name(self.p1, self.p2)

    def entry(self) -> PlanEntry:
        """The store's view of this pairing."""
        return PlanEntry(self.pairing, self.p1, self.p2, self.config_hash, self.games, self.sweep, self.shard)

    @property
    def share(self) -> int:
        """The games of this pairing to play here: all of them, or the shard's share."""
        return self.entry().share

    def indices(self) -> range:
        """The game indices to play here, in order: 0..games-1, or the shard's."""
        if self.shard is None:
            return range(self.games)
        return self.shard.indices(self.config_hash, self.pairing, self.games)

    def task(self, game_index: int) -> GameTask:
        """Game ``game_index`` of this pairing (its settings hash computed once, here)."""
        return self.settings.task(self.p1_spec, self.p2_spec, game_index, config_hash=self.config_hash,
                                  sweep=self.sweep)

    def to_dict(self) -> dict[str, Any]:
        """The ``plan:`` item written to a store's config.yaml (with its budget and sweep point
        when the config is swept)."""
        out = {
            "pairing": self.pairing,
            "p1": self.p1,
            "p2": self.p2,
            "config_hash": self.config_hash,
            "games": self.games,
            "p1_spec": self.p1_spec.to_dict(),
            "p2_spec": self.p2_spec.to_dict(),
        }
        if self.sweep:
            out["sweep"] = dict(self.sweep)
            out["budget"] = self.budget.to_dict()
        return out


@dataclass(frozen=True)
class ExperimentConfig:
    """A validated experiment configuration (agent names canonical, params effective).

    Attributes:
        settings: what every game is played with (:class:`~boopexp.play.settings.GameSettings`):
            the experiment's name (the default output folder ``results/<name>/``; not part of any
            hash), the seed, the budget, the preset (``code-0.6.2`` or ``paper``, AGENTS.md §C.4),
            the ply cap (None: :data:`boopexp.play.contract.MAX_PLIES`, 1000) and the openings
            (``openings:``, docs/openings.md: game pair i of every pairing starts from position
            i; None: every game starts from the empty board).
        games_per_side: games with each agent of a pairing as p1 (a mirror plays twice as many).
        params: the effective paper parameters ``k``, ``m``, ``d`` (defaults filled in).
        agents: the ``agents:`` declarations (:mod:`boopexp.agents.roster`): per-agent overrides of
            :class:`~boopexp.agents.specs.MCTSConfig` fields for built-in names, variants
            (``{base: ..., ...}``) and plugins (``{plugin: "module:callable", ...}``).
        pairings: the configured pairings ``(A, B)``, canonical names, in file order (those of
            the tournament when there is one).
        sprt: the sequential test that may stop a pairing early (:mod:`boopexp.experiments.sprt`), or None.
        tournament: the ``tournament:`` block the pairings come from, if any.
        sweep: the ``sweep:`` axes, if any; then ``points`` holds one config per grid point.
        points: the configs of the sweep's points (each with its ``point``), in grid order.
        point: for a point's config, its ``((axis, value), ...)``; empty otherwise.
        shard: play only this shard of the plan (``run --shard I/N``; docs/cluster.md), or None.
        source: where the config came from (for messages).
        directory: the config file's folder, where plugin modules are also looked for.
    """

    settings: GameSettings
    games_per_side: int
    params: dict[str, Any] = field(default_factory=dict)
    agents: dict[str, dict[str, Any]] = field(default_factory=dict)
    pairings: tuple[tuple[str, str], ...] = ()
    sprt: SprtSpec | None = None
    tournament: Tournament | None = None
    sweep: Sweep | None = None
    points: tuple[ExperimentConfig, ...] = ()
    point: tuple[tuple[str, Any], ...] = ()
    shard: identity.Shard | None = None
    source: str = "<config>"
    directory: str | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        """The experiment's name (:attr:`settings`): the default output folder ``results/<name>/``."""
        return self.settings.experiment

    def agent(self, name: str, overrides: Mapping[str, Any] | None = None) -> AgentSpec:
        """The resolved spec of agent ``name`` under this config's preset, params and declarations.

        Args:
            overrides: parameters (or plugin keyword arguments) applied on top of the agent's
                declaration, e.g. from ``boopexp game --p1-param``.
        """
        declared = self.agents
        if overrides:
            canon = self.canonical(name)
            declared = {**declared, canon: {**declared.get(canon, {}), **overrides}}
        return roster.resolve(name, declared, self.settings.preset, self.params, self.directory)

    def agent_names(self) -> tuple[str, ...]:
        """Every agent the config names: those of its pairings (a tournament's) in order, then
        those it declares and pairs with none (what ``boopexp play --config`` and ``serve``'s
        /play offer as opponents)."""
        return tuple(dict.fromkeys([*(name for pair in self.pairings for name in pair), *self.agents]))

    def canonical(self, name: str) -> str:
        """The registry name of ``name`` (a built-in, an alias of one, or a declared agent)."""
        return roster.canonical(name, self.agents)

    def planned_pairing(self, p1: str, p2: str, games: int) -> PlannedPairing:
        """The pairing "p1 vs p2" of this config with ``games`` games."""
        s1, s2 = self.agent(p1), self.agent(p2)
        if self.settings.openings is not None:
            with schema.within(self.source):
                self.settings.openings.check_games(games, identity.pairing_name(s1.name, s2.name))
        return PlannedPairing(s1, s2, self.settings.pairing_hash(s1, s2), games, self.settings, self.point, self.shard)

    def plan(self, games_per_side: int | None = None) -> tuple[PlannedPairing, ...]:
        """Every pairing string of the config with its number of games (per sweep point, in
        grid order, when swept).

        Args:
            games_per_side: overrides the config's value (the hashes do not depend on it, so a
                shorter run's games are the first games of the full run).
        """
        if self.points:
            return tuple(p for point in self.points for p in point.plan(games_per_side))
        if not self.pairings:  # settings only (parse_settings): never a default pairing in its stead
            raise ConfigError(f"{self.source}: no pairings to plan (settings only: the caller plans the games)")
        n = self.games_per_side if games_per_side is None else games_per_side
        out: list[PlannedPairing] = []
        for a, b in self.pairings:
            if a == b:
                out.append(self.planned_pairing(a, a, 2 * n))
            else:
                out.append(self.planned_pairing(a, b, n))
                out.append(self.planned_pairing(b, a, n))
        return tuple(out)

    def mirror_plan(self, agent: str, games: int) -> tuple[PlannedPairing, ...]:
        """The config's plan with "agent vs agent" set to ``games`` games (added if absent; at
        every point of a sweep).

        Raises:
            ConfigError: ``games`` is not an integer in 1..:data:`MAX_GAMES`.
        """
        schema.integer(games, "games", 1, MAX_GAMES, want=f"a positive integer of at most {MAX_GAMES} (2^63-1)")
        if self.points:
            return tuple(p for point in self.points for p in point.mirror_plan(agent, games))
        mirror = self.planned_pairing(agent, agent, games)
        plan = [mirror if p.pairing == mirror.pairing else p for p in self.plan()]
        if mirror not in plan:
            plan.append(mirror)
        return tuple(plan)

    def tasks(self, plan: tuple[PlannedPairing, ...]) -> list[GameTask]:
        """The planned games, pairing by pairing, game indices 0..n-1, each with its own seed."""
        return list(self.iter_tasks(plan))

    def iter_tasks(self, plan: tuple[PlannedPairing, ...],
                   indices: Callable[[PlannedPairing], Iterable[int]] | None = None) -> Iterator[GameTask]:
        """:meth:`tasks`, one at a time (a long plan is never built in memory).

        Args:
            indices: the game indices of each pairing to make tasks of (default: all of
                :meth:`PlannedPairing.indices`): a resumed run's missing games, asked before a
                task (and its seed) is made for a stored game.
        """
        return (self._task(p, i) for p in plan for i in (p.indices() if indices is None else indices(p)))

    def _task(self, pairing: PlannedPairing, game_index: int) -> GameTask:
        with schema.within(self.source):  # a start the openings have not: named by the config
            return pairing.task(game_index)

    def start(self, game_index: int) -> str | Draw | None:
        """The start of game ``game_index`` of any pairing (game pair ``i`` starts from position
        ``i`` of the openings; docs/openings.md): a suite's line or a draw, which the game's worker
        resolves (:func:`boopexp.play.starts.resolve_start`), or None: the empty board."""
        with schema.within(self.source):
            return self.settings.start(game_index)

    def resolved(self, plan: tuple[PlannedPairing, ...] | None = None) -> dict[str, Any]:
        """The resolved config (effective values and the plan) that a store's config.yaml keeps."""
        plan = self.plan() if plan is None else plan
        settings = self.settings
        # max_plies only when set: the saved config of a default run stays byte for byte the same.
        cap = {} if settings.max_plies is None else {"max_plies": settings.max_plies}
        out = {
            "name": self.name,
            "seed": settings.seed,
            "games_per_side": self.games_per_side,
            "budget": settings.budget.to_dict(),
            "preset": settings.preset,
            "params": dict(self.params),
            "agents": {k: dict(v) for k, v in self.agents.items()},
            **(
                {"tournament": self.tournament.to_dict()}
                if self.tournament is not None
                else {"pairings": [[a, b] for a, b in self.pairings]}
            ),
            **cap,
            **({"sweep": self.sweep.to_dict()} if self.sweep is not None else {}),
            "plan": [p.to_dict() for p in plan],
            "boopexp_version": __version__,
        }
        if self.sprt is not None:  # only when set: the stores of runs without it are unchanged
            out["sprt"] = self.sprt.to_dict()
        if self.shard is not None:  # likewise: an unsharded store's config.yaml is as it was
            out["shard"] = self.shard.to_dict()
        if settings.openings is not None:  # likewise
            out["openings"] = settings.openings.to_dict()
        if settings.game_options:  # likewise: the game's name and its options
            out["game"] = {"name": settings.game, **games.options_json(settings.game_options)}
        elif settings.game != DEFAULT_GAME:  # likewise
            out["game"] = settings.game
        return out

    def with_shard(self, shard: identity.Shard) -> ExperimentConfig:
        """A copy that plans only ``shard``'s games (at every point of a sweep).

        Raises:
            ConfigError: the config has ``sprt:``, whose games are not known in advance.
        """
        if self.sprt is not None:
            raise ConfigError(f"--shard {shard}: {self.source} has sprt:, which decides after each block of "
                              "games which games are played next, so its games cannot be dealt to shards in "
                              "advance; run it unsharded (--backend dask spreads its games over a cluster)")
        points = tuple(dataclasses.replace(p, shard=shard) for p in self.points)
        return dataclasses.replace(self, shard=shard, points=points)

    def with_pairings(self, pairings: tuple[tuple[str, str], ...], games_per_side: int,
                      agents: Mapping[str, dict[str, Any]] | None = None) -> ExperimentConfig:
        """A copy that plays ``pairings`` (canonical names), ``games_per_side`` each way, with
        ``agents`` declared on top of the config's; at every point of a sweep.

        The one way to re-plan a config: :meth:`plan` reads a sweep's points, so replacing only
        the top-level pairings would silently plan the points' old ones.
        """
        with schema.within(self.source):
            check_games_per_side(games_per_side)

        def replan(config: ExperimentConfig) -> ExperimentConfig:
            return dataclasses.replace(config, agents={**config.agents, **(agents or {})}, pairings=tuple(pairings),
                                       games_per_side=games_per_side, tournament=None)

        return dataclasses.replace(replan(self), points=tuple(replan(p) for p in self.points))

    def with_games_per_side(self, games_per_side: int) -> ExperimentConfig:
        """A copy with another ``games_per_side`` (validated)."""
        with schema.within(self.source):
            check_games_per_side(games_per_side)
        points = tuple(dataclasses.replace(p, games_per_side=games_per_side) for p in self.points)
        return dataclasses.replace(self, games_per_side=games_per_side, points=points)


def check_games_per_side(value: Any) -> int:
    """``value`` if it is an integer in 1..:data:`MAX_GAMES_PER_SIDE`: the one check of a config's
    ``games_per_side`` and of ``--games-per-side``."""
    return schema.integer(value, "games_per_side", 1, MAX_GAMES_PER_SIDE,
                          want=f"a positive integer of at most {MAX_GAMES_PER_SIDE} (2^62-1)")


def parse_pairing(text: str, canonical: Callable[[str], str] = canonical_name) -> str:
    """The pairing string of ``"A vs B"`` with both names made canonical as configs do
    (``"mcts+SEP vs random"`` -> ``"mcts-co vs random"``).

    Args:
        canonical: maps a name to its registry name (a config's :meth:`ExperimentConfig.canonical`
            also knows its declared agents); it raises ConfigError for an unknown name.

    Raises:
        ConfigError: not of the form "A vs B", or an unknown agent name.
    """
    parts = text.split(identity.PAIRING_SEPARATOR) if isinstance(text, str) else []
    if len(parts) != 2 or not all(part.strip() for part in parts):
        raise ConfigError(f"pairing {_show(text)} must look like \"A vs B\" (p1 first), e.g. \"mcts-co vs vanilla\"")
    return identity.pairing_name(canonical(parts[0].strip()), canonical(parts[1].strip()))


def load_config(path: str | Path) -> ExperimentConfig:
    """Read and validate a YAML experiment config.

    Raises:
        ConfigError: missing file, malformed YAML (with line and column) or any invalid entry.
    """
    data, src, directory = read_config_file(path)
    return parse_config(data, src, directory=directory)


def read_config_file(path: str | Path) -> tuple[Any, str, str]:
    """Read a YAML config file: its data, its name for messages and its folder (plugins, relative paths).

    Raises:
        ConfigError: missing or unreadable file, malformed YAML (with line and column).
    """
    src = str(path)
    text = schema.read_text(path, "config file")
    return load_yaml(text, src), src, str(Path(path).resolve().parent)


def load_yaml(text: str, source: str = "<config>", *, stored: bool = False) -> Any:
    """Parse YAML text, refusing duplicate keys; errors give file, line and column. The one YAML
    reader of configs and of the config.yaml saved with a store.

    What a person writes (a config, a ``--param`` value) is read with YAML 1.2's numbers:
    ``5e-1`` and ``1e3`` are floats, as in YAML 1.2 and JSON, where PyYAML's YAML 1.1 reads them
    as strings (its floats need a dot and a signed exponent) and ``seconds: 5e-1`` was refused as
    not a number. A file boopexp wrote (``stored``: a store's config.yaml) is read by the rules
    PyYAML wrote it with, which leave a string like the settings hash ``1e65966264717835`` unquoted.

    Raises:
        ConfigError: malformed YAML, a key given twice in one mapping, or nesting too deep to parse.
    """
    if stored:
        try:
            return yaml.load(text, Loader=_StoredLoader)  # noqa: S506 - SafeLoader rules on libyaml
        except (yaml.YAMLError, RecursionError):
            pass  # read again below by the Python parser, whose error messages the project gives
    try:
        return yaml.load(text, Loader=_StrictLoader if stored else _ConfigLoader)  # noqa: S506 - SafeLoader subclasses
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source} line {mark.line + 1}, column {mark.column + 1}" if mark else source
        problem = exc.problem or exc.context or "syntax error"
        raise ConfigError(f"{where}: malformed YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: malformed YAML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        # PyYAML composes nested nodes recursively: a few hundred levels of [ or { exhaust the stack.
        raise ConfigError(f"{source}: malformed YAML: nested too deeply to read (a boopexp config is a few "
                          "levels deep)") from None


def parse_config(data: Any, source: str = "<config>", directory: str | None = None) -> ExperimentConfig:
    """Validate a parsed YAML document into an :class:`ExperimentConfig`.

    Args:
        data: the document (a mapping).
        source: file name used as the prefix of error messages.
        directory: the config file's folder (plugin modules are also looked for there).

    Raises:
        ConfigError: one line naming the key, the bad value and what is allowed.
    """
    return _parse(data, source, directory, settings_only=False)


def parse_settings(data: Any, source: str = "<config>", directory: str | None = None) -> ExperimentConfig:
    """Validate the settings every game shares (name, seed, budget, preset, params, agents,
    max_plies) for a caller that plans its own games (the tuner): no pairings, and its
    :meth:`~ExperimentConfig.plan` refuses to plan until :meth:`~ExperimentConfig.with_pairings`.

    Raises:
        ConfigError: one line naming the key, the bad value and what is allowed; a key that plans
            games (:data:`PLANNING_KEYS`) is refused (the caller may say why first).
    """
    return _parse(data, source, directory, settings_only=True)


def _parse(data: Any, source: str, directory: str | None, settings_only: bool) -> ExperimentConfig:
    src = source
    if data is None:
        raise ConfigError(f"{src}: the config is empty; required keys: {', '.join(REQUIRED_KEYS)}")
    if not isinstance(data, Mapping):
        raise ConfigError(f"{src}: the config must be a mapping of keys, got {_show(data)}")
    with schema.within(src):
        schema.check_keys(data, CONFIG_KEYS, refused=_PLANNED_BY_THE_COMMAND if settings_only else None)
    if "sweep" in data:
        return _parse_swept(data, src, directory)
    with schema.within(src):
        required = tuple(k for k in REQUIRED_KEYS if not (settings_only and k in PLANNING_KEYS))
        schema.require_keys(data, required, alternatives={"pairings": "tournament"})
        if all(key in data for key in PAIRING_KEYS):
            raise ConfigError("give either pairings or tournament, not both")
        name = data["name"]
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise schema.invalid("name", name, "a non-empty string of letters, digits, '.', '_' or '-' "
                                               "(it names the output folder)")
        seed = identity.check_seed(data["seed"])
        games_per_side = 0 if settings_only else check_games_per_side(data["games_per_side"])
        game, game_options = games.parse_game(data.get("game", DEFAULT_GAME), directory)
        # costs.solver_scale scales the game's own solver costs, not boop.'s
        budget = Budget.from_mapping(data.get("budget"), game.device_costs())
        preset = schema.choice(data.get("preset", DEFAULT_PRESET), "preset", PRESETS)
        max_plies = check_max_plies(data.get("max_plies"))
        params = _parse_params(data.get("params"), preset, game.paper_params())
        agents = roster.parse_agents(data.get("agents"), preset, params, directory)
        _check_agent_budgets(agents, budget, preset, params, directory)
        openings = parse_openings(data.get("openings"), directory, game)
        tournament = None
        if settings_only:
            pairings: tuple[tuple[str, str], ...] = ()
        elif "tournament" in data:
            tournament = parse_tournament(data["tournament"], lambda n: roster.canonical(n, agents))
            pairings = tournament.pairings()
        else:
            pairings = _parse_pairings(data["pairings"], agents)
    sprt = parse_sprt(src, data.get("sprt"))

    return ExperimentConfig(
        settings=GameSettings(name, seed, budget, preset, max_plies, openings, game.name, game_options),
        games_per_side=games_per_side,
        params=params,
        agents=agents,
        pairings=pairings,
        sprt=sprt,
        tournament=tournament,
        source=src,
        directory=directory,
    )


def _check_agent_budgets(agents: Mapping[str, Mapping[str, Any]], budget: Budget, preset: str,
                        params: Mapping[str, Any], directory: str | None) -> None:
    """Refuse an agent whose own ``budget`` scales the config's ``budget`` out of its bounds
    (a sweep checks every point: each is parsed here).

    Raises:
        ConfigError: ``agents.NAME.budget = … must be at most … s a move (…)``.
    """
    for name, decl in agents.items():
        if AGENT_BUDGET_KEY not in decl:
            continue
        spec = roster.resolve(name, agents, preset, params, directory)
        if spec.budget is not None:
            with schema.under(f"agents.{name}"):
                spec.budget.move_budgets(budget)


def plan_entries(resolved: Mapping[str, Any], source: str = "config.yaml") -> tuple[PlanEntry, ...]:
    """The ``plan:`` of a store's resolved config.yaml.

    Raises:
        ConfigError: the document has no readable plan.
    """
    plan = resolved.get("plan") if isinstance(resolved, Mapping) else None
    if not isinstance(plan, list):
        raise ConfigError(f"{source}: no 'plan:' list; was it written by boopexp run?")
    shard = identity.Shard.from_dict(resolved["shard"], source) if resolved.get("shard") is not None else None
    out = []
    for i, item in enumerate(plan):
        try:
            out.append(
                PlanEntry(
                    pairing=str(item["pairing"]),
                    p1=str(item["p1"]),
                    p2=str(item["p2"]),
                    config_hash=str(item["config_hash"]),
                    games=int(item["games"]),
                    sweep=tuple(dict(item.get("sweep") or {}).items()),
                    shard=shard,
                )
            )
        except (KeyError, TypeError, ValueError):
            raise ConfigError(
                f"{source}: plan item {i} = {_show(item)} lacks pairing/p1/p2/config_hash/games"
            ) from None
    return tuple(out)


def stored_plan(resolved: Mapping[str, Any] | None, source: str = "config.yaml") -> tuple[PlanEntry, ...] | None:
    """The plan of a store's config.yaml (``resolved``: as read, None when there is none), or
    None when it has no ``plan:`` key (no config.yaml, or one written by hand): **the** rule of
    ``status``, ``run --dry-run`` and the tables, under which every stored game counts when there
    is no plan, and a plan that cannot be read is refused rather than replaced by every game
    (which would silently mix settings).

    Raises:
        ConfigError: a ``plan:`` that cannot be read (:func:`plan_entries`).
    """
    if resolved is None or (isinstance(resolved, Mapping) and "plan" not in resolved):
        return None
    return plan_entries(resolved, source)


def _parse_swept(data: Mapping[str, Any], src: str, directory: str | None) -> ExperimentConfig:
    """A config with a ``sweep:``: the base config, then one config per grid point."""
    if "sprt" in data:
        # boopexp.experiments.sprt keys a test by pairing string, which every point of a sweep repeats.
        raise ConfigError(f"{src}: sprt and sweep cannot be combined yet (run one config per sweep point)")
    base = parse_config({k: v for k, v in data.items() if k != "sweep"}, src, directory)
    with schema.within(src):
        sweep = parse_sweep(data["sweep"], base.settings.budget.mode, sum(p.games for p in base.plan()))
        for axis, _ in sweep.axes:
            if axis.startswith("agents."):
                with schema.within(f"sweep: axis {axis!r}"):
                    base.canonical(axis.split(".")[1])
    points = []
    for point in sweep.points():
        doc = apply_point(data, point, base.canonical)
        config = parse_config(doc, f"{src}: sweep point {label(point)}", directory)
        points.append(dataclasses.replace(config, source=src, point=tuple(point.items())))
    # Two points that give one pairing the same settings would plan the same games twice.
    seen: dict[tuple[str, str], tuple[tuple[str, Any], ...]] = {}
    for config in points:
        for p in config.plan():
            first = seen.setdefault((p.config_hash, p.pairing), config.point)
            if first != config.point:
                raise ConfigError(
                    f"{src}: sweep: pairing {p.pairing!r} is the same games at ({label(dict(first))}) and "
                    f"({label(dict(config.point))}): the swept keys do not change it (sweep an agent of every pairing)"
                )
    return dataclasses.replace(base, sweep=sweep, points=tuple(points))


# --------------------------------------------------------------------------------------------
# validation helpers


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice (PyYAML silently keeps the last one)."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    seen: dict[Any, Any] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            duplicate = key in seen
        except TypeError:  # unhashable key: let the default constructor report it
            continue
        if duplicate:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark, f"duplicate key {key!r}", key_node.start_mark
            )
        seen[key] = True
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    """An integer, or a :class:`~boopexp.schema.LongInteger` where it has more digits than
    Python converts (int() would raise a ValueError before any key's check could name it)."""
    return schema.text_int(node.value, lambda _: yaml.SafeLoader.construct_yaml_int(loader, node))


_StrictLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)


class _StoredLoader(getattr(yaml, "CSafeLoader", _StrictLoader)):  # type: ignore[misc]
    """_StrictLoader's rules on libyaml's parser where PyYAML has it (its wheels do): for the
    config.yaml boopexp itself wrote beside a store, which holds the whole plan; the pure-Python
    scanner made reading them most of the time ``serve`` took to list the stores (1.4 s for 59
    stores, 0.5 s with this). A person's config keeps the Python parser and its error messages."""


_StoredLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_StoredLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)


class _ConfigLoader(_StrictLoader):
    """_StrictLoader that also reads YAML 1.2's exponent floats (``5e-1``, ``1e3``, ``2.5E3``)."""


# Only the forms YAML 1.1 leaves as strings: an exponent without a dot, or an unsigned exponent
# (the floats it does read are resolved as before).
_ConfigLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


def _parse_params(data: Any, preset: str, game_defaults: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``params:`` block with the values in effect, not only those written (k's default
    depends on the preset; a game other than boop. has its own, ``game_defaults``), each checked by
    its row of :data:`~boopexp.agents.specs.PAPER_PARAMS`."""
    data = schema.mapping({} if data is None else data, "params", "a mapping like {k: 21, m: 5, d: 0.9}")
    schema.check_keys(data, tuple(PAPER_PARAMS), "params")
    defaults = {"k": PRESETS[preset]["k"], "m": PAPER_PARAMS["m"].default, "d": PAPER_PARAMS["d"].default,
                **(game_defaults or {})}
    params = {key: data.get(key, default) for key, default in defaults.items()}
    for key, value in params.items():
        PAPER_PARAMS[key].check(value, f"params.{key}")
    params["d"] = float(params["d"])
    return params


def _parse_pairings(data: Any, declared: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    if not isinstance(data, list) or not data:
        raise schema.invalid("pairings", data, "a non-empty list of pairs like [mcts-co, vanilla]")
    out: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(data):
        if not isinstance(item, list) or len(item) != 2 or not all(isinstance(n, str) for n in item):
            raise schema.invalid(f"pairings[{i}]", item, "a list of two agent names like [mcts-co, vanilla]")
        with schema.under(f"pairings[{i}]"):
            a, b = roster.canonical(item[0], declared), roster.canonical(item[1], declared)
        # [A, B] and [B, A] plan the same games: a second listing is certainly a mistake.
        for pairing in {identity.pairing_name(a, b), identity.pairing_name(b, a)}:
            if pairing in seen:
                raise ConfigError(f"pairings[{i}] = {_show(item)} repeats pairings[{seen[pairing]}]"
                                  " (each pair already plays both sides)")
        seen[identity.pairing_name(a, b)] = seen[identity.pairing_name(b, a)] = i
        out.append((a, b))
    return tuple(out)
