"""Who may use the daemons' local sockets (issue 11, finding 9): a user who cannot reach the real
master's operator socket or the real minion's local socket is told "permission denied", naming
the socket and the user, with exit status 2 (not "the master is not running"), and the daemons
keep serving their own user.

The commands run in a forked child as ``nobody`` (:mod:`tests.asuser`): the fleet lives in a
folder others may read, so only the sockets' own modes stand in the way. Needs root.
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.asuser import NOBODY, run_as

from .support import Fleet

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a command as another user")


def briny_cli(conf: str, log: str) -> tuple[int, str, str]:
    from briny.master.opcli import run

    out, err = io.StringIO(), io.StringIO()
    code = run(["-c", conf, "--log-file", log, "*", "test.ping"], out, err)
    return code, out.getvalue(), err.getvalue()


def briny_call(conf: str, log: str) -> tuple[int, str]:
    import contextlib

    from briny.minion.call import run

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = run(["-c", conf, "--log-file", log, "test.ping"])
    return code, err.getvalue()


def test_a_user_without_access_is_told_permission_denied():
    root = Path(tempfile.mkdtemp(prefix="bacc", dir="/tmp"))
    os.chmod(root, 0o755)
    fleet = Fleet(root, ["m1"], auto_accept=True)
    try:
        fleet.start()
        master_sock = fleet.master_dir / "s" / "master_client.ipc"
        minion_sock = fleet.minions["m1"].root / "s" / "minion_client.ipc"

        log = root / "nobody.log"  # the daemons' log files are not nobody's to write
        log.touch(mode=0o666)
        os.chmod(log, 0o666)
        code, out, err = eval(run_as(NOBODY, briny_cli, str(fleet.master_conf), str(log)))  # noqa: S307 - our own repr, from the child
        assert code == 2 and out == ""
        assert err.strip() == (
            f"briny: permission denied: user nobody (uid {NOBODY}) may not use the "
            f"master's socket {master_sock}; run this command as root (the user the "
            "master runs as)"
        )
        assert "not running" not in err

        code, err = eval(run_as(NOBODY, briny_call, str(fleet.minions["m1"].conf_dir), str(log)))  # noqa: S307 - our own repr, from the child
        assert code == 2
        assert err.strip() == (
            f"briny-call: permission denied: user nobody (uid {NOBODY}) may not use the "
            f"minion's socket {minion_sock}; run this command as root (the user the "
            "minion runs as), or use --local"
        )

        # the daemons' own user is served as before
        res = fleet.briny("--out", "json", "*", "test.ping")
        assert res.returncode == 0 and res.json() == {"m1": True}, res.stderr
    finally:
        fleet.close()
        shutil.rmtree(root, ignore_errors=True)
