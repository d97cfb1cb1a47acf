"""The state system: SLS and top files in, rendered, compiled and run by the requisite engine.

Rendering (``render``, ``render_pydsl``, ``render_stateconf``, ``jinja``, ``jinja_filters``,
``hostview``), the top file (``top``), high data (``highstate``, ``highdata``), compiling to low
chunks (``compiler``, ``requisites``) and running them (``engine``, ``state_call``,
``_state_checks``, ``runcontext``). The rest of ``common/`` (the wire, crypto, config, logging,
the loader) is beneath it: nothing there imports this package but for types.
"""
