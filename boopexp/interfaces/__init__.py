"""How people and programs reach boopexp: ``cli`` and ``commands`` (the click command line),
``interactive`` (``boopexp play``'s terminal dialogue), ``play_store`` (where ``boopexp play``
keeps a game), ``bench`` (``boopexp bench``) and ``web`` (``boopexp serve``: the stores in the
browser).
"""
