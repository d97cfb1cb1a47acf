"""``briny``'s entry point: ``briny --version`` answers before anything heavy is imported.

Every other command line goes to :func:`briny.master.opcli.main` (which imports the
client, the outputters and the config loader). ``--version`` alone needs only the
package's constants, so it prints what :func:`briny.common.versions.version_string`
would and exits 0 in the time the interpreter takes to start (issue 25).
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from briny import SALT_COMPAT_VERSION, __version__

        prog = os.path.basename(sys.argv[0]) or "briny"
        sys.stdout.write(f"{prog} {__version__} (Salt {SALT_COMPAT_VERSION})\n")
        sys.exit(0)
    from briny.master.opcli import main as run

    run()
