"""``briny-minion``: the minion daemon's entry point.

Runs on each managed host. The daemon arrives with the issue "Master and
minion over ZeroMQ"; until then it says so on stderr and exits 2.
"""

from __future__ import annotations

import sys


def main_minion() -> None:
    print("briny-minion: not implemented yet (see the issue \"Master and minion over ZeroMQ\"); "
          "use briny-call --local to apply states without a master", file=sys.stderr)
    sys.exit(2)
