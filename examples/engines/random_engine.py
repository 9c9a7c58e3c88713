#!/usr/bin/env python3
"""A btp engine in plain Python (standard library only): it plays uniformly random legal moves.

It keeps its own board from ``position startpos|fen <position string> moves ...`` (the rules of boop., RULES.md:
placement, the push, victory, promotion with the choice named in the move; a position that extends
the last one plays only the new moves) and knows nothing of boopexp but the protocol
(docs/protocol.md). Use it in a config::

    agents:
      randpy: {engine: [python3, examples/engines/random_engine.py]}

``newgame seed S`` seeds its generator (``random.Random``), so its games are reproducible too.
"""

import random
import sys

FILES = "abcdef"
DIRS = [(-1, -1), (-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1)]
LINE_DIRS = [(-1, 1), (0, 1), (1, 1), (1, 0)]  # the rules' order of candidate lines (RULES.md §5)


def name(sq):
    r, c = divmod(sq, 6)
    return FILES[c] + str(6 - r)


def parse_square(text):
    return 6 * (6 - int(text[1])) + FILES.index(text[0].lower())


class Board:
    """The board: cells -2..2 (Blue negative, large = 2), pools {colour: [small, large]}, L counters."""

    def __init__(self):
        self.cells = [0] * 36
        self.pool = {-1: [8, 0], 1: [8, 0]}
        self.large = {-1: 0, 1: 0}
        self.to_move = -1
        self.winner = 0

    @classmethod
    def from_string(cls, text):
        """The board of a one-line position string (docs/protocol.md: ``rows pools side L move``,
        e.g. ``....../..b.../...r../....../....../...... 7,0 7,0 b 0,0 2``); ValueError if malformed."""
        fields = text.split()
        rows = fields[0].split("/") if fields else []
        if len(fields) < 4 or len(rows) != 6 or any(len(r) != 6 for r in rows):
            raise ValueError(f"{text!r} is not a position string")
        cells = {".": 0, "b": -1, "B": -2, "r": 1, "R": 2}
        board = cls()
        try:
            board.cells = [cells[ch] for row in rows for ch in row]
            board.pool = {-1: [int(n) for n in fields[1].split(",")], 1: [int(n) for n in fields[2].split(",")]}
            board.to_move = {"b": -1, "r": 1}[fields[3]]
            owned = {c: sum(1 for v in board.cells if v == 2 * c) + board.pool[c][1] for c in (-1, 1)}
            counters = [int(n) for n in fields[4].split(",")] if len(fields) > 4 else [owned[-1], owned[1]]
        except (KeyError, ValueError, IndexError):
            raise ValueError(f"{text!r} is not a position string") from None
        board.large = {-1: counters[0], 1: counters[1]}
        return board

    def copy(self):
        other = Board()
        other.cells, other.pool = list(self.cells), {k: list(v) for k, v in self.pool.items()}
        other.large, other.to_move, other.winner = dict(self.large), self.to_move, self.winner
        return other

    def legal(self):
        small, large = self.pool[self.to_move]
        sizes = [s for s, n in ((1, small), (2, large)) if n]
        return [(s, q) for s in sizes for q in range(36) if self.cells[q] == 0]

    def place(self, size, sq):
        """Place and push (RULES.md §3, §4); the candidate groups of the mover after it, or [] if it won."""
        me = self.to_move
        self.cells[sq] = me * size
        self.pool[me][size - 1] -= 1
        r, c = divmod(sq, 6)
        for dr, dc in DIRS:
            vr, vc, tr, tc = r + dr, c + dc, r + 2 * dr, c + 2 * dc
            if not (0 <= vr < 6 and 0 <= vc < 6):
                continue
            v = self.cells[6 * vr + vc]
            if v == 0 or (abs(v) == 2 and size == 1):
                continue
            if 0 <= tr < 6 and 0 <= tc < 6:
                if self.cells[6 * tr + tc] == 0:
                    self.cells[6 * tr + tc], self.cells[6 * vr + vc] = v, 0
            else:  # ejected: back to its owner's pool with its size
                self.cells[6 * vr + vc] = 0
                self.pool[1 if v > 0 else -1][abs(v) - 1] += 1
        if self.won(me):
            self.winner = me
            return []
        return self.groups(me)

    def won(self, me):
        if self.pool[me] == [0, 0] and self.large[me] == 8:
            return True
        return any(all(self.cells[q] == 2 * me for q in g) for g in self.lines(me))

    def lines(self, me):
        out = []
        for sq in range(36):
            r, c = divmod(sq, 6)
            for dr, dc in LINE_DIRS:
                cells = [(r + k * dr, c + k * dc) for k in range(3)]
                if all(0 <= a < 6 and 0 <= b < 6 and self.cells[6 * a + b] * me > 0 for a, b in cells):
                    out.append(tuple(6 * a + b for a, b in cells))
        return out

    def groups(self, me):
        singles = self.pool[me] == [0, 0]
        lines = self.lines(me)  # once: each square takes the lines that start on it
        out = []
        for sq in range(36):
            if self.cells[sq] * me > 0:
                if singles:
                    out.append((sq,))
                out.extend(g for g in lines if g[0] == sq)
        return out

    def promote(self, group):
        me = self.to_move
        for q in group:
            if abs(self.cells[q]) == 1:
                self.large[me] += 1
            self.cells[q] = 0
            self.pool[me][1] += 1

    def play(self, text):
        """Play a move in the notation (``c3``, ``C3``, ``c4:a4b4c4``); ValueError if it is not legal."""
        head, _, tail = text.partition(":")
        if len(head) != 2 or head[0].lower() not in FILES or head[1] not in "123456":
            raise ValueError(f"{text!r} is not a move")
        size, sq = (2 if head[0].isupper() else 1), parse_square(head)
        if self.winner or (size, sq) not in self.legal():
            raise ValueError(f"{text!r} is not legal here")
        groups = self.place(size, sq)
        if groups:
            chosen = tuple(parse_square(tail[i:i + 2]) for i in range(0, len(tail), 2)) if tail else None
            if chosen is None and len(groups) > 1:
                raise ValueError(f"{text!r} must name the promoted group")
            if chosen is not None and chosen not in groups:
                raise ValueError(f"{text!r}: that group is not a candidate")
            self.promote(chosen or groups[0])
        self.to_move = -self.to_move


