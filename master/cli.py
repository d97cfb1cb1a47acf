"""Entry points ``briny-key``, ``briny-run`` and ``briny-cp`` (``briny`` is :mod:`opcli`,
``briny-master`` is :mod:`daemon`).

Runs on the master host.
"""

from __future__ import annotations

import sys


def main_key() -> None:
    from briny.master.keycli import main

    sys.exit(main())


def main_run() -> None:
    from briny.master.runcli import main

    sys.exit(main())


def main_cp() -> None:
    from briny.master.cpcli import run

    sys.exit(run())
