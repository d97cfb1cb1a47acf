"""pkgrepo.managed / absent on a RHEL-family minion, without dnf: the ``pkg`` repo functions
here are briny's own .repo code (minion/host/modules/_yum_repos.py) behind a stand-in module, so
only the state's logic is under test (tests/golden/dnf/ compares it with Salt on real dnf)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from briny.common import loader

_PKG = textwrap.dedent("""
    from briny.minion.host.modules import _yum_repos

    def get_repo(*args, **kwargs):
        return _yum_repos.get_repo(*args, **kwargs)

    def list_repos(*args, **kwargs):
        return _yum_repos.list_repos(*args, **kwargs)

    def mod_repo(*args, **kwargs):
        return _yum_repos.mod_repo(*args, **kwargs)

    def del_repo(*args, **kwargs):
        return _yum_repos.del_repo(*args, **kwargs)
""")
ROCKY = {"os": "Rocky", "os_family": "RedHat", "osmajorrelease": 9}


@pytest.fixture
def run(tmp_path: Path) -> Any:
    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "pkg.py").write_text(_PKG)
    repos = tmp_path / "yum.repos.d"
    repos.mkdir()

    def call(fun: str, name: str, test: bool = False, **kwargs: Any) -> dict[str, Any]:
        opts = {"id": "t", "test": test, "grains": ROCKY, "cachedir": str(tmp_path / "cache")}
        states = loader.states(opts, loader.minion_mods(opts, extra_dirs=[mods]))
        return dict(states[f"pkgrepo.{fun}"](name, basedir=str(repos), **kwargs))

    call.repos = repos  # type: ignore[attr-defined]
    return call


def test_managed_new_then_same_then_changed(run: Any) -> None:
    path = run.repos / "epel.repo"
    ret = run("managed", "epel", test=True, humanname="EPEL", baseurl="https://example.invalid/epel", gpgcheck=1)
    assert (ret["result"], ret["changes"]) == (None, {"repo": "epel"})
    assert not path.exists()
    ret = run("managed", "epel", humanname="EPEL", baseurl="https://example.invalid/epel", gpgcheck=1)
    assert (ret["result"], ret["changes"], ret["comment"]) == (True, {"repo": "epel"}, "Configured package repo 'epel'")
    assert path.read_text() == "[epel]\nbaseurl=https://example.invalid/epel\ngpgcheck=1\nname=EPEL\nenabled=1\n\n"
    # disabled: only enabled= changes
    ret = run("managed", "epel", disabled=True, humanname="EPEL", baseurl="https://example.invalid/epel", gpgcheck=1)
    assert ret["changes"] == {"enabled": {"new": "0", "old": "1"}}
    assert "enabled=0\n" in path.read_text()


def test_managed_copr_is_refused_clearly(run: Any) -> None:
    ret = run("managed", "x", copr="someone/thing")
    assert (ret["result"], ret["comment"]) == (False, "COPR repositories are not supported by briny yet")


def test_managed_bad_input_keeps_the_file(run: Any) -> None:
    ret = run("managed", "nourl", humanname="x")
    assert ret["result"] is False
    assert "either a baseurl or a mirrorlist needs to be given" in ret["comment"]
    broken = run.repos / "broken.repo"
    broken.write_text("[b]\nname=1\n[b]\nname=2\n")
    ret = run("managed", "b", humanname="x", baseurl="file:///x")
    assert ret["result"] is False and "broken.repo cannot be parsed" in ret["comment"]
    assert broken.read_text() == "[b]\nname=1\n[b]\nname=2\n"


def test_absent(run: Any) -> None:
    (run.repos / "one.repo").write_text("[one]\nname=one\nbaseurl=file:///one\n[two]\nname=two\nbaseurl=file:///two\n")
    ret = run("absent", "one", test=True)
    assert ret["result"] is None and ret["comment"].startswith("Package repo 'one' will be removed.")
    ret = run("absent", "one")
    assert (ret["result"], ret["changes"], ret["comment"]) == (True, {"repo": "one"}, "Removed repo one")
    assert (run.repos / "one.repo").read_text() == "[two]\nname=two\nbaseurl=file:///two\n\n"
    assert run("absent", "one")["comment"] == "Package repo one is absent"
