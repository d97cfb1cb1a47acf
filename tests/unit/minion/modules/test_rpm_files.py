"""rpm's version order and the .repo files, without dnf or rpm installed (the host tests in
tests/integration/test_yumpkg.py run them against the real tools)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from briny.common.exceptions import CommandExecutionError, SaltInvocationError
from briny.minion.host.modules import _rpm_db, _yum_repos


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        ("1.0", "1.0", 0),
        ("1.0", "1.1", -1),
        ("1.10", "1.9", 1),
        ("1.0a", "1.0", 1),
        ("1.0~rc1", "1.0", -1),
        ("1.0~rc1", "1.0~rc2", -1),
        ("1.0^git1", "1.0", 1),
        ("1.0^git1", "1.0.1", -1),
        ("2.0", "10", -1),
        ("abc", "abd", -1),
        ("1.0.0", "1.0", 1),
        ("1_0", "1.0", 0),
    ],
)
def test_rpmvercmp(a: str, b: str, want: int) -> None:
    assert _rpm_db.rpmvercmp(a, b) == want
    assert _rpm_db.rpmvercmp(b, a) == -want


def test_epoch_version_release() -> None:
    assert _rpm_db.split_evr("1:2.0-3.el9") == ("1", "2.0", "3.el9")
    assert _rpm_db.split_evr("2.0") == ("0", "2.0", "")
    assert _rpm_db.evr_cmp("1:1.0-1", "2.0-1") == 1
    assert _rpm_db.evr_cmp("1:1.0-1", "2.0-1", ignore_epoch=True) == -1
    assert _rpm_db.evr_cmp("2.0", "2.0-5") == 0  # no release asked: any release matches


def test_repo_file_round_trip(tmp_path: Path) -> None:
    d = str(tmp_path)
    out = _yum_repos.mod_repo("r1", basedir=d, name="One", baseurl="file:///srv/r1", gpgcheck=True, enabled=1)
    path = f"{d}/r1.repo"
    assert out == {path: {"r1": {"name": "One", "baseurl": "file:///srv/r1", "gpgcheck": True, "enabled": 1}}}
    assert Path(path).read_text() == "[r1]\nname=One\nbaseurl=file:///srv/r1\ngpgcheck=1\nenabled=1\n\n"
    # a second stanza in the same file; a key given empty is removed; mirrorlist drops baseurl
    Path(path).write_text("# header\n" + Path(path).read_text() + "[r2]\nname=Two\nbaseurl=file:///srv/r2\n# note\n")
    _yum_repos.mod_repo("r1", basedir=d, gpgcheck="", mirrorlist="http://m/list")
    assert Path(path).read_text() == (
        "# header\n[r1]\nname=One\nenabled=1\nmirrorlist=http://m/list\n\n[r2]\nname=Two\nbaseurl=file:///srv/r2\n# note\n\n"
    )
    assert _yum_repos.get_repo("r2", basedir=d) == {
        "name": "Two",
        "baseurl": "file:///srv/r2",
        "comments": ["note"],
        "file": path,
    }
    assert _yum_repos.del_repo("r1", basedir=d) == f"Repo r1 has been removed from {path}"
    assert list(_yum_repos.list_repos(basedir=d)) == ["r2"]
    assert _yum_repos.del_repo("r2", basedir=d) == f"File {path} containing repo r2 has been removed"
    assert not Path(path).exists()
    assert _yum_repos.del_repo("r2", basedir=d) == f"Error: the r2 repo does not exist in [{d!r}]"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"baseurl": "file:///a"}, "a name was not given"),
        ({"name": "x"}, "either a baseurl or a mirrorlist needs to be given"),
        ({"name": "x", "baseurl": "file:///a", "mirrorlist": "http://m"}, "Only one of 'mirrorlist' and 'baseurl'"),
    ],
)
def test_mod_repo_bad_input(tmp_path: Path, kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(SaltInvocationError, match=message):
        _yum_repos.mod_repo("x", basedir=str(tmp_path), **kwargs)


def test_mod_repo_needs_an_existing_folder(tmp_path: Path) -> None:
    with pytest.raises(SaltInvocationError, match="none of the following basedir directories exist"):
        _yum_repos.mod_repo("x", basedir=str(tmp_path / "nope"), name="x", baseurl="file:///a")


def test_unparsable_file_is_kept_and_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.repo"
    bad.write_text("[a]\nname=1\n[a]\nname=2\n")
    with pytest.raises(CommandExecutionError, match="bad.repo cannot be parsed"):
        _yum_repos.mod_repo("a", basedir=str(tmp_path), enabled=0)
    assert bad.read_text() == "[a]\nname=1\n[a]\nname=2\n"
    # a file without a section header is skipped (logged), as Salt does
    bad.write_text("name=loose\n")
    assert _yum_repos.list_repos(basedir=str(tmp_path)) == {}


def test_repo_file_keeps_its_mode(tmp_path: Path) -> None:
    """A 0600 .repo file (it holds a password) stays 0600 when changed; a new file is 0644."""
    d = str(tmp_path)
    out = _yum_repos.mod_repo("r1", basedir=d, name="One", baseurl="file:///srv/r1")
    path = next(iter(out))
    assert os.stat(path).st_mode & 0o7777 == 0o644
    os.chmod(path, 0o600)
    _yum_repos.mod_repo("r1", basedir=d, password="secret")
    assert os.stat(path).st_mode & 0o7777 == 0o600
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("[r2]\nname=Two\nbaseurl=file:///srv/r2\n")
    assert _yum_repos.del_repo("r2", basedir=d) == f"Repo r2 has been removed from {path}"
    assert os.stat(path).st_mode & 0o7777 == 0o600
    assert "password=secret" in Path(path).read_text()
