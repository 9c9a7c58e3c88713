"""The tune config (YAML → frozen dataclasses; no engine, no Optuna).

Tune configs: an experiment config's settings plus a ``tune:`` section → frozen dataclasses.

A tune config is an experiment config (``name``, ``seed``, ``budget``, ``preset``, ``params``,
``agents``) without ``pairings``/``games_per_side`` — the tuner plans its own games — and with::

    tune:
      agent: mcts-co                 # the agent to tune: an MCTS built-in or a declared variant
      space:                         # MCTSConfig fields (or the paper's k, m, d) and their ranges
        k: {low: 5, high: 40}        # k sets co_playout_plies and playout_depth, as the paper's k
        preselect_m: {low: 1, high: 12}
        discount: {low: 0.5, high: 1.0}
        uct_c: {low: 0.05, high: 2.0, log: true}
      opponents: [mcts-co]           # default: the agent itself, untuned
      trials: 40
      games_per_trial: 40            # split evenly over the opponents and both seats
      startup_trials: 10             # TPE's random trials before it models (Optuna's default)
      confirm:
        top: 3                       # candidates re-played against the baseline
        games: 400                   # per candidate, half in each seat
        baseline: mcts-co            # default: the agent itself, untuned
        alpha: 0.05                  # family-wise (Holm) level of the one-sided tests

A parameter written without a range (``uct_c:``), or a space given as a list of names
(``space: [k, preselect_m, discount, uct_c]``), is searched over the tuner's range of its row in
the parameter table (:data:`boopexp.agents.specs.MCTS_PARAMS`, ``PAPER_PARAMS``; for alphabeta
its own, ``ALPHABETA_PARAMS``; docs/agents.md):
the list above is the ranges written out. Every mistake raises :class:`~boopexp.errors.ConfigError`:
one line naming the file, the key
(``tune.space.uct_c.low``), the value and what is allowed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boopexp import schema
from boopexp.agents.specs import ALPHABETA_PARAMS, MCTS_PARAMS, PAPER_PARAMS, Param
from boopexp.errors import ConfigError
from boopexp.errors import show_value as _show
from boopexp.experiments.config import CONFIG_KEYS, PLANNING_KEYS, ExperimentConfig, parse_settings, read_config_file
from boopexp.play import identity

TUNE_KEY = "tune"
_PLANS_ITS_OWN = "the tuner plans its own games; set tune.opponents and tune.games_per_trial"
#: Why a tune config takes none of the keys of an experiment config that plan games.
NOT_IN_A_TUNE: dict[str, str] = {
    "games_per_side": _PLANS_ITS_OWN,
    "pairings": _PLANS_ITS_OWN,
    "tournament": _PLANS_ITS_OWN,
    "sweep": "tune searches parameters itself; use sweep with boopexp run",
    "sprt": "a trial plays all its games and the confirmation tests a fixed number; use sprt with boopexp run",
}
TOP_KEYS: tuple[str, ...] = tuple(k for k in CONFIG_KEYS if k not in PLANNING_KEYS) + (TUNE_KEY,)
TUNE_KEYS: tuple[str, ...] = ("agent", "space", "opponents", "trials", "games_per_trial", "startup_trials", "confirm")
TUNE_REQUIRED: tuple[str, ...] = ("agent", "space", "trials", "games_per_trial")
CONFIRM_KEYS: tuple[str, ...] = ("top", "games", "baseline", "alpha")
RANGE_KEYS: tuple[str, ...] = ("low", "high", "log")

DEFAULT_STARTUP_TRIALS = 10
DEFAULT_TOP = 3
DEFAULT_CONFIRM_GAMES = 400
DEFAULT_ALPHA = 0.05

#: The parameters a search may vary, and their default ranges: the rows of the parameter tables
#: with a tuner's range (docs/agents.md, "Parameters"): the paper's k, m, d (which set MCTSConfig
#: fields: k sets two, as :func:`boopexp.agents.specs.resolve_agent` does) and the numeric
#: MCTSConfig fields (booleans are switches, not a search dimension).
TUNABLE_PARAMS: dict[str, Param] = {
    name: row for name, row in {**PAPER_PARAMS, **MCTS_PARAMS}.items() if row.tune is not None
}
TUNABLE: tuple[str, ...] = tuple(TUNABLE_PARAMS)
#: What an agent of each kind may vary: an MCTS agent the table above, alpha-beta the rows of its
#: own table (:data:`boopexp.agents.specs.ALPHABETA_PARAMS`) with a tuner's range.
TUNABLE_BY_KIND: dict[str, dict[str, Param]] = {
    "mcts": TUNABLE_PARAMS,
    "alphabeta": {name: row for name, row in ALPHABETA_PARAMS.items() if row.tune is not None},
}
#: The MCTSConfig fields each paper parameter sets.
PAPER_ALIASES: dict[str, tuple[str, ...]] = {name: row.sets for name, row in PAPER_PARAMS.items()}


@dataclass(frozen=True)
class SearchParam:
    """One dimension of the search space.

    Attributes:
        name: as written in ``tune.space`` (an MCTSConfig field, or ``k``/``m``/``d``).
        fields: the MCTSConfig fields it sets.
        kind: ``int`` or ``float``.
        low, high: inclusive bounds.
        log: sample on a log scale.
    """

    name: str
    fields: tuple[str, ...]
    kind: str
    low: float
    high: float
    log: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "low": self.low, "high": self.high, "log": self.log}


@dataclass(frozen=True)
class ConfirmSettings:
    """The confirmation stage: ``top`` candidates, ``games`` each against ``baseline``, level ``alpha``."""

    top: int = DEFAULT_TOP
    games: int = DEFAULT_CONFIRM_GAMES
    baseline: str = ""
    alpha: float = DEFAULT_ALPHA


@dataclass(frozen=True)
class TuneConfig:
    """A validated tune config.

    Attributes:
        experiment: the shared settings (name, seed, budget, preset, params, agents), without
            pairings (:func:`boopexp.experiments.config.parse_settings`): the tuner plans every game itself.
        agent: the canonical name of the agent tuned.
        space: the search dimensions, in file order.
        opponents: canonical names of the trial opponents, in file order.
        trials: completed trials wanted.
        games_per_trial: games of one trial, split evenly over opponents and seats.
        startup_trials: TPE's random trials before it models the objective.
        confirm: the confirmation stage.
    """

    experiment: ExperimentConfig
    agent: str
    space: tuple[SearchParam, ...]
    opponents: tuple[str, ...]
    trials: int
    games_per_trial: int
    startup_trials: int = DEFAULT_STARTUP_TRIALS
    confirm: ConfirmSettings = ConfirmSettings()

    @property
    def name(self) -> str:
        return self.experiment.name

    @property
    def games_per_side(self) -> int:
        """Games of a trial with the candidate in one seat against one opponent."""
        return self.games_per_trial // (2 * len(self.opponents))

    def overrides(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The MCTSConfig fields set by one point of the space ``{space name: value}``."""
        out: dict[str, Any] = {}
        for p in self.space:
            value = int(values[p.name]) if p.kind == "int" else float(values[p.name])
            for f in p.fields:
                out[f] = value
        return out

    def variant(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The ``agents:`` declaration of the tuned agent at one point of the space."""
        return {"base": self.agent, **self.overrides(values)}

    def with_candidates(self, candidates: Mapping[str, Mapping[str, Any]], opponents: tuple[str, ...],
                        games_per_side: int) -> ExperimentConfig:
        """The experiment "each candidate against each opponent", both seats.

        Args:
            candidates: ``{agent name: point of the space}``; each becomes a variant of the agent.
            opponents: canonical agent names.
            games_per_side: games with the candidate in each seat, per opponent.
        """
        pairings = tuple((name, o) for name in candidates for o in opponents)
        variants = {name: self.variant(values) for name, values in candidates.items()}
        return self.experiment.with_pairings(pairings, games_per_side, agents=variants)

    def search_settings(self) -> dict[str, Any]:
        """What fixes the trials (not how many, nor the confirmation): a study made under other
        search settings cannot be resumed under these."""
        exp, settings = self.experiment, self.experiment.settings
        return {
            "seed": settings.seed,
            "budget": settings.budget.to_dict(),
            "preset": settings.preset,
            "params": dict(exp.params),
            "agents": {k: dict(v) for k, v in exp.agents.items()},
            "agent": self.agent,
            "space": [p.to_dict() for p in self.space],
            "opponents": list(self.opponents),
            "games_per_trial": self.games_per_trial,
            "startup_trials": self.startup_trials,
            # only when set, like ExperimentConfig.resolved: the default cap is in no hash
            **({} if settings.max_plies is None else {"max_plies": settings.max_plies}),
        }

    def search_hash(self) -> str:
        """16 hex digits of :meth:`search_settings`."""
        import hashlib

        return hashlib.sha256(identity.canonical_json(self.search_settings()).encode("ascii")).hexdigest()[:16]

    def resolved(self) -> dict[str, Any]:
        """The resolved tune config written beside the study (``tune.yaml``)."""
        return {
            **self.search_settings(),
            "name": self.name,
            "trials": self.trials,
            "confirm": dataclasses.asdict(self.confirm),
        }


def load_tune_config(path: str | Path) -> TuneConfig:
    """Read and validate a YAML tune config.

    Raises:
        ConfigError: missing file, malformed YAML or any invalid entry (one line).
    """
    data, src, directory = read_config_file(path)
    return parse_tune_config(data, src, directory=directory)


def parse_tune_config(data: Any, source: str = "<config>", directory: str | None = None) -> TuneConfig:
    """Validate a parsed YAML document into a :class:`TuneConfig`.

    Raises:
        ConfigError: one line naming the key, the bad value and what is allowed.
    """
    src = source
    if not isinstance(data, Mapping):
        raise ConfigError(f"{src}: a tune config must be a mapping with a 'tune:' section, got {_show(data)}")
    with schema.within(src):
        schema.check_keys(data, TOP_KEYS, refused=NOT_IN_A_TUNE, place="in a tune config")
        schema.require_keys(data, (TUNE_KEY,), note=" (the agent, search space, opponents and trials)")
        tune = schema.mapping(data[TUNE_KEY], "tune", f"a mapping with keys {', '.join(TUNE_KEYS)}")
        schema.check_keys(tune, TUNE_KEYS, "tune")
        schema.require_keys(tune, TUNE_REQUIRED, "tune")

    # The shared settings are an experiment config's, validated by the same parser; they plan no
    # games (plan() refuses) until with_candidates gives the tuner's pairings.
    exp = parse_settings({k: v for k, v in data.items() if k != TUNE_KEY}, src, directory)

    with schema.within(src):
        agent = _agent_name(exp, "tune.agent", tune["agent"])
        spec = exp.agent(agent)
        if spec.kind not in TUNABLE_BY_KIND:
            raise ConfigError(f"tune.agent = {_show(tune['agent'])} is a {spec.kind} agent with no parameters to tune;"
                              " tune an MCTS agent, alphabeta or a variant of one")
        space = _parse_space(tune["space"], TUNABLE_BY_KIND[spec.kind])

        opponents_raw = tune.get("opponents", [agent])
        if isinstance(opponents_raw, str):
            opponents_raw = [opponents_raw]
        if not isinstance(opponents_raw, list) or not opponents_raw:
            raise schema.invalid("tune.opponents", opponents_raw, "a non-empty list of agent names")
        opponents: list[str] = []
        for i, raw in enumerate(opponents_raw):
            name = _agent_name(exp, f"tune.opponents[{i}]", raw)
            if name in opponents:
                raise ConfigError(f"tune.opponents[{i}] = {_show(raw)} is listed twice")
            opponents.append(name)

        trials = schema.positive_int(tune["trials"], "tune.trials")
        games = schema.positive_int(tune["games_per_trial"], "tune.games_per_trial")
        per = 2 * len(opponents)
        if games % per:
            raise ConfigError(f"tune.games_per_trial = {games} must be a multiple of {per}"
                              f" (both seats against each of the {len(opponents)} opponent(s))")
        startup = schema.integer(tune.get("startup_trials", DEFAULT_STARTUP_TRIALS), "tune.startup_trials", 0)
        confirm = _parse_confirm(exp, agent, tune.get("confirm"))

        names = {_trial_prefix(agent)}
        clash = [n for n in exp.agents if any(n.startswith(p) for p in names)]
        if clash:
            raise ConfigError(
                f"agents.{clash[0]}: names starting with {agent}. are the tuner's own (trial and candidate agents)"
            )
    return TuneConfig(
        experiment=exp,
        agent=agent,
        space=space,
        opponents=tuple(opponents),
        trials=trials,
        games_per_trial=games,
        startup_trials=startup,
        confirm=confirm,
    )


def _trial_prefix(agent: str) -> str:
    return f"{agent}."


def _agent_name(exp: ExperimentConfig, key: str, raw: Any) -> str:
    """The canonical name of agent ``raw`` of the settings (an unknown one is named by ``key``)."""
    with schema.under(key):
        name = exp.canonical(raw)
    exp.agent(name)  # resolvable: the settings' own parser checked every declared agent
    return name


def _parse_space(data: Any, table: Mapping[str, Param]) -> tuple[SearchParam, ...]:
    """The search space of an agent whose tunable parameters are ``table``'s rows."""
    tunable = tuple(table)
    if isinstance(data, list) and data:  # names only: each parameter over the table's range
        named: dict[Any, Any] = {}
        for i, name in enumerate(data):
            if not isinstance(name, str) or name not in tunable or name in named:
                why = "is listed twice" if name in named else "is not a parameter the tuner varies"
                raise ConfigError(f"tune.space[{i}] = {_show(name)} {why}; allowed: {', '.join(tunable)}")
            named[name] = None
        data = named
    if not isinstance(data, Mapping) or not data:
        raise schema.invalid("tune.space", data, "a non-empty mapping like {uct_c: {low: 0.05, high: 2.0, log: true}}"
                             " or a list of parameters like [k, uct_c] (searched over their ranges in docs/agents.md)")
    schema.check_keys(data, tunable, "tune.space")
    out: list[SearchParam] = []
    owner: dict[str, str] = {}
    for name, rng in data.items():
        key = f"tune.space.{name}"
        row = table[name]
        fields = row.sets or (name,)
        for f in fields:
            if f in owner:
                raise ConfigError(f"{key}: {f} is already set by tune.space.{owner[f]}; give one of them")
            owner[f] = name
        if rng is None:  # the table's range
            assert row.tune is not None
            rng = {"low": row.tune.low, "high": row.tune.high, "log": row.tune.log}
        rng = schema.mapping(rng, key, "a mapping like {low: 1, high: 12} (optionally log: true),"
                                       " or nothing for the range in docs/agents.md")
        schema.check_keys(rng, RANGE_KEYS, key)
        schema.require_keys(rng, ("low", "high"), key)
        for k in ("low", "high"):  # both ends are values of the parameter: its row checks them
            row.check(rng[k], f"{key}.{k}")
        low, high = rng["low"], rng["high"]
        log = schema.boolean(rng.get("log", False), f"{key}.log")
        if not low < high:
            raise ConfigError(f"{key}: low = {low!r} must be below high = {high!r}")
        if log and low <= 0:
            raise ConfigError(f"{key}: low = {low!r} must be positive on a log scale (log: true)")
        kind = row.kind.__name__
        value_type = int if kind == "int" else float
        out.append(SearchParam(name, fields, kind, value_type(low), value_type(high), log))
    return tuple(out)


def _parse_confirm(exp: ExperimentConfig, agent: str, data: Any) -> ConfirmSettings:
    data = schema.mapping({} if data is None else data, "tune.confirm",
                          f"a mapping with keys {', '.join(CONFIRM_KEYS)}")
    schema.check_keys(data, CONFIRM_KEYS, "tune.confirm")
    # More than the distinct settings tried is not an error: every one of them is confirmed.
    top = schema.positive_int(data.get("top", DEFAULT_TOP), "tune.confirm.top")
    games = schema.positive_int(data.get("games", DEFAULT_CONFIRM_GAMES), "tune.confirm.games")
    if games % 2:
        raise ConfigError(f"tune.confirm.games = {games} must be even (half in each seat)")
    baseline = _agent_name(exp, "tune.confirm.baseline", data.get("baseline", agent))
    alpha = schema.number(data.get("alpha", DEFAULT_ALPHA), "tune.confirm.alpha", 0, 1, open_low=True, open_high=True)
    return ConfirmSettings(top=top, games=games, baseline=baseline, alpha=float(alpha))
