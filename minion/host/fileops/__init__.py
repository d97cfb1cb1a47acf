"""Pure helpers behind the ``file`` execution module (runs on the managed host).

The execution module ``briny/minion/host/modules/file.py`` is what states reach
through ``__salt__``; the work that needs no loader dunders lives here, one
module per concept:

- :mod:`.perms` — owner and group names, modes, what ``user``/``group``/``mode`` would change;
- :mod:`.diff` — Salt's unified diffs, binary detection, hashes and ``source_hash`` parsing;
- :mod:`.lines` — text editing: ``line``, ``replace``, ``blockreplace``, comments, key/value;
- :mod:`.tree` — directory walks, ``clean``, backups, copies.

Nothing here imports the loader or reads ``__opts__``: callers pass what is needed.
"""
