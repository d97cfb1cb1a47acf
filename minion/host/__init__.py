"""Host code: what acts on or reads the host, run by the minion's jobs and by the master alike.

``modules/`` holds the execution modules (the loader's built-in folder for them:
:data:`briny.common.loader.BUILTIN_DIRS`); beside it, the helpers they share (apt sources and
keys, SQL clients, systemd, processes, shadow tools, file operations, system files, the core
grains). Nothing here imports the minion daemon (``briny.minion`` outside ``host``): what a job
needs of the daemon reaches it through its context (:class:`briny.common.jobcontext.JobContext`,
``__job__``). tests/unit/test_imports.py checks the direction.
"""
