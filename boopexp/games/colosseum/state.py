"""The Colosseum Survival state value (19 int64: the walls as bitboards, both positions, the side
to move, the ply, M, K and the separation test), the bitboard geometry the kernels compile,
``initial_state`` and the game's options (``OPTIONS``).

Plain Python and numpy: the kernels (:mod:`boopexp.games.colosseum.kernels`) compile the
bitboard walk ``reach`` below; the notation and the start's end check call it as it is. The
rules are those of the COMP 424 (Winter 2022) framework, spec/games/COLOSSEUM.md.

The board is ``M x M`` (``M`` = 2..12) inside a fixed 12 x 12 grid: cell ``(r, c)`` is bit
``12*r + c`` of a 144-bit board, held in three words of 48 bits (four rows each; word
``(12*r + c) // 48``, bit ``(12*r + c) % 48``). A wall is a side ``d`` of a cell (0 Up, 1 Right,
2 Down, 3 Left, the spec's §1); ``s[3*d : 3*d + 3]`` is the bitboard of the cells with a wall on side d.
A wall between two cells is stored in both (side d of one, side ``d ^ 2`` of the other), the
board's edges are walls, and every cell outside the ``M x M`` board is walled on all four sides,
so a walk or a region never leaves the board and no shift carries from one row into the next.

Layout of a state ``s`` (``STATE_SIZE`` = 19 int64: a position is 152 bytes, copied in 19 loads):

=================  ==============================================================
``s[3*d + w]``     word ``w`` of the cells walled on side ``d`` (``WALL``, d = 0..3)
``s[12]``          A's cell ``12*r + c`` (``POS_A``; A = player 0, colour -1, moves first)
``s[13]``          B's cell (``POS_B``; colour +1)
``s[14]``          side to move (``TO_MOVE``): -1 A, +1 B
``s[15]``          plies played (``MOVE_NUMBER``)
``s[16]``          the board size M (``SIZE``)
``s[17]``          the step limit K = (M + 1) // 2 (``MAX_STEP``)
``s[18]``          the end test's separation test (``SEPARATION``: index in ``SEPARATIONS``)
=================  ==============================================================

The separation test is a game option (``separation``), not part of the position: every test gives
the same outcome, only its cost differs (the Colosseum report's Experiment 3), so the position
string leaves it out and a state carries it to every kernel that copies the state (a search's
nodes, its playouts).

A move is a destination and a wall side: code ``4*(12*r + c) + d`` (``N_MOVE_CODES`` = 576), so
the codes ascend in the spec's enumeration order (§5: r, then c, then d).
"""

from __future__ import annotations

import functools

import numpy as np

from boopexp import schema

#: the grid the state holds: 12 x 12 cells, the largest board of the spec's §2
GRID = 12
#: bits per word (four rows of 12 cells), words per bitboard
WORD_BITS = 48
N_WORDS = 3
WORD_MASK = (1 << WORD_BITS) - 1
#: a row's bits at the bottom of a word: what an Up step carries into the word before
ROW_MASK = (1 << GRID) - 1
#: the shift that moves the top row of a word into the bottom row of the next
CARRY = WORD_BITS - GRID
STATE_SIZE = 19
STATE_DTYPE = np.int64
WALL = 0
POS_A = 12
POS_B = 13
TO_MOVE = 14
MOVE_NUMBER = 15
SIZE = 16
MAX_STEP = 17
SEPARATION = 18
#: the end test's ways of telling whether the players are separated (the game option ``separation``,
#: ``s[SEPARATION]`` their index): the bitboard flood from A (the default), the original framework's
#: union-find over every cell's open Right and Down sides (spec §6: agent A's cost), and a
#: bidirectional breadth-first search between the players (the report's Experiment 3, agent B)
SEPARATIONS = ("bitboard", "union-find", "bidirectional")
#: the colours: A (player 0, moves first) and B
FIRST = -1
SECOND = 1
#: sides of a cell (the spec's §1): Up, Right, Down, Left; the opposite side is d ^ 2
UP, RIGHT, DOWN, LEFT = 0, 1, 2, 3
SIDES = "URDL"
#: the cell-index step of a move across side d
CELL_STEP = (-GRID, 1, GRID, -1)
N_MOVE_CODES = GRID * GRID * 4
#: the board sizes the state holds (the spec's §2: a port accepts any M >= 2; the grid ends at 12)
MIN_SIZE = 2
MAX_SIZE = GRID
#: QUIRK-CS1: ``World(board_size=None)`` draws ``numpy.random.randint(5, 10)``: M = 5..9, although
#: the framework's constants are named MIN_BOARD_SIZE = 5 and MAX_BOARD_SIZE = 10
WORLD_SIZES = (5, 9)
#: the start of ``initial_state(None)``: the seed a game without one is drawn from
DEFAULT_SEED = 0


