"""How people and programs reach boopexp: ``cli`` and ``commands`` (the click command line),
``interactive`` (a human against an agent in the terminal) and ``bench`` (``boopexp bench``).
"""
