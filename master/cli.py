"""Operator and master entry points: ``briny``, ``briny-master``, ``briny-key``, ``briny-run``.

Runs on the master host. The daemon and the operator commands arrive with
the issue "Master and minion over ZeroMQ"; until then each says so on
stderr and exits 2, so scripts can tell "not there yet" from a failure.
"""

from __future__ import annotations

import sys


def _not_yet(name: str) -> None:
    print(f"{name}: not implemented yet (see the issue \"Master and minion over ZeroMQ\"); "
          "use briny-call --local to apply states without a master", file=sys.stderr)
    sys.exit(2)


def main_briny() -> None:
    _not_yet("briny")


def main_master() -> None:
    _not_yet("briny-master")


def main_key() -> None:
    from briny.master.keycli import main

    sys.exit(main())


def main_run() -> None:
    from briny.master.runcli import main

    sys.exit(main())
