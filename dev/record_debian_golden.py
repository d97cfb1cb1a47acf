#!/usr/bin/env python3
"""Record Salt's answers for the Debian golden cases (tests/golden/debian/cases).

usage: python3 dev/record_debian_golden.py [--salt-call PATH]

Runs ../shared/tools/salt-golden.py on the cases with APT_CONFIG pointing at
a throwaway APT sandbox (tests/golden/debian/sandbox.py), as root on a Debian
host: the cases change the host (alternatives, debconf, locales, APT sources)
and put it back as they end. Salt's keyserver case starts a dirmngr in
root's ~/.gnupg; one that was not running before is stopped afterwards (by
pid). Look at the diff before committing.
"""

import os
import pathlib
import signal
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "tests" / "golden" / "debian"))
from sandbox import apt_sandbox

TOOL = HERE.parent.parent / "shared" / "tools" / "salt-golden.py"
if not TOOL.exists():
    TOOL = pathlib.Path("/work/shared/tools/salt-golden.py")


def dirmngrs() -> set[int]:
    found = set()
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if fh.read().split(b"\0")[0].endswith(b"dirmngr"):
                    found.add(int(pid))
        except (OSError, ValueError):
            continue
    return found


before = dirmngrs()
with tempfile.TemporaryDirectory(prefix="golden-apt-") as root:
    env = dict(os.environ, **apt_sandbox(root))
    golden = HERE / "tests" / "golden" / "debian"
    rc = subprocess.call(
        [sys.executable, str(TOOL), str(golden / "cases"), str(golden / "expected"), *sys.argv[1:]], env=env
    )
for pid in dirmngrs() - before:
    os.kill(pid, signal.SIGTERM)
sys.exit(rc)
