"""Parsers and writers for the host's own configuration files (runs on the managed host).

Pure text in, data out (and back), one module per file format, behind the
execution modules that manage them:

- :mod:`.ini` — ini files (``ini`` module): sections, options, comments;
- :mod:`.hosts` — ``/etc/hosts`` (``hosts`` module);
- :mod:`.fstab` — ``/etc/fstab`` and ``/proc/self/mountinfo`` (``mount`` module);
- :mod:`.knownhosts` — OpenSSH ``known_hosts`` (``ssh`` module);
- :mod:`.replace` — writing one of them back: atomically, owner and mode kept.

Nothing here imports the loader or reads ``__opts__``: callers pass what is needed.
"""
