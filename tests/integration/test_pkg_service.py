"""pkg and service states doing real work as root on a Debian host, through
``briny-call --local``: a tiny .deb built here with dpkg-deb, and a tiny
/etc/init.d service provided by the test (a background sleep loop with a
pidfile under a temporary directory).

Everything the tests create is removed afterwards by its exact name and path
(the package is purged, the service's processes are killed by the pids the
test recorded, its rc links and script are removed). Every subprocess has a
timeout. No test refreshes the apt database (``refresh: False``), so no
network is needed. Expected comments and changes are the ones Salt 3007
gave on the same trees (its Debian sysvinit service provider).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import string
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "pkgsvc"
_ROOT_OK = hasattr(os, "geteuid") and os.geteuid() == 0

pytestmark = [
    pytest.mark.host,
    pytest.mark.skipif(
        not (_ROOT_OK and shutil.which("dpkg-deb") and shutil.which("apt-get") and os.path.isdir("/etc/init.d")),
        reason="needs root on a Debian host (dpkg-deb, apt-get, /etc/init.d)",
    ),
]


def _suffix() -> str:
    return "".join(random.choice(string.ascii_lowercase) for _ in range(8))


def _run(cmd: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


@pytest.fixture
def minion(tmp_path: Path):
    """apply(sls, test=False) -> {state id: result} from briny-call on tmp_path/srv."""
    tree, conf, root = tmp_path / "srv", tmp_path / "etc", tmp_path / "root"
    for d in (tree, conf, root):
        d.mkdir()
    (conf / "minion").write_text(
        f"id: pkgsvc\nfile_client: local\nroot_dir: {root}\nfile_roots:\n  base: [{tree}]\nsock_dir: sock\n"
        # the init-script provider by name: with systemctl installed but systemd not PID 1,
        # the provider chosen by itself is in Salt's offline mode (service.running does nothing)
        "providers: {service: debian}\n"
    )

    def apply(sls: str, test: bool = False) -> dict[str, dict[str, Any]]:
        cmd = [sys.executable, "-m", "briny.minion.call", "--local", "-c", str(conf), "state.sls", sls, "--out=json"]
        if test:
            cmd.append("test=True")
        proc = _run(cmd, timeout=600)
        try:
            data = json.loads(proc.stdout)["local"]
        except (ValueError, KeyError):
            pytest.fail(f"briny-call did not return results: {proc.stdout}\n{proc.stderr}")
        assert isinstance(data, dict), data
        return {v["__id__"]: v for v in data.values()}

    return tree, apply


def _no_changes(results: dict[str, dict[str, Any]]) -> None:
    assert {k: v["changes"] for k, v in results.items() if v["changes"]} == {}


# ---------------------------------------------------------------------------
# pkg
# ---------------------------------------------------------------------------


def _build_deb(work: Path, name: str, version: str) -> Path:
    root = work / f"{name}-{version}"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        f"Package: {name}\nVersion: {version}\nArchitecture: all\n"
        "Maintainer: briny tests <tests@example.invalid>\n"
        "Description: briny test package\n built by tests/integration/test_pkg_service.py\n"
    )
    doc = root / "usr" / "share" / "doc" / name
    doc.mkdir(parents=True)
    (doc / "README").write_text(f"{name} {version}\n")
    out = work / f"{name}_{version}_all.deb"
    proc = _run(["dpkg-deb", "--root-owner-group", "--build", str(root), str(out)], timeout=60)
    assert proc.returncode == 0, proc.stderr
    return out


def _installed(name: str) -> str:
    proc = _run(["dpkg-query", "-W", "-f=${Status} ${Version}", name], timeout=60)
    if proc.returncode != 0 or not proc.stdout.startswith(("install ok installed", "hold ok installed")):
        return ""
    return proc.stdout.split()[-1]


@pytest.fixture
def debpkg(tmp_path: Path):
    """(name, deb 1.0, deb 2.0): a package only this test knows, purged afterwards."""
    name = f"briny-test-pkg-{_suffix()}"
    work = tmp_path / "debs"
    work.mkdir()
    debs = (_build_deb(work, name, "1.0"), _build_deb(work, name, "2.0"))
    yield name, *debs
    _run(["apt-mark", "unhold", name], timeout=60)
    if _run(["dpkg-query", "-W", name], timeout=60).returncode == 0:
        _run(["dpkg", "--purge", name], timeout=300)
    assert _installed(name) == ""


def test_pkg_sources_install_upgrade_remove_purge(minion, debpkg) -> None:
    tree, apply = minion
    name, deb1, deb2 = debpkg
    missing = f"briny-no-such-pkg-{_suffix()}"
    _write(
        tree,
        {
            "install.sls": f"""
            pkg1:
              pkg.installed:
                - refresh: False
                - sources:
                  - {name}: {deb1}
            bad:
              pkg.installed:
                - name: {missing}
                - refresh: False
            after:
              test.succeed_without_changes
            """,
            "upgrade.sls": f"""
            pkg1:
              pkg.installed:
                - refresh: False
                - sources:
                  - {name}: {deb2}
            """,
            "removed.sls": f"{name}:\n  pkg.removed\n",
            "purged.sls": f"{name}:\n  pkg.purged\n",
        },
    )
    started = time.monotonic()
    res = apply("install", test=True)
    assert res["pkg1"]["result"] is None
    assert res["pkg1"]["comment"] == f"The following packages would be installed/updated: {name}"
    assert res["pkg1"]["changes"] == {name: {"new": "installed", "old": ""}}
    assert _installed(name) == ""

    res = apply("install")
    assert res["pkg1"]["result"] is True
    # Salt's words: a list of 20 characters or more (this name has 23) is told as a count
    assert res["pkg1"]["comment"] == "1 targeted package was installed/updated."
    assert res["pkg1"]["changes"] == {name: {"old": "", "new": "1.0"}}
    assert Path(f"/usr/share/doc/{name}/README").read_text() == f"{name} 1.0\n"
    assert res["bad"]["result"] is False
    assert res["bad"]["comment"] == (
        "Problem encountered installing package(s). Additional info follows:\n\n"
        f"errors:\n    - E: Unable to locate package {missing}"
    )
    assert res["after"]["result"] is True

    res = apply("install")
    assert res["pkg1"]["comment"] == "All specified packages are already installed"
    _no_changes(res)

    res = apply("upgrade")
    assert res["pkg1"]["changes"] == {name: {"old": "1.0", "new": "2.0"}}
    _no_changes(apply("upgrade"))

    res = apply("removed", test=True)
    assert res[name]["result"] is None and res[name]["changes"] == {name: {"new": "removed", "old": ""}}
    assert res[name]["comment"] == f"The following packages will be removed: {name}."
    assert _installed(name) == "2.0"
    res = apply("removed")
    assert res[name]["result"] is True and res[name]["comment"] == "All targeted packages were removed."
    assert res[name]["changes"] == {name: {"old": "2.0", "new": ""}}
    assert _installed(name) == "" and not Path(f"/usr/share/doc/{name}/README").exists()
    res = apply("removed")
    assert res[name]["comment"] == "All specified packages are already absent"
    _no_changes(res)

    apply("upgrade")
    res = apply("purged", test=True)
    assert res[name]["result"] is None and res[name]["changes"] == {name: {"new": "purged", "old": ""}}
    res = apply("purged")
    assert res[name]["result"] is True and res[name]["comment"] == "All targeted packages were purged."
    assert res[name]["changes"] == {"removed": {}, "installed": {name: {"old": "2.0", "new": ""}}}
    res = apply("purged")
    assert res[name]["comment"] == "None of the targeted packages are installed or partially installed"
    _no_changes(res)
    assert time.monotonic() - started < 300


def test_pkg_salt_source_and_hold(minion, debpkg) -> None:
    tree, apply = minion
    name, deb1, _ = debpkg
    shutil.copy(deb1, tree / deb1.name)
    _write(
        tree,
        {
            "held.sls": f"""
            {name}:
              pkg.installed:
                - refresh: False
                - hold: True
                - sources:
                  - {name}: salt://{deb1.name}
            """,
            "unheld.sls": f"""
            {name}:
              pkg.installed:
                - refresh: False
                - hold: False
                - sources:
                  - {name}: salt://{deb1.name}
            """,
            "missing.sls": f"""
            nosrc:
              pkg.installed:
                - refresh: False
                - sources:
                  - {name}: salt://nope.deb
            """,
        },
    )
    res = apply("held")[name]
    assert res["result"] is True and res["changes"] == {name: {"old": "", "new": "1.0"}}
    assert res["comment"] == (f"1 targeted package was installed/updated.\nPackage {name} is now being held.")
    assert name in _run(["apt-mark", "showhold"]).stdout.split()
    res = apply("held")[name]
    assert res["changes"] == {}
    assert res["comment"] == f"All specified packages are already installed.\nPackage {name} is already set to be held."
    res = apply("unheld", test=True)[name]
    assert res["result"] is None and res["comment"].endswith(f"Package {name} is set not to be held.")
    res = apply("unheld")[name]
    assert res["changes"] == {name: {"old": "hold", "new": "install"}}
    assert name not in _run(["apt-mark", "showhold"]).stdout.split()
    _no_changes(apply("unheld"))
    res = apply("missing")["nosrc"]
    assert res["result"] is False and "salt://nope.deb" in res["comment"]


# ---------------------------------------------------------------------------
# service
# ---------------------------------------------------------------------------


def _pid(statedir: Path) -> int | None:
    try:
        return int((statedir / "pid").read_text().strip())
    except (OSError, ValueError):
        return None


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


@pytest.fixture
def initsvc(tmp_path: Path):
    """(name, state dir, recorded pids): an /etc/init.d service only this test knows."""
    if os.path.isdir("/run/systemd/system"):
        pytest.skip("PID 1 is systemd: the init-script provider is not the one in use")
    name = f"briny-test-svc-{_suffix()}"
    statedir = tmp_path / "svc"
    statedir.mkdir()
    script = Path("/etc/init.d") / name
    text = (FIXTURES / "initscript.sh").read_text().replace("@NAME@", name).replace("@STATEDIR@", str(statedir))
    script.write_text(text)
    script.chmod(0o755)
    pids: list[int] = []
    yield name, statedir, pids
    for pid in [*pids, _pid(statedir)]:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)  # type: ignore[arg-type]
    if shutil.which("update-rc.d"):
        _run(["update-rc.d", "-f", name, "remove"], timeout=60)
    for level in "0123456S":
        for prefix in ("S01", "K01"):
            link = Path(f"/etc/rc{level}.d/{prefix}{name}")
            if link.is_symlink():
                link.unlink()
    script.unlink()


def _links(name: str) -> set[str]:
    found = set()
    for level in "0123456S":
        rcdir = Path(f"/etc/rc{level}.d")
        if rcdir.is_dir():
            found |= {f"rc{level}.d/{e}" for e in os.listdir(rcdir) if e[3:] == name and e[:1] in "SK"}
    return found


def test_service_start_enable_watch_stop(minion, initsvc, tmp_path: Path) -> None:
    tree, apply = minion
    name, statedir, pids = initsvc
    conf = tmp_path / "svc.conf"
    nosvc = f"briny-no-such-svc-{_suffix()}"
    watch = """
        conf:
          file.managed:
            - name: {conf}
            - contents: {contents}
        svc:
          service.running:
            - name: {name}
            {extra}
            - watch:
              - file: conf
        """
    _write(
        tree,
        {
            "running.sls": f"""
            svc:
              service.running:
                - name: {name}
                - enable: True
            missing:
              service.running:
                - name: {nosvc}
            after:
              test.succeed_without_changes
            """,
            "w1.sls": watch.format(conf=conf, contents="v1", name=name, extra=""),
            "w2.sls": watch.format(conf=conf, contents="v2", name=name, extra="- reload: True"),
            "dead.sls": f"""
            svc:
              service.dead:
                - name: {name}
                - enable: False
            """,
            "enabled.sls": f"svc:\n  service.enabled:\n    - name: {name}\n",
        },
    )
    res = apply("running", test=True)
    assert res["svc"]["result"] is None and res["svc"]["comment"] == f"Service {name} is set to start"
    assert res["missing"]["result"] is None
    assert _pid(statedir) is None and _links(name) == set()

    res = apply("running")
    assert res["svc"]["result"] is True
    assert res["svc"]["comment"] == f"Service {name} has been enabled, and is running"
    assert res["svc"]["changes"] == {name: True}
    assert res["missing"]["result"] is False
    assert res["missing"]["comment"] == f"The named service {nosvc} is not available"
    assert res["after"]["result"] is True
    first = _pid(statedir)
    pids.append(first)  # type: ignore[arg-type]
    assert _alive(first)
    assert f"rc2.d/S01{name}" in _links(name)
    res = apply("running")
    assert res["svc"]["comment"] == f"The service {name} is already running"
    _no_changes(res)

    # a changed config restarts the running service: a new process
    res = apply("w1")
    assert res["svc"]["comment"] == "Service restarted" and res["svc"]["changes"] == {name: True}
    second = _pid(statedir)
    pids.append(second)  # type: ignore[arg-type]
    assert second != first and _alive(second) and not _alive(first)
    _no_changes(apply("w1"))
    assert _pid(statedir) == second

    res = apply("w2", test=True)
    assert res["svc"]["result"] is None and res["svc"]["comment"] == "Service is set to be reloaded"
    assert conf.read_text() == "v1\n" or conf.read_text() == "v1"
    res = apply("w2")
    assert res["svc"]["comment"] == "Service reloaded" and res["svc"]["changes"] == {name: True}
    assert _pid(statedir) == second
    assert (statedir / "actions.log").read_text().split()[-1] == "reload"

    res = apply("dead", test=True)
    assert res["svc"]["result"] is None and res["svc"]["comment"] == f"Service {name} is set to be killed"
    assert _alive(second)
    res = apply("dead")
    assert res["svc"]["result"] is True and res["svc"]["changes"] == {name: True}
    assert res["svc"]["comment"] == f"Service {name} has been disabled, and is dead"
    assert not _alive(second) and _pid(statedir) is None
    assert not any("/S" in link for link in _links(name))
    res = apply("dead")
    assert res["svc"]["comment"] == f"The service {name} is already dead"
    _no_changes(res)

    res = apply("enabled")
    assert res["svc"]["comment"] == f"Service {name} has been enabled, and is in the desired state"
    assert f"rc2.d/S01{name}" in _links(name)
    _no_changes(apply("enabled"))
