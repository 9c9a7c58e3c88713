"""**The** codes of a game's outcome as the kernels return it (``apply_move``'s winner, docs/games.md):
0 the game goes on, -1 / +1 the colour that won (the first player's sign is -1: boop.'s Blue),
:data:`DRAW` a draw (boop. has none; Connect Four's full board)."""

#: the game goes on
ONGOING = 0
#: the game ended in a draw (not a colour: -1 and +1 are the winners)
DRAW = 2
