"""``boopexp serve``: the stores under a folder in the browser (experiments, progress, the game viewer).

Needs the optional extra ``web`` (FastAPI, uvicorn, Jinja2: ``pip install 'boopexp[web]'``;
``make install`` includes it). Reads only: nothing under the root is written or locked.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import webbrowser
from pathlib import Path
from typing import TYPE_CHECKING

import click

from boopexp.errors import ConfigError
from boopexp.interfaces.commands import FOLDER

if TYPE_CHECKING:
    from boopexp.experiments.config import ExperimentConfig

#: Hosts that only this machine reaches (no warning).
LOOPBACK_NAMES = ("localhost",)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (127.0.0.0/8, ::1, localhost)."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening (port 0: a free port).

    Raises:
        ConfigError: the address cannot be bound (in use, not this machine's, no permission).
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ConfigError(f"--host {host!r}: {exc.strerror}; give an address of this machine "
                          "(127.0.0.1, 0.0.0.0, ::1)") from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; choose another --port "
                          "(or --host)") from None
    return sock


def _configs(paths: tuple[Path, ...]) -> list[ExperimentConfig]:
    """The ``--config`` files, read and checked (before the port is bound).

    Raises:
        ConfigError: one line: a config that does not load (its own line), or two of one name.
    """
    from boopexp.experiments.config import load_config

    configs: dict[str, tuple[Path, ExperimentConfig]] = {}
    for path in paths:
        config = load_config(path)
        if config.name in configs:
            raise ConfigError(f"--config {str(path)!r}: its name {config.name!r} is the name of --config "
                              f"{str(configs[config.name][0])!r} too; /play names a config by its name: give "
                              "configs of different names")
        configs[config.name] = (path, config)
    return [config for _, config in configs.values()]


def _check_play_out(folder: Path) -> None:
    """Refuse at start a ``--play-out`` that a finished game could not be saved in (the check of
    ``boopexp play --out``: ``play_store.check_out``, which leaves nothing behind); the default,
    ROOT/play, is checked when a game starts (a read-only root is served all the same).

    Raises:
        ConfigError: ``cannot write the results folder '<folder>': <reason>; choose another --play-out``.
    """
    from boopexp.errors import StoreError
    from boopexp.interfaces.play_store import check_out

    try:
        check_out(folder)
    except StoreError as exc:
        raise ConfigError(f"--play-out: {str(exc).removesuffix('; choose another --out')}; choose another "
                          "--play-out") from None


@click.command("serve")
@click.option("--root", type=FOLDER, default=Path("results"), show_default=True,
              help="The folder whose stores (at any depth) and report files are shown; nothing outside it is served.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on; anything but this machine's loopback is reachable by others "
                   "(a warning says so).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="The port (0: any free port, printed).")
@click.option("--open", "open_browser", is_flag=True, help="Open the dashboard in the default browser.")
@click.option("--play-out", type=FOLDER, default=None,
              help="Where games played in the browser (/play) are saved: the one folder serve writes "
                   "[default: ROOT/play].")
@click.option("--config", "config_paths", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="An experiment config whose agents (variants, plugins, built-ins under its params) /play offers "
                   "too, each played with the config's budget, preset, seed and ply cap, as 'boopexp play --config' "
                   "plays it (repeatable; the configs' names must differ).")
@click.option("--max-searches", type=click.IntRange(1, 1024), default=None,
              help="How many agents' searches /play runs at once; a move or hint beyond them is refused "
                   "(HTTP 503) [default: one per core].")
def serve(root: Path, host: str, port: int, open_browser: bool, play_out: Path | None,
          config_paths: tuple[Path, ...], max_searches: int | None) -> None:
    """Serve the stores under --root in the browser, read only: every experiment's progress
    (live while a run plays), SPRT state, forfeits, tables and figures, a game viewer
    (/game?store=&pairing=&index=), and games against an agent (/play, saved in --play-out).
    The JSON API is described at /docs. Ctrl-C stops it."""
    if not root.is_dir():
        raise ConfigError(f"--root {str(root)!r} is not a folder; give the folder that holds the stores "
                          "(default results)")
    configs = _configs(config_paths)
    if play_out is not None:
        _check_play_out(play_out)
    try:
        import uvicorn

        from boopexp.interfaces.web.app import create_app
    except ImportError as exc:
        raise ConfigError(f"boopexp serve needs the 'web' extra ({exc.name} is missing): "
                                "pip install 'boopexp[web]' (make install includes it)") from None
    if not is_loopback(host):
        click.echo(f"Warning: --host {host} is reachable from other machines: anyone who can reach it can read "
                   f"every store under {root}", err=True)
    sock = _listen(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound}/"
    app = create_app(root, play_out=play_out, configs=configs, max_searches=max_searches)
    # an open dashboard's event stream does not hold Ctrl-C: the streams are ended after a second
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                           timeout_graceful_shutdown=1))
    click.echo(f"Serving the stores under {root}/ at {url} (read only; Ctrl-C stops)", err=False)
    if open_browser:
        threading.Timer(0.5, webbrowser.open, args=(url,)).start()
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
