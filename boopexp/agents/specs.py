"""Agent names, presets (``AgentSpec``) and **the** table of parameters: each ``MCTSConfig`` field
is one row (type, default, range, help, tuning range; ``MCTS_PARAMS``), beside the paper's ``k``,
``m``, ``d`` (``PAPER_PARAMS``).

The named agents of the paper, their parameters and presets (AGENTS.md §B.1, §C).

An agent is described by a frozen :class:`AgentSpec` (a name, a kind and its parameters). The
search itself lives in :mod:`boopexp.engine.mcts`; this module only knows names and numbers, so that a
configuration can be validated and hashed without compiling anything.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from boopexp import schema
from boopexp.agents.budget import AGENT_BUDGET_KEY, BUDGETED_KINDS, AgentBudget
from boopexp.errors import ConfigError


@dataclass(frozen=True)
class TuneRange:
    """The range ``boopexp tune`` searches a parameter over by default: ``low`` to ``high``
    inclusive, on a log scale if ``log``."""

    low: float
    high: float
    log: bool = False


@dataclass(frozen=True)
class Param:
    """One row of a parameter table (:data:`MCTS_PARAMS`, :data:`PAPER_PARAMS`).

    Attributes:
        name: the key in a config (``agents.NAME.<name>``, ``params.<name>``), a CLI ``--param``
            and an agent's description; for an MCTS parameter also the :class:`MCTSConfig` field
            and the entry ``P_<NAME>`` of the kernels' vector (:mod:`boopexp.engine.params`).
        kind: ``int``, ``float`` or ``bool``.
        default: the value when nothing sets it (None: it depends on the preset, see ``help``).
        low, high: the allowed values, inclusive (None for a boolean).
        help: what it does, one sentence (docs/agents.md's table shows it).
        tune: the tuner's default range (None: not a search dimension).
        late: added after games were recorded: in an agent's description (hashes, records) only
            when it differs from its default, so every earlier agent keeps its settings hash.
        sets: a paper-level parameter's MCTSConfig fields (``k`` sets two).
    """

    name: str
    kind: type
    default: Any
    low: float | None
    high: float | None
    help: str
    tune: TuneRange | None = None
    late: bool = False
    sets: tuple[str, ...] = ()

    @property
    def allowed(self) -> str:
        """The allowed values in words: ``an integer in [0, 72]``, ``a number in [0.0, 1.0]``, ``true or false``."""
        if self.kind is bool:
            return "true or false"
        return schema.range_words(self.kind, self.low, self.high)

    def check(self, value: Any, key: str | None = None) -> None:
        """Refuse a value of the wrong type or out of range through the shared checks
        (:mod:`boopexp.schema`): ConfigError ``<key> = <value> must be <allowed>``, ``key`` by default
        the name; a float parameter takes an int (``uct_c: 1``), not NaN nor an infinity."""
        key = key or self.name
        if self.kind is bool:
            schema.boolean(value, key)
        elif self.kind is int:
            schema.integer(value, key, self.low, self.high)
        else:
            schema.number(value, key, self.low, self.high)


_ROW = "boopexp.param"  # where a field's row lives in its dataclasses metadata
_T = TypeVar("_T")


def param(default: _T, low: float | None = None, high: float | None = None, *, help: str,
          tune: TuneRange | None = None, late: bool = False) -> _T:
    """A field of :class:`MCTSConfig` with its row of the table (name and type are the field's)."""
    row = {"low": low, "high": high, "help": help, "tune": tune, "late": late}
    return field(default=default, metadata={_ROW: row})


@dataclass(frozen=True)
class MCTSConfig:
    """Parameters of MCTS_GHOST (AGENTS.md §B.1, §C.4); defaults are the full agent of code 0.6.2.

    This class body is **the** table of MCTS parameters: each field is one row (name, type,
    default, allowed range, help, the tuner's range; :data:`MCTS_PARAMS` reads them), and every
    other place derives from it: the check below, an agent's description (:data:`LATE_PARAMETERS`),
    the config keys ``agents.NAME.PARAM`` and CLI ``--param``, the tuner's space, docs/agents.md's
    table (a test) and the kernels' vector (:func:`boopexp.engine.mcts.params_vector`, whose layout,
    :mod:`boopexp.engine.params`, a test holds to this order). A dataclass whose fields carry their
    rows, rather than a tuple of rows the class is generated from, so that type checkers and
    readers see ordinary typed fields.
    """

    preselect_m: int = param(
        5, 0, 72, tune=TuneRange(1, 12),
        help="m of the Selection injection: the root keeps only the solver's m best moves (best_m_moves); "
             "0 = off, which also turns on the early border mask (QUIRK-A5)")
    co_expansion: bool = param(
        True, help="the Expansion injection: the solver chooses the expanded move (best_move), not chance")
    co_playout_plies: int = param(
        21, 0, 10_000, tune=TuneRange(5, 40),
        help="the Playout injection: how many first plies of a playout the solver chooses (code: "
             "first_n_strategy); the rest are random")
    playout_depth: int = param(
        21, 0, 10_000, tune=TuneRange(5, 40), help="a playout's length in plies at most; 0 = to the end of the game")
    early_mask_plies: int = param(
        6, 0, 36, tune=TuneRange(0, 12),
        help="horizon of the early border mask in plies (code: action_masking_time; m = 0 only)")
    discount: float = param(0.9, 0.0, 1.0, tune=TuneRange(0.5, 1.0), help="the playout discount d")
    discount_offset: int = param(
        1, 0, 1, tune=TuneRange(0, 1),
        help="the discount exponent is ply - discount_offset, plies counted from 1 (code: 1, QUIRK-A10; paper: 0)")
    uct_c: float = param(
        0.3, 0.0, 100.0, tune=TuneRange(0.05, 2.0, log=True),
        help="the UCT exploration constant (hard-coded 0.3 in the code)")
    fix_a9: bool = param(
        False, help="correct QUIRK-A9: the playout's terminal bonus from the playout's perspective, not in "
                    "absolute colours; off = faithful")
    co_lookahead: int = param(
        0, 0, 1, tune=TuneRange(0, 1), late=True,
        help="the paper's two-stage decision (docs/beyond.md): 1 = every solver call first excludes the moves "
             "after which the opponent has a reply that wins at once, unless every move is such; 0 = the paper")
    solver: bool = param(
        False, late=True,
        help="MCTS-Solver (Winands et al. 2008): proven wins and losses are backed up, a proven win is chosen, "
             "proven losses avoided; a node counts as fully expanded only with all its legal moves (QUIRK-A4 off); "
             "off = the paper")
    prior: int = param(
        0, 0, 2, tune=TuneRange(0, 2), late=True,
        help="a prior in the selection formula (PUCT: Q + prior_c * P * sqrt(N) / (1 + n), P the softmax of the "
             "children's values): 1 = H of the child's position, 2 = f of its move; 0 = UCT, the paper")
    prior_c: float = param(
        0.3, 0.0, 100.0, tune=TuneRange(0.05, 5.0, log=True), late=True,
        help="the weight of the prior in PUCT (prior 1 or 2)")
    prior_temp: float = param(
        0.1, 0.001, 100.0, tune=TuneRange(0.01, 1.0, log=True), late=True,
        help="the temperature of the prior's softmax over the children (prior 1 or 2)")
    uct_rule: int = param(
        0, 0, 1, tune=TuneRange(0, 1), late=True,
        help="the exploration term of the selection: 0 = UCB1, c * sqrt(ln N / n), the paper; "
             "1 = c * sqrt(N / (n + 1)) without the logarithm (the Pentago-Swap report, docs/agents.md "
             "\"The reports' agents\")")
    playout_value: int = param(
        0, 0, 1, tune=TuneRange(0, 1), late=True,
        help="a playout's value: 0 = the discounted mean of H over its plies, the paper; 1 = the game's result, "
             "reward_win, reward_loss or reward_draw for the searching agent (a playout cut off by playout_depth: "
             "H of its last position, scaled from [-1, 1] to [reward_loss, reward_win])")
    reward_win: float = param(
        1.0, -1000.0, 1000.0, tune=TuneRange(1.0, 100.0, log=True), late=True,
        help="playout_value 1: the searching agent's value of a won game")
    reward_loss: float = param(
        -1.0, -1000.0, 1000.0, tune=TuneRange(-100.0, 0.0), late=True,
        help="playout_value 1: the searching agent's value of a lost game")
    reward_draw: float = param(
        0.0, -1000.0, 1000.0, tune=TuneRange(-1.0, 1.0), late=True,
        help="playout_value 1: the searching agent's value of a drawn game")
    final_rule: int = param(
        0, 0, 1, tune=TuneRange(0, 1), late=True,
        help="the move played (after an immediate win): 0 = the root child of best mean value, the paper; "
             "1 = of best selection value (the reports' \"highest UCT value\"), among the visited children")
    reuse_tree: bool = param(
        False, late=True,
        help="keep the subtree of the position reached from the last move's search (its statistics count); "
             "off = a new tree every move, the paper's Pobo")
    textbook_backup: bool = param(
        False, late=True,
        help="correct QUIRK-A6, A7 and A8 together (textbook MCTS): a new node's playout value counts whole and as "
             "its first visit, and a terminal node's value is added again each time it is selected; off = faithful")
    terminal_check: int = param(
        1, 1, 2, tune=TuneRange(1, 2), late=True,
        help="a playout's end test: 1 = after every ply, the paper; 2 = only after its even plies, once both "
             "players have moved (the Colosseum report's Experiment 1: the odd plies are played by the game's "
             "apply_move_unchecked, docs/games.md)")

    def __post_init__(self) -> None:
        for row in MCTS_PARAMS.values():
            row.check(getattr(self, row.name))


_KINDS: dict[str, type] = {"int": int, "float": float, "bool": bool}

#: The table of MCTS parameters, in field (and kernel vector) order: {name: row}.


def _table(cls: type) -> dict[str, Param]:
    """The parameter table a config dataclass's fields carry (:func:`param`), in field order."""
    return {
        f.name: Param(f.name, _KINDS[f.type] if isinstance(f.type, str) else f.type, f.default, **f.metadata[_ROW])
        for f in dataclasses.fields(cls)
    }


MCTS_PARAMS: dict[str, Param] = _table(MCTSConfig)
MCTS_PARAMETERS: tuple[str, ...] = tuple(MCTS_PARAMS)
#: Parameters added after games were recorded: in an agent's description (hashes, records) only
#: when they differ from their default, so every earlier agent keeps its settings hash.
LATE_PARAMETERS: dict[str, Any] = {p.name: p.default for p in MCTS_PARAMS.values() if p.late}

@dataclass(frozen=True)
class AlphaBetaConfig:
    """Parameters of the alpha-beta agent (:mod:`boopexp.engine.alphabeta`; docs/agents.md,
    docs/budget.md): **the** table of its parameters, as :class:`MCTSConfig` is the MCTS agents'
    (:data:`ALPHABETA_PARAMS` reads the rows)."""

    node_cost_scale: float = param(
        1.0, 0.01, 100.0, tune=TuneRange(0.25, 4.0, log=True),
        help="the device charge of an alpha-beta node and of a move its ordering scores, in units of the "
             "profile's solver_move (docs/budget.md, \"Alpha-beta\"); the knowledge study varies it x0.5 and x2")
    max_depth: int = param(
        0, 0, 40, help="the deepest iteration of the search in plies; 0 = as deep as the budget allows (at most 40)")

    def __post_init__(self) -> None:
        for row in ALPHABETA_PARAMS.values():
            row.check(getattr(self, row.name))


#: The alpha-beta agent's parameter table, in field order: {name: row}.
ALPHABETA_PARAMS: dict[str, Param] = _table(AlphaBetaConfig)
ALPHABETA_PARAMETERS: tuple[str, ...] = tuple(ALPHABETA_PARAMS)

#: Presets (AGENTS.md §C.4). ``code-0.6.2`` produced the paper's tables; ``paper`` is its prose.
PRESETS: dict[str, dict[str, Any]] = {
    "code-0.6.2": {"k": 21, "discount_offset": 1},
    "paper": {"k": 20, "discount_offset": 0},
}
DEFAULT_PRESET = "code-0.6.2"

#: The ablation switches of each MCTS agent (AGENTS.md §C.1): Selection, Expansion, Playout.
_MCTS_SWITCHES: dict[str, tuple[bool, bool, bool]] = {
    "vanilla": (False, False, False),
    "mcts+S": (True, False, False),
    "mcts+E": (False, True, False),
    "mcts+P": (False, False, True),
    "mcts+SE": (True, True, False),
    "mcts+SP": (True, False, True),
    "mcts+EP": (False, True, True),
    "mcts-co": (True, True, True),
    "mcts-co2": (True, True, True),
    "mcts-solver": (False, False, False),
    "mcts-prior": (False, True, True),
}
#: Agents beyond the paper (docs/beyond.md): their parameters on top of the switches above.
_EXTRA_PARAMETERS: dict[str, dict[str, Any]] = {
    "mcts-co2": {"co_lookahead": 1},  # mcts-co with the two-stage constraint at every injection
    # the classical MCTS-Solver: vanilla MCTS with proven wins and losses (docs/beyond.md)
    "mcts-solver": {"solver": True},
    # f as a PUCT prior in place of Selection's pre-selection (and of the border mask m = 0 brings)
    "mcts-prior": {"prior": 2, "early_mask_plies": 0},
}
#: The named agents beyond the paper's eight (docs/beyond.md).
BEYOND_NAMES: tuple[str, ...] = tuple(_EXTRA_PARAMETERS)
ALIASES: dict[str, str] = {"mcts+SEP": "mcts-co"}
BASELINES: tuple[str, ...] = ("heuristics", "random")
#: Classical search agents with the paper's knowledge (issue 23): each is its own kind.
CLASSICAL: tuple[str, ...] = ("alphabeta",)
AGENT_NAMES: tuple[str, ...] = tuple(_MCTS_SWITCHES) + BASELINES + CLASSICAL

#: The paper-level parameters of a config's ``params:`` block (AGENTS.md §C.4) and the MCTSConfig
#: fields each sets (in the agents that use them: :func:`resolve_agent`).
PAPER_PARAMS: dict[str, Param] = {
    p.name: p
    for p in (
        Param("k", int, None, 1, 10_000,
              "playout solver plies and playout depth of the P agents (21 in code-0.6.2, 20 in paper)",
              tune=TuneRange(5, 40), sets=("co_playout_plies", "playout_depth")),
        Param("m", int, MCTS_PARAMS["preselect_m"].default, 1, 72, "pre-selected moves of the S agents",
              tune=TuneRange(1, 12), sets=("preselect_m",)),
        Param("d", float, MCTS_PARAMS["discount"].default, 0.0, 1.0, "playout discount of every MCTS agent",
              tune=TuneRange(0.5, 1.0), sets=("discount",)),
    )
}

#: Label printed by the original app for each agent (AGENTS.md §C.1).
LOG_LABELS: dict[str, str] = {
    "vanilla": "MCTS",
    "mcts+S": "MCTS + Selection",
    "mcts+E": "MCTS + Expansion",
    "mcts+P": "MCTS + Playout",
    "mcts+SE": "MCTS + Selection + Expansion",
    "mcts+SP": "MCTS + Selection + Playout",
    "mcts+EP": "MCTS + Expansion + Playout",
    "mcts-co": "Full",
    "mcts-co2": "Full + two-stage",
    "mcts-solver": "MCTS + Solver",
    "mcts-prior": "MCTS + Prior + Expansion + Playout",
    "heuristics": "Pure Heuristics",
    "random": "RandomPlay",
    "alphabeta": "Alpha-beta",
}


#: The kinds of agent: MCTS_GHOST, the two baselines, any Python agent (docs/agents.md), alpha-beta
#: and any program speaking btp (docs/protocol.md).
AGENT_KINDS: tuple[str, ...] = ("mcts", "heuristics", "random", "plugin", "alphabeta", "engine")


def parameters_of(kind: str) -> tuple[str, ...]:
    """The parameters an agent of ``kind`` takes (``agents.NAME.PARAM``, ``--param``): an MCTS
    agent's :data:`MCTS_PARAMETERS`, alpha-beta's :data:`ALPHABETA_PARAMETERS`, none for the
    baselines (a plugin's keyword arguments are its own)."""
    return {"mcts": MCTS_PARAMETERS, "alphabeta": ALPHABETA_PARAMETERS}.get(kind, ())

#: A plugin agent's time limit per move (and per call of its factory) when its config sets none:
#: past it the plugin forfeits the game (docs/agents.md). Generous on purpose: it is there to end
#: a hung plugin, not to budget a working one.
DEFAULT_MOVE_TIMEOUT_S = 60.0
#: The longest limit a config may set (one day).
MAX_MOVE_TIMEOUT_S = 86_400.0
#: The config key of that limit (``agents.NAME.move_timeout_s``; not passed to the factory).
MOVE_TIMEOUT_KEY = "move_timeout_s"


#: The config keys of an engine agent (``agents.NAME.engine``: the command and its arguments,
#: ``options``: sent as ``setoption``, ``memory_mb``: its address-space limit).
ENGINE_KEY, OPTIONS_KEY, MEMORY_KEY = "engine", "options", "memory_mb"
#: An engine's address-space limit when its config sets none, and the allowed range (MB).
DEFAULT_MEMORY_MB, MIN_MEMORY_MB, MAX_MEMORY_MB = 4096, 16, 1 << 20


#: The longest word of an engine agent's command, option name or option value, in characters (a
#: path's limit on Linux, PATH_MAX): each is kept in every game record and the store's config.yaml,
#: and a ``setoption`` line fits a btp line (:data:`~boopexp.play.btp_lines.MAX_LINE`) many times
#: over. ``boopexp engine`` reads option values to the same length (:mod:`boopexp.play.btp`).
MAX_OPTION_CHARS = 4096


def option_text(value: Any) -> str:
    """An engine option's value as btp sends it (``setoption name K value <text>``)."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def check_engine(command: Any, options: Any, memory_mb: Any, where: str) -> tuple[tuple[str, ...], dict[str, Any],
                                                                                    int | None]:
    """An engine agent's command (a non-empty list of words a system can start: strings without
    NUL or line ends), options (a mapping of names to finite numbers, strings or booleans, as
    printable ASCII: they are sent as ``setoption name K value V`` lines) and memory limit (None:
    the default, :data:`DEFAULT_MEMORY_MB`, not written in hashes), checked as config keys under
    ``where``; each word, name and value at most :data:`MAX_OPTION_CHARS` characters.

    Raises:
        ConfigError: one line naming the key, the value and what is allowed.
    """
    at_most = f"at most {MAX_OPTION_CHARS} characters"
    if not isinstance(command, (list, tuple)) or not command:
        raise schema.invalid(f"{where}.{ENGINE_KEY}", command, "a non-empty list of strings (each "
                             f"{at_most}): the command and its arguments, e.g. [python3, bot.py]")
    for i, word in enumerate(command):
        if not isinstance(word, str) or not word or len(word) > MAX_OPTION_CHARS or any(c in word for c in "\0\r\n"):
            raise schema.invalid(f"{where}.{ENGINE_KEY}[{i}]", word, "a non-empty string without NUL or line ends, "
                                 f"{at_most} (a word of the command)")
    options = dict(schema.mapping({} if options is None else options, f"{where}.{OPTIONS_KEY}",
                                  "a mapping of option names to values, e.g. {depth: 3}"))
    for key, value in options.items():
        if not isinstance(key, str) or not key or not _protocol_text(key) or " " in key or key in ("seed", "side"):
            raise schema.invalid(f"{where}.{OPTIONS_KEY}", key, "option names of printable ASCII without blanks, "
                                 f"{at_most} (seed and side are the host's: docs/protocol.md)")
        want = f"a finite number, a string of printable ASCII or true/false, {at_most}"
        if isinstance(value, int) and value.bit_length() * math.log10(2) > MAX_OPTION_CHARS:
            # not shown: Python writes no int of more than 4300 digits (str, repr)
            raise ConfigError(template=f"{{key}} = an integer of more than {MAX_OPTION_CHARS} digits must be "
                              "{allowed}", key=f"{where}.{OPTIONS_KEY}.{key}", allowed=want)
        if (not isinstance(value, (str, int, float)) or isinstance(value, float) and not math.isfinite(value)
                or not _protocol_text(option_text(value))):
            raise schema.invalid(f"{where}.{OPTIONS_KEY}.{key}", value, want)
    if memory_mb is not None:
        memory_mb = schema.integer(memory_mb, f"{where}.{MEMORY_KEY}", MIN_MEMORY_MB, MAX_MEMORY_MB)
        memory_mb = None if memory_mb == DEFAULT_MEMORY_MB else memory_mb
    return tuple(command), options, memory_mb


def _protocol_text(text: str) -> bool:
    """``text`` can be sent in a btp line as it is: at most :data:`MAX_OPTION_CHARS` characters of
    printable ASCII (the protocol's; a host would replace any other)."""
    return len(text) <= MAX_OPTION_CHARS and text.isascii() and text.isprintable()


def check_move_timeout(value: Any, where: str = MOVE_TIMEOUT_KEY) -> float | None:
    """A plugin's move time limit from a config key or a record: None for the default
    (:data:`DEFAULT_MOVE_TIMEOUT_S`, so that the settings hash and the records of a plugin that
    leaves it alone stay as they always were), else a number of seconds in (0, 86400].

    Raises:
        ConfigError: ``"<where> = <value> must be a positive number of seconds (at most 86400; default 60)"``.
    """
    if value is None:
        return None
    schema.number(value, where, 0, MAX_MOVE_TIMEOUT_S, open_low=True, want="a positive number of seconds "
                  f"(at most {MAX_MOVE_TIMEOUT_S:g}; default {DEFAULT_MOVE_TIMEOUT_S:g})")
    # a float, so that 5 and 5.0 are one setting (one hash)
    return None if value == DEFAULT_MOVE_TIMEOUT_S else float(value)


@dataclass(frozen=True)
class AgentSpec:
    """A fully resolved agent: registry name, kind and (for MCTS) its configuration.

    Attributes:
        name: the name pairings, records and tables use (a built-in or a config's own name).
        kind: one of AGENT_KINDS.
        mcts: the MCTS parameters (kind ``mcts``).
        alphabeta: the alpha-beta parameters (kind ``alphabeta``).
        base: the agent a config variant was declared from (``{base: mcts-co, ...}``), else None.
        plugin: ``"module:callable"`` of a plugin agent (kind ``plugin``).
        kwargs: the keyword arguments the plugin's callable is called with.
        directory: a folder where the plugin's module may also be found (the config's folder);
            where a file lives does not change a game, so it is in neither hash nor record.
        move_timeout_s: a plugin's or engine's time limit per move in seconds; None is the default
            (:data:`DEFAULT_MOVE_TIMEOUT_S`), and only another value is in the hash and record.
        engine: the command and arguments of an engine agent (kind ``engine``, docs/protocol.md).
        options: the options the engine is sent (``setoption``).
        memory_mb: the engine's address-space limit; None is :data:`DEFAULT_MEMORY_MB`.
        budget: the agent's own budget (``agents.NAME.budget``: factors of the config's budget of
            a move, :class:`~boopexp.agents.budget.AgentBudget`; an MCTS or alpha-beta agent);
            None is the config's, and only another is in the hash and record.
    """

    name: str
    kind: str  # one of AGENT_KINDS
    mcts: MCTSConfig | None = field(default=None)
    base: str | None = None
    plugin: str | None = None
    kwargs: Mapping[str, Any] | None = field(default=None, hash=False)
    directory: str | None = field(default=None, compare=False, hash=False)
    move_timeout_s: float | None = None
    alphabeta: AlphaBetaConfig | None = None
    engine: tuple[str, ...] | None = None
    options: Mapping[str, Any] | None = field(default=None, hash=False)
    memory_mb: int | None = None
    budget: AgentBudget | None = None

    @property
    def move_timeout(self) -> float:
        """The time limit in effect for a plugin's move: ``move_timeout_s`` or the default."""
        return DEFAULT_MOVE_TIMEOUT_S if self.move_timeout_s is None else float(self.move_timeout_s)

    @property
    def memory(self) -> int:
        """An engine's address-space limit in MB: ``memory_mb`` or the default."""
        return DEFAULT_MEMORY_MB if self.memory_mb is None else int(self.memory_mb)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description, used in hashes and game records.

        A built-in agent's description is exactly what it was before variants and plugins
        existed (no ``base``, ``plugin`` or ``kwargs`` key), so its settings hashes are unchanged.
        """
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.mcts is not None:
            params = dataclasses.asdict(self.mcts)
            for key, default in LATE_PARAMETERS.items():
                if params[key] == default:
                    del params[key]
            out["params"] = params
        if self.alphabeta is not None:
            out["params"] = dataclasses.asdict(self.alphabeta)
        if self.base is not None:
            out["base"] = self.base
        if self.plugin is not None:
            out["plugin"] = self.plugin
            out["kwargs"] = dict(self.kwargs or {})
        if self.engine is not None:
            out[ENGINE_KEY] = list(self.engine)
            out[OPTIONS_KEY] = dict(self.options or {})
            if self.memory_mb is not None:
                out[MEMORY_KEY] = self.memory_mb
        if self.move_timeout_s is not None:  # the default is not written (hashes stay as they were)
            out[MOVE_TIMEOUT_KEY] = self.move_timeout_s
        if self.budget is not None:  # likewise: only an agent given its own budget has the key
            out[AGENT_BUDGET_KEY] = self.budget.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AgentSpec:
        """The inverse of :meth:`to_dict` (e.g. the ``p1_spec`` of a game record).

        Raises:
            ConfigError: not an agent description, or parameters out of range.
        """
        try:
            name, kind = data["name"], data["kind"]
            params = data.get("params")
            base = data.get("base")
        except (KeyError, TypeError, AttributeError):
            raise ConfigError(f"{data!r} is not an agent description (needs name, kind)") from None
        with schema.within(f"agent {name!r}"):
            schema.choice(kind, "kind", AGENT_KINDS)
            if kind == "plugin":
                plugin, kwargs = data.get("plugin"), data.get("kwargs", {})
                if not isinstance(plugin, str) or not isinstance(kwargs, Mapping):
                    raise ConfigError("a plugin agent description needs plugin and kwargs")
                timeout = check_move_timeout(data.get(MOVE_TIMEOUT_KEY))
                return cls(name=name, kind=kind, base=base, plugin=plugin, kwargs=dict(kwargs),
                           move_timeout_s=timeout)
            own = data.get(AGENT_BUDGET_KEY)
            budget = None if own is None else check_agent_budget(own, kind)
            if kind == "alphabeta":
                ab = schema.mapping(params, "params", "the alpha-beta parameters of the agent")
                schema.check_keys(ab, ALPHABETA_PARAMETERS, "params")
                return cls(name=name, kind=kind, alphabeta=AlphaBetaConfig(**ab), base=base, budget=budget)
            if kind == "engine":
                command, options, memory_mb = check_engine(data.get(ENGINE_KEY), data.get(OPTIONS_KEY),
                                                           data.get(MEMORY_KEY), "agent")
                return cls(name=name, kind=kind, base=base, engine=command, options=options, memory_mb=memory_mb,
                           move_timeout_s=check_move_timeout(data.get(MOVE_TIMEOUT_KEY)))
            if kind != "mcts":
                return cls(name=name, kind=kind, base=base)
            mcts = schema.mapping(params, "params", "the MCTS parameters of the agent")
            schema.check_keys(mcts, MCTS_PARAMETERS, "params")
            return cls(name=name, kind=kind, mcts=MCTSConfig(**mcts), base=base, budget=budget)


def check_agent_budget(data: Any, kind: str, where: str = AGENT_BUDGET_KEY) -> AgentBudget | None:
    """The :class:`~boopexp.agents.budget.AgentBudget` of an agent's ``budget:`` mapping, for an
    agent of ``kind`` (one that thinks under a budget: :data:`~boopexp.agents.budget.BUDGETED_KINDS`);
    None for factors of 1 (the config's budget: the agent's description and hash as without them).

    Raises:
        ConfigError: the agent's kind has no budget (a baseline, a plugin, an engine), or the
            mapping is not one (:meth:`AgentBudget.from_mapping`); the key named ``where``.
    """
    if kind not in BUDGETED_KINDS:
        raise ConfigError(template="{key} = {value}: a " + kind + " agent thinks under no budget; only {allowed} "
                          "agents have one", key=where, value=data, allowed=BUDGETED_KINDS)
    prefix = where.removesuffix(AGENT_BUDGET_KEY).rstrip(".")
    if prefix:
        with schema.under(prefix):
            own = AgentBudget.from_mapping(data)
    else:
        own = AgentBudget.from_mapping(data)
    return None if own.is_identity else own


def canonical_name(name: Any) -> str:
    """The registry name of ``name`` (resolving aliases), or ConfigError listing valid names."""
    if not isinstance(name, str) or ALIASES.get(name, name) not in AGENT_NAMES:
        raise unknown_agent(name, AGENT_NAMES + tuple(ALIASES))
    return ALIASES.get(name, name)


def unknown_agent(name: Any, valid: tuple[str, ...]) -> ConfigError:
    """The error (to raise) for a name that is no agent: ``unknown agent 'x'; valid agents: …``,
    with the name as its value and ``valid`` as what is allowed."""
    return ConfigError(template="unknown agent {value}; valid agents: {allowed}", value=name, allowed=valid)


def resolve_agent(
    name: str,
    preset: str = DEFAULT_PRESET,
    params: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> AgentSpec:
    """Build the AgentSpec of a named agent.

    Args:
        name: a registry name (``vanilla``, ``mcts+S``, …, ``mcts-co``/``mcts+SEP``, ``mcts-co2``,
            ``mcts-solver``, ``mcts-prior``, ``heuristics``, ``random``).
        preset: ``code-0.6.2`` (default, faithful to the code) or ``paper``.
        params: the paper-level parameters ``k``, ``m``, ``d`` (apply to agents that use them).
        overrides: any :class:`MCTSConfig` field by name, applied last.

    Raises:
        ConfigError: unknown agent, preset or parameter, or a value out of range.
    """
    name = canonical_name(name)
    schema.choice(preset, "preset", PRESETS)
    params = dict(params or {})
    schema.check_keys(params, tuple(PAPER_PARAMS), "params")
    overrides = dict(overrides or {})
    if name in BASELINES:
        with schema.within(f"agent {name!r}"):
            schema.check_keys(overrides, (), note="; a baseline takes no parameters")
        return AgentSpec(name=name, kind=name)
    if name in CLASSICAL:
        with schema.within(f"agent {name!r}"):
            schema.check_keys(overrides, ALPHABETA_PARAMETERS)
            return AgentSpec(name=name, kind=name, alphabeta=AlphaBetaConfig(**overrides))
    with schema.within(f"agent {name!r}"):
        schema.check_keys(overrides, MCTS_PARAMETERS)
    k = params.get("k", PRESETS[preset]["k"])
    m = params.get("m", PAPER_PARAMS["m"].default)
    d = params.get("d", PAPER_PARAMS["d"].default)
    for key, value in (("k", k), ("m", m), ("d", d)):
        PAPER_PARAMS[key].check(value, f"params.{key}")
    sel, exp, play = _MCTS_SWITCHES[name]
    values: dict[str, Any] = dict(
        preselect_m=m if sel else 0,
        co_expansion=exp,
        # QUIRK-A11: agents without P play random playouts to the end of the game.
        co_playout_plies=k if play else 0,
        playout_depth=k if play else 0,
        discount=float(d),
        discount_offset=PRESETS[preset]["discount_offset"],
    )
    values.update(_EXTRA_PARAMETERS.get(name, {}))
    values.update(overrides)
    with schema.within(f"agent {name!r}"):
        cfg = MCTSConfig(**values)
    return AgentSpec(name=name, kind="mcts", mcts=cfg)
