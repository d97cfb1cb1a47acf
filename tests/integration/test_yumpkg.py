"""briny's ``pkg`` (yumpkg) and ``lowpkg`` (rpm) on a minion with Rocky 9 grains, against the
real dnf and rpm in a throwaway installroot (tests/rpmrepo.py: the wrappers first on PATH)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from briny.common import loader
from briny.common.exceptions import CommandExecutionError, SaltInvocationError
from tests import rpmrepo

pytestmark = [pytest.mark.host]

ROCKY = {"os": "Rocky", "os_family": "RedHat", "osmajorrelease": 9, "osarch": "x86_64"}


@pytest.fixture
def salt(rpm_world: rpmrepo.RpmWorld, monkeypatch: pytest.MonkeyPatch) -> Any:
    rpm_world.reset()
    monkeypatch.setenv("PATH", rpm_world.env()["PATH"])
    yield loader.minion_mods({"id": "t", "test": False, "grains": ROCKY})
    rpm_world.reset()


def test_provider_is_dnf_from_the_grains(salt: Any) -> None:
    assert salt["pkg.list_pkgs"].__module__.endswith("yumpkg")
    assert salt["lowpkg.list_pkgs"].__module__.endswith("rpm_lowpkg")
    assert salt["pkg.list_pkgs"]() == {"brinytest-base": "1.0-1"}


def test_install_versions_list_upgrade_remove(salt: Any, rpm_world: rpmrepo.RpmWorld) -> None:
    changes = salt["pkg.install"](pkgs=[{"brinytest-app": "1.0"}, {"brinytest-lib": "1.0-1"}])
    assert changes == {
        "brinytest-app": {"old": "", "new": "1.0-1"},
        "brinytest-lib": {"old": "", "new": "1.0-1"},
    }
    assert rpm_world.rpm_qa()["brinytest-app"] == "1.0-1"
    assert salt["pkg.version"]("brinytest-app") == "1.0-1"
    assert salt["pkg.list_pkgs"](versions_as_list=True)["brinytest-lib"] == ["1.0-1"]
    attrs = salt["pkg.list_pkgs"](attr=["version", "release", "arch"])
    assert attrs["brinytest-app"] == [{"version": "1.0", "release": "1", "arch": "noarch"}]
    assert salt["pkg.latest_version"]("brinytest-app", refresh=False) == "2.0-1"
    assert salt["pkg.list_upgrades"](refresh=False) == {"brinytest-app": "2.0-1", "brinytest-lib": "2.0-1"}
    assert salt["pkg.upgrade"](pkgs=["brinytest-lib"], refresh=False) == {
        "brinytest-lib": {"old": "1.0-1", "new": "2.0-1"}
    }
    # a lower version is a downgrade
    assert salt["pkg.install"]("brinytest-lib", version="1.0-1") == {"brinytest-lib": {"old": "2.0-1", "new": "1.0-1"}}
    removed = salt["pkg.remove"]("brinytest-app")
    assert removed["brinytest-app"] == {"old": "1.0-1", "new": ""}
    assert "brinytest-app" not in rpm_world.rpm_qa()
    assert salt["pkg.remove"]("brinytest-app") == {}


def test_scriptlet_runs_and_purge_removes(salt: Any, rpm_world: rpmrepo.RpmWorld) -> None:
    salt["pkg.install"]("brinytest-hook")
    assert (rpm_world.root / "var/brinytest-hook.log").read_text() == "post 2.0\n"
    assert salt["pkg.purge"]("brinytest-hook") == {"brinytest-hook": {"old": "2.0-1", "new": ""}}
    assert not (rpm_world.root / "etc/brinytest-hook.conf").exists()


def test_install_from_a_local_rpm(salt: Any, rpm_world: rpmrepo.RpmWorld) -> None:
    path = rpm_world.repos["brinytest"] / "noarch" / "brinytest-lib-1.0-1.noarch.rpm"
    assert salt["pkg.bin_pkg_info"](str(path)) == {"name": "brinytest-lib", "version": "1.0-1", "arch": "noarch"}
    assert salt["pkg.install"](sources=[{"brinytest-lib": str(path)}]) == {"brinytest-lib": {"old": "", "new": "1.0-1"}}


def test_refresh_skip_verify_and_disablerepo(salt: Any, rpm_world: rpmrepo.RpmWorld) -> None:
    assert salt["pkg.refresh_db"]() is None  # nothing to upgrade: None, as Salt
    with pytest.raises(CommandExecutionError):
        salt["pkg.install"]("brinytest-lib", disablerepo="brinytest")
    assert "brinytest-lib" not in rpm_world.rpm_qa()
    assert salt["pkg.install"]("brinytest-lib", refresh=True, skip_verify=True) == {
        "brinytest-lib": {"old": "", "new": "2.0-1"}
    }
    salt["pkg.install"]("brinytest-lib", version="1.0-1")
    assert salt["pkg.refresh_db"]() is True  # an upgrade is offered


def test_bad_names_and_versions_fail_clearly_and_change_nothing(salt: Any, rpm_world: rpmrepo.RpmWorld) -> None:
    before = rpm_world.rpm_qa()
    with pytest.raises(CommandExecutionError) as exc:
        salt["pkg.install"]("brinytest-nope")
    assert "Unable to find a match: brinytest-nope" in exc.value.info["errors"][0]
    with pytest.raises(CommandExecutionError) as exc:
        salt["pkg.install"](pkgs=[{"brinytest-lib": ">=9"}])
    assert "No version matching 'brinytest-lib>=9' could be found (available: 2.0-1, 1.0-1)" in exc.value.info["errors"]
    assert rpm_world.rpm_qa() == before


def test_a_silent_dnf_failure_is_an_error(
    salt: Any, rpm_world: rpmrepo.RpmWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """dnf exiting non-zero without a word: remove, install and upgrade raise, never answer
    success for work not done."""
    salt["pkg.install"]("brinytest-app", version="1.0")
    failing = tmp_path / "bin"
    failing.mkdir()
    (failing / "dnf").write_text("#!/bin/sh\nexit 1\n")
    (failing / "dnf").chmod(0o755)
    monkeypatch.setenv("PATH", f"{failing}:{rpm_world.env()['PATH']}")
    before = rpm_world.rpm_qa()
    with pytest.raises(CommandExecutionError, match="Error occurred removing package") as exc:
        salt["pkg.remove"]("brinytest-app")
    assert exc.value.info["errors"] == ["dnf exited 1 without output"]
    with pytest.raises(CommandExecutionError, match="Error occurred installing") as exc:
        salt["pkg.install"]("brinytest-lib")
    assert exc.value.info["errors"] == ["dnf exited 1 without output"]
    with pytest.raises(CommandExecutionError, match="Problem encountered upgrading"):
        salt["pkg.upgrade"](refresh=False)
    assert rpm_world.rpm_qa() == before


def test_repos_fromrepo_enablerepo(salt: Any, rpm_world: rpmrepo.RpmWorld) -> None:
    d = str(rpm_world.reposdir)
    extra = f"file://{rpm_world.repos['brinytest-extra']}"
    out = salt["pkg.mod_repo"]("brinytest-extra", basedir=d, name="extra", baseurl=extra, gpgcheck=0, enabled=False)
    path = f"{d}/brinytest-extra.repo"
    assert out == {path: {"brinytest-extra": {"name": "extra", "baseurl": extra, "gpgcheck": 0, "enabled": False}}}
    assert Path(path).read_text() == f"[brinytest-extra]\nname=extra\nbaseurl={extra}\ngpgcheck=0\nenabled=0\n\n"
    assert salt["pkg.get_repo"]("brinytest-extra", basedir=d)["enabled"] == "0"
    assert set(salt["pkg.list_repos"](basedir=d)) == {"brinytest", "brinytest-extra"}
    assert salt["pkg.latest_version"]("brinytest-other", refresh=False) == ""
    assert salt["pkg.latest_version"]("brinytest-other", refresh=False, enablerepo="brinytest-extra") == "1.0-1"
    assert salt["pkg.install"]("brinytest-other", fromrepo="brinytest-extra") == {
        "brinytest-other": {"old": "", "new": "1.0-1"}
    }
    assert salt["pkg.del_repo"]("brinytest-extra", basedir=d) == (
        f"File {path} containing repo brinytest-extra has been removed"
    )
    assert salt["pkg.get_repo"]("brinytest-extra", basedir=d) == {}


def test_a_broken_repo_file_is_never_rewritten(salt: Any, rpm_world: rpmrepo.RpmWorld) -> None:
    broken = rpm_world.reposdir / "broken.repo"
    text = "[dup]\nname=a\n[dup]\nname=b\n"
    broken.write_text(text)
    with pytest.raises(CommandExecutionError, match="broken.repo cannot be parsed"):
        salt["pkg.mod_repo"]("dup", basedir=str(rpm_world.reposdir), enabled=0)
    assert broken.read_text() == text
    with pytest.raises(SaltInvocationError, match="Only one of 'mirrorlist' and 'baseurl'"):
        salt["pkg.mod_repo"]("x", basedir=str(rpm_world.reposdir), baseurl="file:///a", mirrorlist="file:///b")


def test_version_cmp_in_rpm_order(salt: Any) -> None:
    cmp = salt["pkg.version_cmp"]
    assert cmp("1.0-1", "1.0-2") == -1
    assert cmp("1.10", "1.9") == 1
    assert cmp("1.0~rc1", "1.0") == -1
    assert cmp("1.0^git1", "1.0") == 1
    assert cmp("1:1.0", "2.0") == 1
    assert cmp("1:1.0", "2.0", ignore_epoch=True) == -1
    assert cmp("1.0a", "1.0") == 1
    assert cmp("2.0-1", "2.0-1") == 0


def test_hold_needs_the_versionlock_plugin(salt: Any) -> None:
    # Salt's words: the plugin's package must be installed (rpm's database), whatever dnf has
    with pytest.raises(SaltInvocationError, match="Cannot proceed, python3-dnf-plugin-versionlock is not installed."):
        salt["pkg.hold"]("brinytest-base")


def test_hold_unhold_with_versionlock(salt: Any, rpm_world: rpmrepo.RpmWorld) -> None:
    """What Salt 3007 answered for the same calls in the same world (recorded with salt-call)."""
    assert rpm_world.dnf("install", "python3-dnf-plugin-versionlock").returncode == 0
    held = {"name": "brinytest-base", "changes": {"new": "hold", "old": ""}, "result": True}
    assert salt["pkg.hold"]("brinytest-base") == {
        "brinytest-base": {**held, "comment": "Package brinytest-base is now being held."}
    }
    assert salt["pkg.hold"]("brinytest-base")["brinytest-base"] == {
        "name": "brinytest-base",
        "changes": {},
        "result": True,
        "comment": "Package brinytest-base is already set to be held.",
    }
    assert salt["pkg.list_holds"]() == ["brinytest-base-0:1.0-1.*"]
    assert salt["pkg.list_holds"](full=False) == ["brinytest-base"]
    lock_list = rpm_world.root / "etc/dnf/plugins/versionlock.list"
    assert "brinytest-base-0:1.0-1.*" in lock_list.read_text()
    assert salt["pkg.unhold"]("brinytest-base")["brinytest-base"] == {
        "name": "brinytest-base",
        "changes": {"new": "", "old": "hold"},
        "result": True,
        "comment": "Package brinytest-base is no longer held.",
    }
    assert (
        salt["pkg.unhold"]("brinytest-base")["brinytest-base"]["comment"] == "Package brinytest-base is not being held."
    )
    assert salt["pkg.list_holds"]() == []


def test_lowpkg_on_rpm(salt: Any, rpm_world: rpmrepo.RpmWorld) -> None:
    salt["pkg.install"]("brinytest-hook")
    assert salt["lowpkg.list_pkgs"]("brinytest-hook") == {"brinytest-hook": "2.0"}
    assert salt["lowpkg.file_list"]("brinytest-hook") == {"errors": [], "files": ["/etc/brinytest-hook.conf"]}
    assert salt["lowpkg.owner"]("/etc/brinytest-hook.conf") == "brinytest-hook"
    assert salt["lowpkg.owner"]("/etc/nothing") == ""
    assert salt["lowpkg.verify"]("brinytest-hook") == {}
    (rpm_world.root / "etc/brinytest-hook.conf").write_text("changed, and longer than before\n")
    found = salt["lowpkg.verify"]("brinytest-hook")
    assert found["/etc/brinytest-hook.conf"]["type"] == "config"
    assert {"size", "md5sum"} <= set(found["/etc/brinytest-hook.conf"]["mismatch"])
    assert salt["lowpkg.verify"]("brinytest-hook", ignore_types="config") == {}
    info = salt["pkg.info_installed"]("brinytest-hook")["brinytest-hook"]
    assert (info["version"], info["release"], info["arch"], info["license"]) == ("2.0", "1", "noarch", "MIT")
    assert salt["lowpkg.info"]("brinytest-hook", attr="version")["brinytest-hook"] == {
        "name": "brinytest-hook",
        "version": "2.0",
    }