def max_step(size: int) -> int:
    """The step limit K = (M + 1) // 2 of an M x M board (the spec's §1)."""
    return (size + 1) // 2


def cell_bit(cell: int) -> tuple[int, int]:
    """(word, bit mask) of the cell index ``12*r + c``."""
    return cell // WORD_BITS, 1 << (cell % WORD_BITS)


def has_wall(st: np.ndarray | list[int], cell: int, d: int) -> bool:
    """Whether side ``d`` of the cell index ``cell`` is a wall (or an edge) (``st``: a state, or
    its ``tolist()``, much faster to read one word at a time)."""
    w, b = cell_bit(cell)
    return bool(int(st[WALL + 3 * d + w]) & b)


def set_wall(st: np.ndarray, cell: int, d: int) -> None:
    """Wall side ``d`` of ``cell`` and the facing side of its neighbour (the spec's §1: both
    flags). ``cell``'s side ``d`` must not be an edge."""
    for at, side in ((cell, d), (cell + CELL_STEP[d], d ^ 2)):
        w, b = cell_bit(at)
        st[WALL + 3 * side + w] |= b


def reach(st, start, blocker, steps):
    """The cells reachable from the cell index ``start`` in at most ``steps`` steps across sides
    that are not walls, never entering the cell ``blocker`` (-1: none), as three words;
    ``steps`` past the board's size floods the whole region (the walk stops when it grows no
    more). Self-contained (constants only) so that the kernels compile it as it is."""
    r0 = r1 = r2 = 0
    if start < WORD_BITS:
        r0 = 1 << start
    elif start < 2 * WORD_BITS:
        r1 = 1 << (start - WORD_BITS)
    else:
        r2 = 1 << (start - 2 * WORD_BITS)
    k0 = k1 = k2 = WORD_MASK
    if blocker >= 0:
        if blocker < WORD_BITS:
            k0 ^= 1 << blocker
        elif blocker < 2 * WORD_BITS:
            k1 ^= 1 << (blocker - WORD_BITS)
        else:
            k2 ^= 1 << (blocker - 2 * WORD_BITS)
    for _ in range(steps):
        # one step from every cell reached: u, d the cells whose Up, Down side is open
        u0 = r0 & ~st[WALL + 0] & WORD_MASK
        u1 = r1 & ~st[WALL + 1] & WORD_MASK
        u2 = r2 & ~st[WALL + 2] & WORD_MASK
        d0 = r0 & ~st[WALL + 6] & WORD_MASK
        d1 = r1 & ~st[WALL + 7] & WORD_MASK
        d2 = r2 & ~st[WALL + 8] & WORD_MASK
        # Right and Left stay in the word: the last column is walled on the right, the first on the left
        n0 = ((r0 & ~st[WALL + 3]) << 1) | ((r0 & ~st[WALL + 9] & WORD_MASK) >> 1)
        n1 = ((r1 & ~st[WALL + 4]) << 1) | ((r1 & ~st[WALL + 10] & WORD_MASK) >> 1)
        n2 = ((r2 & ~st[WALL + 5]) << 1) | ((r2 & ~st[WALL + 11] & WORD_MASK) >> 1)
        # Up and Down move 12 bits; a word's first row goes up into the word before, its last down
        n0 |= (u0 >> GRID) | ((u1 & ROW_MASK) << CARRY) | (d0 << GRID)
        n1 |= (u1 >> GRID) | ((u2 & ROW_MASK) << CARRY) | (d1 << GRID) | (d0 >> CARRY)
        n2 |= (u2 >> GRID) | (d2 << GRID) | (d1 >> CARRY)
        n0 = (n0 & k0) | r0
        n1 = (n1 & k1) | r1
        n2 = (n2 & k2) | r2
        if n0 == r0 and n1 == r1 and n2 == r2:
            break
        r0, r1, r2 = n0, n1, n2
    return r0, r1, r2


#: enough steps for a flood to fill any region of the grid
FLOOD = GRID * GRID


def holds(w0, w1, w2, cell):
    """Whether the three words hold the cell index ``cell``."""
    if cell < WORD_BITS:
        return (w0 >> cell) & 1 == 1
    if cell < 2 * WORD_BITS:
        return (w1 >> (cell - WORD_BITS)) & 1 == 1
    return (w2 >> (cell - 2 * WORD_BITS)) & 1 == 1


