"""The games layer: one subpackage per game, each the compiled and Python halves of the game
contract (docs/games.md).

``connect_four`` (Connect Four, checked move for move against OpenSpiel's ``connect_four``) is
the first. A game's ``kernels`` module holds its compiled kernels (it imports numba); the rest of
its subpackage is plain Python, so importing this package, or a game's front door, compiles
nothing and loads no numba.
"""
