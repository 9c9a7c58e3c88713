"""``boopexp serve``: a local web app over the stores under a root folder (optional extra ``web``).

``app`` builds the FastAPI application (pages and JSON API), ``stores`` reads what it serves
(stores, progress, one game, report files: safely under the root, never writing), ``game`` walks a
game's moves for the viewer, ``play`` holds the games a human plays in the browser against an agent
(saved in the play folder, the one place the server writes; with ``game``, the only parts that load
the engine). Templates and the plain
JavaScript + SVG of the pages are package data (``templates/``, ``static/``): no build step.
"""
