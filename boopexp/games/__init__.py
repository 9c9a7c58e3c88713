"""The games layer (docs/games.md): every game boopexp plays, boop. one of several; one subpackage
per game besides boop., each the compiled and Python halves of the game contract.

``registry`` (**the** ``Game`` value and ``get``: a game by its name), ``position`` (the game-neutral
position, ``GamePosition``), ``boop`` (boop.'s Python values under the contract's names, the
reference game; its kernels are the engine's own), ``connect_four`` (Connect Four, checked move for
move against OpenSpiel's ``connect_four``), ``pentago_swap`` (Pentago-Swap, checked ply by ply
against the COMP 424 framework's traces) and ``colosseum`` (Colosseum Survival, checked against the
original course code's golden traces). A
game's ``kernels`` module holds its compiled kernels (it imports numba), bound to the engine's
search templates (:mod:`boopexp.engine.binding`) when the game is first searched; the rest is
plain Python, so importing this package, or a game's front door, compiles nothing and loads no
numba.
"""
