"""The apt ``pkg`` execution module over a fake ``cmd.run_all``: the commands
it runs (non-interactive, Salt's dpkg options, timeouts), how it reads
dpkg-query / apt-cache / apt-get output, and the shapes it returns."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

from briny.common import loader
from briny.common.exceptions import CommandExecutionError

pytestmark = pytest.mark.skipif(
    not (shutil.which("dpkg-query") and shutil.which("apt-get")), reason="the apt pkg module needs dpkg and apt"
)

_FAKE_CMD = textwrap.dedent("""
    def run_all(cmd, **kwargs):
        db = __opts__["_fakecmd"]
        db["calls"].append((list(cmd), kwargs))
        for prefix, handler in db["answers"]:
            if list(cmd[:len(prefix)]) == prefix:
                out = handler(list(cmd)) if callable(handler) else handler
                return {"pid": 1, "retcode": 0, "stdout": "", "stderr": "", **out}
        return {"pid": 1, "retcode": 0, "stdout": "", "stderr": ""}
""")

STATUS = (
    "install ok installed\tdpkg\t1.21.22\tamd64\n"
    "hold ok installed\thello\t2.10-3\tamd64\n"
    "deinstall ok config-files\toldpkg\t0.9\tall\n"
    "install ok installed\tlibfoo\t1.0\ti386\n"
    "unknown ok not-installed\tgone\t\tamd64\n"
)
POLICY = textwrap.dedent("""\
    dpkg:
      Installed: 1.21.22
      Candidate: 1.21.23
      Version table:
         1.21.23 500
            500 http://deb.debian.org/debian bookworm/main amd64 Packages
     *** 1.21.22 100
            100 /var/lib/dpkg/status
    hello:
      Installed: 2.10-3
      Candidate: 2.10-3
    sl:
      Installed: (none)
      Candidate: 5.02-1+b1
    """)


def _compare(cmd: list[str]) -> dict[str, Any]:
    a, op, b = cmd[2], cmd[3], cmd[4]
    key = lambda v: [int(p) if p.isdigit() else p for p in v.replace("-", ".").split(".")]
    ok = {
        "lt": key(a) < key(b),
        "le": key(a) <= key(b),
        "eq": key(a) == key(b),
        "ge": key(a) >= key(b),
        "gt": key(a) > key(b),
        "ne": key(a) != key(b),
    }[op]
    return {"retcode": 0 if ok else 1}


@pytest.fixture
def fake(tmp_path: Path) -> dict[str, Any]:
    db: dict[str, Any] = {"calls": [], "status": STATUS}
    db["answers"] = [
        (["dpkg-query"], lambda cmd: {"stdout": db["status"]}),
        (["dpkg", "--print-architecture"], {"stdout": "amd64\n"}),
        (["dpkg", "--compare-versions"], _compare),
        (["apt-cache", "-q", "policy"], {"stdout": POLICY}),
    ]
    return db


@pytest.fixture
def pkg(tmp_path: Path, fake: dict[str, Any]):
    mods = tmp_path / "fake_modules"
    mods.mkdir()
    (mods / "cmd.py").write_text(_FAKE_CMD)
    opts = {"test": False, "id": "t", "_fakecmd": fake, "grains": {"os_family": "Debian"}}
    salt = loader.minion_mods(opts, extra_dirs=[mods])
    return salt


def _apt_calls(fake: dict[str, Any]) -> list[tuple[list[str], dict[str, Any]]]:
    return [(c, k) for c, k in fake["calls"] if c[0] == "apt-get"]


def test_list_pkgs_and_version(pkg) -> None:
    assert pkg["pkg.list_pkgs"]() == {"dpkg": "1.21.22", "hello": "2.10-3", "libfoo:i386": "1.0"}
    assert pkg["pkg.list_pkgs"](versions_as_list=True)["dpkg"] == ["1.21.22"]
    assert pkg["pkg.list_pkgs"](removed=True) == {"oldpkg": "0.9"}
    assert pkg["pkg.version"]("dpkg") == "1.21.22"
    assert pkg["pkg.version"]("dpkg", "nope") == {"dpkg": "1.21.22", "nope": ""}
    assert pkg["pkg.list_holds"]() == ["hello"]


def test_latest_version_reads_apt_cache_policy(pkg, fake) -> None:
    assert pkg["pkg.latest_version"]("dpkg", refresh=False) == "1.21.23"
    assert pkg["pkg.latest_version"]("dpkg", "hello", "sl", "nope", refresh=False) == {
        "dpkg": "1.21.23",
        "hello": "",
        "sl": "5.02-1+b1",
        "nope": "",
    }
    assert pkg["pkg.available_version"]("sl", refresh=False) == "5.02-1+b1"
    assert not _apt_calls(fake)
    pkg["pkg.latest_version"]("sl")  # refresh=True by default, as Salt
    assert _apt_calls(fake)[0][0] == ["apt-get", "-q", "update"]


def test_refresh_db_parses_sources(pkg, fake) -> None:
    fake["answers"].insert(
        0,
        (
            ["apt-get", "-q", "update"],
            {
                "stdout": (
                    "Get:1 http://deb.debian.org/debian bookworm InRelease [151 kB]\n"
                    "Hit:2 http://deb.debian.org/debian-security bookworm-security InRelease\n"
                    "Ign:3 http://example.invalid/repo stable InRelease\n"
                    "Reading package lists...\n"
                )
            },
        ),
    )
    assert pkg["pkg.refresh_db"]() == {
        "http://deb.debian.org/debian bookworm InRelease": True,
        "http://deb.debian.org/debian-security bookworm-security InRelease": False,
        "http://example.invalid/repo stable InRelease": None,
    }
    cmd, kwargs = _apt_calls(fake)[0]
    assert kwargs["env"]["DEBIAN_FRONTEND"] == "noninteractive" and kwargs["timeout"]


def test_install_command_and_changes(pkg, fake, tmp_path: Path) -> None:
    def after_install(cmd: list[str]) -> dict[str, Any]:
        fake["status"] = STATUS + "install ok installed\tsl\t5.02-1+b1\tamd64\n"
        return {"stdout": "Setting up sl ...\n"}

    fake["answers"].insert(0, (["apt-get"], after_install))
    changes = pkg["pkg.install"](pkgs=["sl", {"hello": "2.10-3"}])
    assert changes == {"sl": {"old": "", "new": "5.02-1+b1"}}
    cmd, kwargs = _apt_calls(fake)[0]
    assert cmd == [
        "apt-get",
        "-q",
        "-y",
        "-o",
        "DPkg::Options::=--force-confold",
        "-o",
        "DPkg::Options::=--force-confdef",
        "install",
        "sl",
        "hello=2.10-3",
    ]
    assert kwargs["env"] == {
        "DEBIAN_FRONTEND": "noninteractive",
        "APT_LISTBUGS_FRONTEND": "none",
        "APT_LISTCHANGES_FRONTEND": "none",
    }
    assert kwargs["python_shell"] is False and kwargs["timeout"] > 0
    deb = tmp_path / "x.deb"
    deb.write_bytes(b"!<arch>\n")
    pkg["pkg.install"](sources=[{"x": str(deb)}])
    assert _apt_calls(fake)[-1][0][-2:] == ["install", str(deb)]


def test_install_failure_carries_apt_error(pkg, fake) -> None:
    fake["answers"].insert(
        0,
        (
            ["apt-get"],
            {"retcode": 100, "stdout": "Reading package lists...", "stderr": "E: Unable to locate package nope"},
        ),
    )
    with pytest.raises(CommandExecutionError) as err:
        pkg["pkg.install"](name="nope")
    assert str(err.value) == "Problem encountered installing package(s)"
    assert err.value.info == {"changes": {}, "errors": ["E: Unable to locate package nope"]}
    with pytest.raises(CommandExecutionError, match="does not exist on minion"):
        pkg["pkg.install"](sources=[{"x": "/nonexistent/x.deb"}])


def test_remove_and_purge(pkg, fake) -> None:
    def after(cmd: list[str]) -> dict[str, Any]:
        fake["status"] = "install ok installed\tdpkg\t1.21.22\tamd64\nhold ok installed\thello\t2.10-3\tamd64\n"
        return {}

    fake["answers"].insert(0, (["apt-get"], after))
    assert pkg["pkg.remove"](name="notinstalled") == {}
    assert not _apt_calls(fake)
    ret = pkg["pkg.purge"](pkgs=["libfoo:i386", "oldpkg"])
    assert _apt_calls(fake)[0][0] == ["apt-get", "-q", "-y", "purge", "libfoo:i386", "oldpkg"]
    assert ret == {
        "removed": {"oldpkg": {"new": "", "old": ""}},
        "installed": {"libfoo:i386": {"old": "1.0", "new": ""}},
    }


def test_hold_unhold(pkg, fake) -> None:
    ret = pkg["pkg.hold"](pkgs=["dpkg", "hello"])
    assert ret["dpkg"] == {
        "name": "dpkg",
        "result": True,
        "changes": {"old": "install", "new": "hold"},
        "comment": "Package dpkg is now being held.",
    }
    assert ret["hello"]["comment"] == "Package hello is already set to be held."
    assert any(c[0] == ["apt-mark", "hold", "dpkg"] for c in fake["calls"])
    fake["status"] = STATUS
    ret = pkg["pkg.unhold"](name="hello")
    assert ret["hello"]["changes"] == {"old": "hold", "new": "install"}


def test_version_matches(pkg) -> None:
    assert pkg["pkg.version_matches"]("2.10-3", "2.10-3")
    assert pkg["pkg.version_matches"]("2.10-3", "=2.10-3")
    assert pkg["pkg.version_matches"]("2.10-3", ">=2.9")
    assert not pkg["pkg.version_matches"]("2.10-3", "<2.9")
    assert pkg["pkg.version_matches"]("2.10-3", "2.10*")
    assert not pkg["pkg.version_matches"]("", "1.0")