def count_bits(x):
    """The number of set bits of a word (plain Python; the kernels use the popcount intrinsic)."""
    return bin(x).count("1")


def end_check(st):
    """``World.check_endgame`` (the spec's §6): (over, A's region size, B's region size). The
    regions are the cells joined by open sides; while A and B share one, both sizes are its
    size and the game goes on. Plain Python (the kernels' :func:`end_check` is compiled)."""
    a0, a1, a2 = reach(st, st[POS_A], -1, FLOOD)
    size_a = count_bits(a0) + count_bits(a1) + count_bits(a2)
    if holds(a0, a1, a2, st[POS_B]):
        return False, size_a, size_a
    b0, b1, b2 = reach(st, st[POS_B], -1, FLOOD)
    return True, size_a, count_bits(b0) + count_bits(b1) + count_bits(b2)


def cells(w0: int, w1: int, w2: int) -> list[int]:
    """The cell indices of three words, ascending (r, then c)."""
    out = []
    for w, x in enumerate((int(w0), int(w1), int(w2))):
        while x:
            low = x & -x
            out.append(w * WORD_BITS + low.bit_length() - 1)
            x ^= low
    return out


def legal_moves(st: np.ndarray) -> list[int]:
    """The legal move codes of the side to move in the spec's §5 order (plain Python, for the
    notation's ``parse_move``; the kernels' ``legal_move_codes`` compiles the same reach)."""
    me, them = (POS_A, POS_B) if st[TO_MOVE] == FIRST else (POS_B, POS_A)
    reached = reach(st, int(st[me]), int(st[them]), int(st[MAX_STEP]))
    return [4 * cell + d for cell in cells(*reached) for d in range(4) if not has_wall(st, cell, d)]


def empty_board(size: int) -> np.ndarray:
    """An M x M board with its edges walled (every cell outside it walled all round), no player
    placed, A to move."""
    return _empty_board(check_size(size)).copy()


@functools.cache
def _empty_board(size: int) -> np.ndarray:
    """:func:`empty_board`'s board, built once per size (callers get a copy)."""
    st = np.zeros(STATE_SIZE, dtype=STATE_DTYPE)
    for r in range(GRID):
        for c in range(GRID):
            outside = r >= size or c >= size
            edges = (r == 0, c == size - 1, r == size - 1, c == 0)
            for d in range(4):
                if outside or edges[d]:
                    w, b = cell_bit(GRID * r + c)
                    st[WALL + 3 * d + w] |= b
    st[SIZE] = size
    st[MAX_STEP] = max_step(size)
    st[TO_MOVE] = FIRST
    return st


def check_size(size: object, key: str = "board_size") -> int:
    """``size`` if it is a board size the state holds (2..12), else ConfigError naming it."""
    return schema.integer(int(size) if isinstance(size, np.integer) else size, key, MIN_SIZE, MAX_SIZE)


def _generator(seed: int) -> np.random.RandomState:
    """numpy's legacy generator, seeded as ``numpy.random.seed(seed)`` seeds the global one (the
    spec's §3: a seed below 2**32 reproduces the original's start exactly; a larger one is
    given as its 32-bit words, lowest first)."""
    if 0 <= seed < 2**32:
        return np.random.RandomState(seed)
    words = []
    rest = abs(int(seed))
    while rest:
        words.append(rest & 0xFFFFFFFF)
        rest >>= 32
    return np.random.RandomState(np.array(words, dtype=np.uint32))


def world_board(gen: np.random.RandomState, size: int | None) -> np.ndarray:
    """One ``World(board_size=size)`` start (the spec's §3), every draw from ``gen`` in the
    original's order: M if not given (QUIRK-CS1: 5..9), K mirrored wall pairs (each drawn again
    while it hits an edge or a wall), A's start and B's = its half-turn image (A drawn again while
    they coincide), A to move. It may start separated: :func:`initial_state` draws again."""
    if size is None:
        size = int(gen.randint(WORLD_SIZES[0], WORLD_SIZES[1] + 1))
    st = empty_board(size)
    for _ in range(max_step(size)):
        r, c = (int(v) for v in gen.randint(0, size, size=2))
        d = int(gen.randint(0, 4))
        while has_wall(st, GRID * r + c, d):
            r, c = (int(v) for v in gen.randint(0, size, size=2))
            d = int(gen.randint(0, 4))
        set_wall(st, GRID * r + c, d)
        set_wall(st, GRID * (size - 1 - r) + size - 1 - c, d ^ 2)  # the mirror: a half turn
    a = [int(v) for v in gen.randint(0, size, size=2)]
    while a[0] == size - 1 - a[0] and a[1] == size - 1 - a[1]:
        a = [int(v) for v in gen.randint(0, size, size=2)]
    st[POS_A] = GRID * a[0] + a[1]
    st[POS_B] = GRID * (size - 1 - a[0]) + size - 1 - a[1]
    return st


