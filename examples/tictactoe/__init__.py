"""Tic-tac-toe as a game of your own: the complete example of docs/games.md, "Your own game".

``game`` holds the Python values (what the config's ``game: {module: tictactoe.game}`` names),
``kernels`` the compiled kernels the search runs.
"""
