"""The state system: SLS and top files in, rendered, compiled and run by the requisite engine.

Rendering (``render``, ``render_pydsl``, ``render_stateconf``, ``jinja``, ``jinja_filters``,
``hostview``), the top file (``top``), high data (``highstate``, ``highdata``), compiling to low
chunks (``compiler``, ``requisites``) and running them (``engine``, ``state_call``,
``_state_checks``, ``runcontext``); ``stages`` is what every renderer shares. The rest of
``common/`` (the wire, crypto, config, logging, the loader) is beneath it, but for the pillar
and the reactor, which render with it.
"""