def main():
    rng = random.Random(0)
    board, lost = Board(), False
    seen = (["startpos"], [])  # the last position set up: a position that extends it plays only the new moves
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        cmd = words[0]
        if cmd == "btp":
            print("id name random_engine.py\nid author boopexp examples\nid protocol 1\nbtpok", flush=True)
        elif cmd == "isready":
            print("readyok", flush=True)
        elif cmd == "newgame":
            if "seed" in words:
                rng = random.Random(int(words[words.index("seed") + 1]))
            board, lost, seen = Board(), False, (["startpos"], [])
        elif cmd == "position":
            end = words.index("moves") if "moves" in words else len(words)
            head, moves = words[1:end], words[end + 1:]
            if not lost and head == seen[0] and moves[:len(seen[1])] == seen[1]:
                todo = moves[len(seen[1]):]  # the same game a few plies on: only the new moves
            else:
                todo, lost = moves, True  # until the position is set up: no move on a wrong board
                if head[:1] == ["fen"]:
                    try:
                        board = Board.from_string(" ".join(head[1:]))
                    except ValueError as exc:
                        print(f"info error {exc}", flush=True)
                        continue
                elif head == ["startpos"]:
                    board = Board()
                else:
                    print("info error position: startpos or fen <position string>", flush=True)
                    continue
            lost = True
            for text in todo:
                try:
                    board.play(text)
                except ValueError as exc:
                    print(f"info error {exc}", flush=True)
                    break
            else:
                lost, seen = False, (head, moves)
        elif cmd == "go":
            moves = board.legal()
            if lost or board.winner or not moves:
                print("bestmove (none)", flush=True)
                continue
            size, sq = rng.choice(moves)
            text = name(sq).upper()[0] + name(sq)[1] if size == 2 else name(sq)
            groups = board.copy().place(size, sq)
            if len(groups) > 1:
                text += ":" + "".join(name(q) for q in rng.choice(groups))
            print(f"bestmove {text}", flush=True)
        elif cmd == "quit":
            return


if __name__ == "__main__":
    main()
