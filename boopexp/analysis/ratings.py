"""The Bradley–Terry fit (logistic Elo with a first-move term): **the** fitter ``fit_bradley_terry``
(Newton's method on a stack of count arrays), the point estimate and its Wald intervals.

Model (the one engine testers and rating tools such as BayesElo/Ordo use, without draws — boop.
has none): in a decided game of agent A (P1, moves first) against agent B (P2),

    P(P1 wins) = 1 / (1 + 10 ** (-(r_A - r_B + f) / 400))

with r the agents' ratings in Elo and f the first-move advantage in Elo (negative when the
second player is favoured, as in the paper's CO-playout mirrors). Mirror games (A vs A) inform f
only. The ratings are identified up to a constant: the anchor agent is fixed at 0.

Fit: the log-likelihood of the decided games, aggregated per ordered pairing, is maximised by
:func:`fit_bradley_terry` (damped Newton's method with the analytic gradient and Hessian, on a
stack of count arrays: **the** fitter, which the bootstrap runs on all its resamples at once). The
95% intervals come from the likelihood's curvature (Wald): the inverse of the observed
information at the optimum gives the covariance of (ratings, f); each interval is the estimate
± 1.96 standard errors. They are relative to the anchor (the anchor's own interval is [0, 0]).

When the maximum-likelihood estimate does not exist — some group of agents never lost a decided
game to the others (e.g. an agent that won every game), so the likelihood keeps growing as their
rating goes to infinity — half a virtual win is added each way to every ordered pairing that
played (a Haldane-style correction) and the fit says so (``corrected``); those ratings are then
finite but shrunk and should be read as lower bounds of the gap. Whether it exists is decided
with the first-move term in the model (a linear program, :func:`_mle_exists`): a seat that almost
never wins can separate the games while every agent both beat and lost to another. As a
backstop, a fit that runs beyond :data:`DIVERGED_ELO` is corrected the same way, the rule the
bootstrap applies to each resample (:mod:`boopexp.analysis.ratings_bootstrap`), so a point
estimate and its bootstrap intervals are always one estimator.

Games without a winner (stopped at the ply cap) are left out of the fit and counted.

**Draws** (a game the rules ended drawn: ``"draw"`` in ``winner``; boop. has none) count as half
a win for each side: a drawn game of P1 against P2 adds ½ to the cell's P1 wins and ½ to its P2
wins. That is the rule of Elo's expected score and Ordo's default (R. Coulom's BayesElo fits a
draw parameter instead, as Rao–Kupper's and Davidson's models do): the likelihood stays the
logistic one, its maximum matches each agent's expected score to its score, wins + draws/2
(Davidson's model has the same sufficient statistics, W + D/2, but a flatter score curve, so
its Elo differ by a scale). The Wald intervals then read a draw as the two halves of a win
and a loss, Bernoulli variance p(1 − p), at least a game's score variance (a score in [0, 1]):
on many draws they are a little wide, not too narrow (asymptotically; the sandwich variance is
at most the inverse information). Without a draw nothing changes (the same counts, the same fit).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from boopexp.errors import ConfigError
from boopexp.experiments.elo import ELO_SCALE, logistic

#: Two-sided 95% normal quantile, Φ⁻¹(0.975).
Z95 = 1.959963984540054

#: Virtual wins added each way to every played pairing when the MLE does not exist.
HALDANE = 0.5

#: Default anchor when present.
DEFAULT_ANCHOR = "random"

#: A drawn game in the ``winner`` sequence of :func:`fit_ratings` (the record's ``termination``).
DRAW = "draw"

#: Decimals of Elo a fit and its bootstrap intervals report (milli-Elo). The optimiser stops at a
#: gradient of 1e-9, which leaves up to ~1e-5 Elo of noise in a rating (an agent tied with the anchor came out as
#: -1.1347e-10 on one SciPy, -1.14383e-10 on the next, -2.8e-7 in a small test): digits below a
#: milli-Elo are rounded away, and -0.0 becomes 0, so the outputs do not depend on the build.
ELO_DECIMALS = 3


def snap_elo(value: float) -> float:
    """``value`` rounded to :data:`ELO_DECIMALS` (a value within rounding of 0 is 0, not -0)."""
    return round(float(value), ELO_DECIMALS) + 0.0


@dataclass(frozen=True)
class Rating:
    """One agent's rating.

    Attributes:
        agent: the agent's name.
        elo: rating in Elo relative to the anchor.
        ci_low, ci_high: 95% Wald interval (relative to the anchor).
        games: decided and drawn games the agent played (a mirror game counts once).
        wins, losses: of those games (a mirror game counts as neither).
        no_winner: games the agent played that had no winner (left out of the fit).
        draws: drawn games the agent played (half a win each way; a mirror counts once).
    """

    agent: str
    elo: float
    ci_low: float
    ci_high: float
    games: int
    wins: int
    losses: int
    no_winner: int
    draws: int = 0


@dataclass(frozen=True)
class Ratings:
    """The fit: every agent's rating, the first-move term and what was left out.

    Attributes:
        ratings: one per agent, strongest first (ties by name).
        anchor: the agent fixed at 0.
        first_move: the first-move advantage in Elo (P1's edge; negative: P2 favoured).
        first_move_ci: its 95% Wald interval.
        games: decided and drawn games used.
        no_winner: games left out because they had no winner (the ply cap).
        corrected: True if the MLE did not exist and half a virtual win was added each way.
        method: a short description of the fit and of the intervals.
        draws: drawn games used (half a win each way).
    """

    ratings: tuple[Rating, ...]
    anchor: str
    first_move: float
    first_move_ci: tuple[float, float]
    games: int
    no_winner: int
    corrected: bool
    method: str
    draws: int = 0

    def by_agent(self) -> dict[str, Rating]:
        """The ratings keyed by agent name."""
        return {r.agent: r for r in self.ratings}


def default_anchor(agents: Sequence[str]) -> str:
    """``random`` if it played, else the first agent given."""
    if not agents:
        raise ConfigError("no agents to rate")
    return DEFAULT_ANCHOR if DEFAULT_ANCHOR in agents else agents[0]


def fit_ratings(
    p1: Sequence[str],
    p2: Sequence[str],
    winner: Sequence[str | None],
    *,
    agents: Sequence[str] | None = None,
    anchor: str | None = None,
) -> Ratings:
    """Fit Bradley–Terry ratings with a first-move term to a list of games.

    Args:
        p1, p2: the agents of each game as first and second player.
        winner: "p1", "p2", :data:`DRAW` (half a win each way) or None (no winner: left out and
            counted) per game.
        agents: the agents in display/anchor order (default: order of first appearance).
        anchor: the agent fixed at 0 (default ``random`` if present, else the first agent).

    Returns:
        The ratings.

    Raises:
        ConfigError: an unknown anchor, a winner other than p1/p2/draw/None, fewer than two agents
            with decided or drawn games between them, agents not connected by any such game, or games
            that cannot tell the first-move term from the ratings (each pairing in one colour
            order, no mirror game, no cycle).
    """
    if not (len(p1) == len(p2) == len(winner)):
        raise ValueError("p1, p2 and winner must have the same length")
    names = list(dict.fromkeys(agents if agents is not None else [*p1, *p2]))
    for a in [*p1, *p2]:
        if a not in names:
            names.append(a)
    anchor = default_anchor(names) if anchor is None else anchor
    if anchor not in names:
        raise ConfigError(f"anchor {anchor!r} played no game; agents: {', '.join(names)}")
    index = {a: i for i, a in enumerate(names)}
    n_agents = len(names)

    wins = np.zeros((n_agents, n_agents))  # wins[i, j]: games i (P1) vs j (P2) won by P1
    losses = np.zeros((n_agents, n_agents))  # ... won by P2
    draws = np.zeros((n_agents, n_agents))  # ... drawn
    no_winner = np.zeros(n_agents, dtype=np.int64)
    undecided = 0
    for a, b, w in zip(p1, p2, winner):
        i, j = index[a], index[b]
        if w == "p1":
            wins[i, j] += 1
        elif w == "p2":
            losses[i, j] += 1
        elif w == DRAW:
            draws[i, j] += 1
        elif w is None or (isinstance(w, float) and math.isnan(w)):
            undecided += 1
            no_winner[i] += 1
            if j != i:
                no_winner[j] += 1
        else:
            raise ConfigError(f"winner must be 'p1', 'p2', {DRAW!r} or None, got {w!r}")
    played = wins + losses + draws
    _check_connected(names, played)
    _check_identifiable(names, played, index[anchor])

    # a draw is half a win each way (module docstring); without one these are the counts themselves
    fit_wins, fit_losses = (wins + 0.5 * draws, losses + 0.5 * draws) if draws.any() else (wins, losses)
    corrected = not _mle_exists(fit_wins, fit_losses, index[anchor])
    beyond = False
    if not corrected:
        theta, cov, ok = _point_fit(fit_wins, fit_losses, index[anchor])
        # a backstop, the bootstrap's own rule (ratings_bootstrap._fit_batch): a fit that ran beyond
        # DIVERGED_ELO is corrected as each such resample is, so the point and the resamples stay
        # one estimator even where the linear program could not answer
        beyond = corrected = not ok
    if corrected:
        has = played > 0
        fit_wins = fit_wins + HALDANE * has
        fit_losses = fit_losses + HALDANE * has
        theta, cov, _ = _point_fit(fit_wins, fit_losses, index[anchor])

    elo = np.zeros(n_agents)
    se = np.zeros(n_agents)
    free = [i for i in range(n_agents) if i != index[anchor]]
    elo[free] = theta[:-1]
    se[free] = np.sqrt(np.clip(np.diag(cov)[:-1], 0.0, None))
    f, f_se = float(theta[-1]), float(math.sqrt(max(cov[-1, -1], 0.0)))

    off = ~np.eye(n_agents, dtype=bool)
    ratings = []
    for a, i in index.items():
        own_wins = wins[i, :][off[i]].sum() + losses[:, i][off[:, i]].sum()
        own_losses = losses[i, :][off[i]].sum() + wins[:, i][off[:, i]].sum()
        own_draws = draws[i, :].sum() + draws[:, i][off[:, i]].sum()
        games = own_wins + own_losses + wins[i, i] + losses[i, i] + own_draws
        ratings.append(Rating(
            agent=a, elo=snap_elo(elo[i]),
            ci_low=snap_elo(elo[i] - Z95 * se[i]), ci_high=snap_elo(elo[i] + Z95 * se[i]),
            games=int(round(games)), wins=int(round(own_wins)), losses=int(round(own_losses)),
            no_winner=int(no_winner[i]), draws=int(round(own_draws)),
        ))
    # equal ratings: the anchor first, then by name (an order that no optimiser noise can flip)
    ratings.sort(key=lambda r: (-r.elo, r.agent != anchor, r.agent))
    decided = int(round(played.sum()))
    method = (
        "Bradley–Terry (logistic Elo) with a first-move term, maximum likelihood by "
        "Newton's method (analytic gradient and Hessian); 95% intervals from the likelihood's curvature "
        "(Wald, inverse observed information), relative to the anchor"
        + ("; a draw counts as half a win for each side" if draws.any() else "")
        + (f"; the MLE lay beyond the fit's limit of {DIVERGED_ELO:g} Elo (a near-separation), so half a virtual "
           "win was added each way to every pairing that played" if beyond else
           "; the MLE did not exist, so half a virtual win was added each way to every pairing "
           "that played" if corrected else "")
    )
    return Ratings(
        ratings=tuple(ratings), anchor=anchor, first_move=snap_elo(f),
        first_move_ci=(snap_elo(f - Z95 * f_se), snap_elo(f + Z95 * f_se)), games=decided, no_winner=undecided,
        corrected=corrected, method=method, draws=int(draws.sum()),
    )


def linked_groups(p1: Sequence[str], p2: Sequence[str]) -> list[list[str]]:
    """The agents of some games split into the groups their games link (one group: one scale can hold them).

    Args:
        p1, p2: the agents of each game, whatever its outcome.
    """
    names = list(dict.fromkeys([*p1, *p2]))
    index = {a: i for i, a in enumerate(names)}
    played = np.zeros((len(names), len(names)))
    for a, b in zip(p1, p2):
        played[index[a], index[b]] += 1
    return _groups(names, played)


def _groups(names: list[str], played: np.ndarray) -> list[list[str]]:
    """The agents linked by ``played[i, j] > 0`` (games of i as P1 against j), group by group, each sorted."""
    from scipy.sparse.csgraph import connected_components

    links = (played + played.T) > 0
    np.fill_diagonal(links, False)
    n, labels = connected_components(links, directed=False)
    return [sorted(names[i] for i in range(len(names)) if labels[i] == g) for g in range(n)]


def _check_connected(names: list[str], played: np.ndarray) -> None:
    """Every agent must be linked to every other by decided games (else the scales are unrelated)."""
    if len(names) < 2:
        raise ConfigError("ratings need at least two agents")
    groups = _groups(names, played)
    if len(groups) > 1:
        raise ConfigError(
            "ratings need every agent linked by decided games; separate groups: "
            + " | ".join(", ".join(g) for g in groups)
        )


def _check_identifiable(names: list[str], played: np.ndarray, anchor: int) -> None:
    """The first-move term must be told apart from the ratings: with every pairing played in one
    colour order only, no mirror game and no cycle (a vs b, b vs c, c vs a), each game measures
    r_p1 − r_p2 + f and no fit can split f from the ratings (the design is rank-deficient; the
    Newton fit returned NaN and the report a traceback)."""
    keys = [(int(i), int(j)) for i, j in zip(*np.nonzero(played))]
    if np.linalg.matrix_rank(design_matrix(keys, len(names), anchor)) == len(names):
        return
    one_way = [f"{names[i]} vs {names[j]}" for i, j in keys if i != j and not played[j, i]]
    shown = ", ".join(one_way[:3]) + (f" and {len(one_way) - 3} more" if len(one_way) > 3 else "")
    raise ConfigError(
        "ratings cannot tell the first-move advantage from the agents' strengths: each pairing was played in "
        f"one colour order only ({shown}) and no mirror game; play both orders (a config's games_per_side "
        "plays each pairing both ways) or add mirror games")


def _mle_exists(wins: np.ndarray, losses: np.ndarray, anchor: int) -> bool:
    """Whether the Bradley–Terry MLE with the first-move term is finite: the cells are not separated.

    Without the first-move term this is Zermelo's condition (the 'beat' graph is strongly
    connected), but with it a direction that raises some ratings and lowers f can improve every
    cell at once while the beat graph is connected (a seat that almost never wins, an agent that
    wins every game it starts: Pentago-Swap's 0.25 s ladder, whose fit ran past 3,000 Elo). The
    MLE of a grouped logistic model is infinite exactly when some direction d of (ratings, f)
    moves no mixed cell (x·d = 0), no cell of P1 wins only down (x·d >= 0), no cell of P2 wins only
    up (x·d <= 0) and at least one cell strictly (Albert & Anderson 1984; the linear program of
    Konis 2007): that program is solved here by ``scipy.optimize.linprog`` (HiGHS).
    """
    from scipy.optimize import linprog

    cells = np.argwhere((wins + losses) > 0)
    x = design_matrix([(int(i), int(j)) for i, j in cells], wins.shape[0], anchor) / ELO_SCALE
    w = wins[cells[:, 0], cells[:, 1]]
    lo = losses[cells[:, 0], cells[:, 1]]
    mixed, up, down = (w > 0) & (lo > 0), (w > 0) & (lo == 0), (w == 0) & (lo > 0)
    # maximise the one-sided cells' total move, each in its own direction, within the box |d| <= 1
    gain = x[up].sum(axis=0) - x[down].sum(axis=0)
    a_ub = np.vstack([-x[up], x[down]])
    a_eq = x[mixed]
    result = linprog(-gain, A_ub=a_ub if len(a_ub) else None, b_ub=np.zeros(len(a_ub)) if len(a_ub) else None,
                     A_eq=a_eq if len(a_eq) else None, b_eq=np.zeros(len(a_eq)) if len(a_eq) else None,
                     bounds=(-1.0, 1.0), method="highs")
    return bool(result.status != 0 or -result.fun <= SEPARATION_TOLERANCE)  # no answer: the fit's own check decides


#: The linear program's optimum above which the cells are separated (the optimum is 0 or at least ~1/k).
SEPARATION_TOLERANCE = 1e-7


def design_matrix(keys: Sequence[tuple[int, int]], n_agents: int, anchor: int) -> np.ndarray:
    """The fit's design: one row per ordered pairing (P1 index, P2 index), x = r_p1 − r_p2 + f.

    Columns: the ratings of every agent but ``anchor`` (+1 for P1's, −1 for P2's; a mirror's
    cancel), then the first-move term f (+1); scaled from Elo to logits.
    """
    free = [i for i in range(n_agents) if i != anchor]
    column = {a: k for k, a in enumerate(free)}
    design = np.zeros((len(keys), len(free) + 1))
    for row, (i, j) in enumerate(keys):
        if i != j:
            if i in column:
                design[row, column[i]] += 1.0
            if j in column:
                design[row, column[j]] -= 1.0
        design[row, -1] = 1.0
    return design * ELO_SCALE


#: Newton steps; the fits converge in well under 30 (a step below TOLERANCE Elo stops early).
MAX_STEPS = 60
TOLERANCE = 1e-7

#: A rating beyond this many Elo means the fit diverged (its maximum-likelihood estimate does not exist).
DIVERGED_ELO = 3000.0

#: The largest move of any coordinate in one Newton step, in Elo (keeps diverging fits finite).
MAX_STEP_ELO = 400.0


def fit_bradley_terry(design: np.ndarray, wins: np.ndarray, losses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """**The** Bradley–Terry fitter: maximum likelihood for a stack of count arrays at once.

    Args:
        design: (cells, k) the fit's design (:func:`design_matrix`, in logits per Elo).
        wins, losses: (B, cells) per fit, the games of each cell won by P1 and by P2.

    Returns:
        theta: (B, k) each fit's parameters in Elo (the ratings but the anchor's, then f);
        ok: (B,) False where a fit diverged (its maximum-likelihood estimate does not exist).
    """
    b, k = wins.shape[0], design.shape[1]
    theta = np.zeros((b, k))
    games = wins + losses
    ridge = 1e-9 * np.eye(k)
    for _ in range(MAX_STEPS):
        p = logistic(theta @ design.T)  # (B, cells)
        grad = (wins - games * p) @ design  # (B, k)
        hess = information(design, games, p) + ridge
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        # Damping: no coordinate moves more than MAX_STEP_ELO in one step.
        largest = np.max(np.abs(step), axis=1, keepdims=True)
        step = step * np.minimum(1.0, MAX_STEP_ELO / np.maximum(largest, 1e-300))
        theta = theta + step
        if np.max(np.abs(step)) < TOLERANCE:
            break
    ok = np.all(np.abs(theta) < DIVERGED_ELO, axis=1) & np.all(np.isfinite(theta), axis=1)
    return theta, ok


def information(design: np.ndarray, games: np.ndarray, p: np.ndarray) -> np.ndarray:
    """(B, k, k) the observed information (minus the log-likelihood's Hessian) of each fit at P1's win chances ``p``."""
    return np.einsum("bc,ci,cj->bij", games * p * (1.0 - p), design, design)


def _point_fit(wins: np.ndarray, losses: np.ndarray, anchor: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """The maximum-likelihood (ratings without the anchor, f), their covariance, in Elo, and whether
    the fit stayed within :data:`DIVERGED_ELO` (:func:`fit_bradley_terry`'s ``ok``)."""
    cells = np.argwhere((wins + losses) > 0)  # row-major: the bootstrap's cell order too
    design = design_matrix([(int(i), int(j)) for i, j in cells], wins.shape[0], anchor)
    w = wins[cells[:, 0], cells[:, 1]][None, :]
    l_ = losses[cells[:, 0], cells[:, 1]][None, :]
    theta, ok = fit_bradley_terry(design, w, l_)
    info = information(design, w + l_, logistic(theta @ design.T))[0]
    try:
        cov = np.linalg.inv(info)
    except np.linalg.LinAlgError:
        cov = np.full_like(info, np.nan)
    return theta[0], cov, bool(ok[0])