def initial_state(seed: int | None = None, board_size: int | None = None,
                  size_range: tuple[int, int] | None = None, separation: str = SEPARATIONS[0]) -> np.ndarray:
    """The random start of the game whose identity seed is ``seed`` (None: ``DEFAULT_SEED``),
    drawn as the original draws it (the spec's §3) from numpy's legacy generator seeded with it,
    so a seed below 2**32 gives the original's start for that seed exactly
    (:func:`start_draws`, whose arguments ``seed``, ``board_size`` and ``size_range`` are), its
    end test's ``separation`` set (:func:`with_options`).

    Raises:
        ConfigError: a board size or range outside 2..12, an unknown separation test.
    """
    return with_options(start_draws(seed, board_size, size_range)[0], separation=separation)


def with_options(st: np.ndarray, board_size: int | None = None, size_range: tuple[int, int] | None = None,
                 separation: str = SEPARATIONS[0]) -> np.ndarray:
    """``st`` (a start given as a position, e.g. a record's ``start``) with the game options that are
    not in a position string set: ``separation``. The start's options (``board_size``,
    ``size_range``) drew the position and are not applied again.

    Raises:
        ConfigError: an unknown separation test.
    """
    st[SEPARATION] = SEPARATIONS.index(schema.choice(separation, "separation", SEPARATIONS))
    return st


def check_size_range(value: object, key: str = "size_range") -> tuple[int, int]:
    """``value`` as (lo, hi) if it is a pair of board sizes 2..12 with lo <= hi, else ConfigError."""
    want = f"[lo, hi] with lo <= hi in {MIN_SIZE}..{MAX_SIZE}"
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise schema.invalid(key, value, want)
    lo, hi = (check_size(v, key) for v in value)
    if lo > hi:
        raise schema.invalid(key, list(value), want)
    return lo, hi


#: The game's options (a config's ``game: {name: colosseum, KEY: VALUE}``, ``boopexp game
#: --game-option KEY=VALUE``; docs/games.md "Values"): name -> (what is allowed, the check that
#: returns the value as ``initial_state`` takes it). Only the options a config sets are hashed.
OPTIONS = {
    "board_size": (f"an integer board size M in {MIN_SIZE}..{MAX_SIZE} (simulator.py --board_size)",
                   check_size),
    "size_range": (f"[lo, hi], M drawn from lo..hi, in {MIN_SIZE}..{MAX_SIZE} (autoplay: [6, 11], QUIRK-CS1)",
                   check_size_range),
    "separation": (" or ".join(SEPARATIONS) + " (the end test's separation test; the outcome is the same)",
                   lambda value, key="separation": schema.choice(value, key, SEPARATIONS)),
}


def start_draws(seed: int | None = None, board_size: int | None = None,
                size_range: tuple[int, int] | None = None) -> tuple[np.ndarray, int]:
    """The start of :func:`initial_state` and the number of boards drawn for it (the golden
    files' ``init_attempts``).

    Args:
        seed: the game's seed (None: ``DEFAULT_SEED``).
        board_size: M, fixed (``simulator.py --board_size M``); None draws it.
        size_range: (lo, hi), both included: M drawn first from that range, as autoplay draws
            6..11 (QUIRK-CS1); None with no ``board_size``: ``World``'s own draw, 5..9.

    A start whose players are already separated is thrown away and drawn again from the same
    generator, not reseeded (the simulator's retry). QUIRK-CS2: the retry forgets a size drawn
    from ``size_range`` and lets ``World`` draw 5..9 again; a fixed ``board_size`` is kept.

    Raises:
        ConfigError: a board size or range outside 2..12.
    """
    gen = _generator(DEFAULT_SEED if seed is None else int(seed))
    size = None if board_size is None else check_size(board_size)
    if size is None and size_range is not None:
        lo, hi = check_size_range(size_range)
        st = world_board(gen, int(gen.randint(lo, hi + 1)))
    else:
        st = world_board(gen, size)
    attempts = 1
    while end_check(st)[0]:
        st = world_board(gen, size)  # QUIRK-CS2: the retry is World(board_size=--board_size)
        attempts += 1
    return st, attempts
