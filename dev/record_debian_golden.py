#!/usr/bin/env python3
"""Record Salt's answers for the Debian golden cases (tests/golden/debian/cases).

usage: python3 dev/record_debian_golden.py [--salt-call PATH]

Runs ../shared/tools/salt-golden.py on the cases with APT_CONFIG pointing at
a throwaway APT sandbox (tests/golden/debian/sandbox.py), as root on a Debian
host: the cases change the host (alternatives, debconf, locales, APT sources)
and put it back as they end. Look at the diff before committing.
"""

import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "tests" / "golden" / "debian"))
from sandbox import apt_sandbox

TOOL = HERE.parent.parent / "shared" / "tools" / "salt-golden.py"
if not TOOL.exists():
    TOOL = pathlib.Path("/work/shared/tools/salt-golden.py")

with tempfile.TemporaryDirectory(prefix="golden-apt-") as root:
    env = dict(os.environ, **apt_sandbox(root))
    golden = HERE / "tests" / "golden" / "debian"
    sys.exit(
        subprocess.call(
            [sys.executable, str(TOOL), str(golden / "cases"), str(golden / "expected"), *sys.argv[1:]], env=env
        )
    )
