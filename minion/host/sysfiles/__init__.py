"""Parsers and writers for the host's own configuration files (runs on the managed host).

Pure text in, data out (and back), one module per file format, behind the
execution modules that manage them:

- :mod:`.ini` — ini files (``ini`` module): sections, options, comments;
- :mod:`.hosts` — ``/etc/hosts`` (``hosts`` module);
- :mod:`.fstab` — ``/etc/fstab``, ``/proc/self/mountinfo``, ``/proc/swaps``, ``blkid`` (``mount``, ``disk``);
- :mod:`.sshkeys` — OpenSSH keys: fingerprints, ``known_hosts`` and ``authorized_keys`` lines (``ssh``);
- :mod:`.replace` — writing one of them back: atomically, owner and mode kept.

Nothing here imports the loader or reads ``__opts__``: callers pass what is needed.
"""
