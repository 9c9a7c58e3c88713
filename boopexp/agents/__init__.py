"""Who plays and how long (engine-free): ``specs`` (agent names, parameters, presets),
``roster`` (variants declared in a config), ``plugins`` (plugin agents) and ``budget`` (budget
modes, device profiles, cost overrides).
"""
