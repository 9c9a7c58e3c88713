"""One game: ``identity`` (settings hash, seeds), ``settings`` (a game's settings as one value,
which names a pairing and builds its tasks), ``contract`` (the task a game is given and the
record it returns), ``match`` (the players and ``play_game``), ``replay`` (a stored game walked or
played again), ``openings`` (start positions: a config's ``openings:``, suite files),
``starts`` (those positions played: drawn, checked, resolved for a game), ``throttle`` (the
host's rate, the cpu-mode throttle), ``calibrate`` (the device profile's fit), ``session`` (a
human against an agent: the rules of ``boopexp play``), ``warmup`` (the engine compiled before the clock starts),
``btp`` (the engine side of the text protocol, docs/protocol.md: any agent answers a host's lines),
``btp_host`` (its host side: an engine agent, a program speaking btp, as a player) and
``btp_lines`` (the protocol's lines as either side reads them, bounded in length).
"""
