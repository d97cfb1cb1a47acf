"""user, group, cron, ssh_auth, archive, module and event states doing real work on this host.

Each tree is applied with ``briny-call --local`` twice (the second run must
change nothing) and in test mode (which must change nothing). The expected
comments and changes are those the reference Salt 3007 gave on the same
trees (see each test). Everything a test creates has a random
``brinytest<hex>`` name and is removed afterwards by that exact name.
Needs root, shadow-utils and (for cron) Debian's ``cron``; skipped otherwise.
"""

from __future__ import annotations

import base64
import io
import json
import os
import pwd
import grp
import secrets
import shutil
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path
from typing import Any

import pytest

pytestmark = [
    pytest.mark.host,
    pytest.mark.skipif(
        os.name != "posix" or os.geteuid() != 0 or shutil.which("useradd") is None, reason="needs root and shadow-utils"
    ),
]

TIMEOUT = 120


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, check=False)


class Host:
    """Names this test made, removed at the end by exactly those names."""

    def __init__(self, tmp: Path) -> None:
        self.tag = "brinytest" + secrets.token_hex(3)
        self.users: list[str] = []
        self.groups: list[str] = []
        self.tmp = tmp

    def user(self, suffix: str) -> str:
        self.users.append(self.tag + suffix)
        return self.tag + suffix

    def group(self, suffix: str) -> str:
        self.groups.append(self.tag + suffix)
        return self.tag + suffix

    def cleanup(self) -> None:
        for name in self.users:
            if shutil.which("crontab"):
                _run(["crontab", "-r", "-u", name])
            if _exists_user(name):
                _run(["userdel", "-r", name])
            if _exists_group(name):  # a private group userdel left behind
                _run(["groupdel", name])
        for name in self.groups:
            if _exists_group(name):
                _run(["groupdel", name])


def _exists_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def _exists_group(name: str) -> bool:
    try:
        grp.getgrnam(name)
        return True
    except KeyError:
        return False


@pytest.fixture
def host(tmp_path: Path):
    h = Host(tmp_path)
    try:
        yield h
    finally:
        h.cleanup()


@pytest.fixture
def apply(tmp_path: Path):
    """apply(files, sls, test=False) -> results list in run order."""
    tree, conf, root = tmp_path / "srv", tmp_path / "etc", tmp_path / "root"
    for d in (tree, conf, root):
        d.mkdir(exist_ok=True)
    (conf / "minion").write_text(
        f"id: systest\nfile_client: local\nroot_dir: {root}\nfile_roots:\n  base: [{tree}]\nsock_dir: sock\n"
    )

    def run(files: dict[str, Any], sls: str, test: bool = False) -> list[dict[str, Any]]:
        for rel, body in files.items():
            path = tree / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(body, bytes):
                path.write_bytes(body)
            else:
                path.write_text(textwrap.dedent(body))
        cmd = [
            sys.executable,
            "-m",
            "briny.minion.call",
            "--local",
            "-c",
            str(conf),
            "state.sls",
            sls,
            "--out=json",
        ] + (["test=True"] if test else [])
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
        try:
            data = json.loads(proc.stdout)["local"]
        except (ValueError, KeyError):
            raise AssertionError(f"briny-call failed: {proc.stdout}\n{proc.stderr}") from None
        assert isinstance(data, dict), data
        return sorted(data.values(), key=lambda r: r["__run_num__"])

    run.tree = tree  # type: ignore[attr-defined]
    return run


def _by_id(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["__id__"]: r for r in results}


def _quiet(results: list[dict[str, Any]], failing: tuple[str, ...] = (), pending: tuple[str, ...] = ()) -> None:
    """A repeated run: nothing changes; only the expected failures fail (or stay pending in test mode)."""
    for r in results:
        assert r["changes"] == {}, r
        want = None if r["__id__"] in pending else r["__id__"] not in failing
        assert r["result"] is want, r


# --------------------------------------------------------------------- users and groups


def test_users_and_groups(host: Host, apply, tmp_path: Path) -> None:
    g1, g2, u1, u2, bad = host.group("g1"), host.group("g2"), host.user("u1"), host.user("u2"), host.user("bad")
    home = tmp_path / "homes" / u1
    (tmp_path / "homes").mkdir()
    sls = f"""
    {g1}:
      group.present: []
    {g2}:
      group.present:
        - system: True
    {u1}:
      user.present:
        - gid: {g1}
        - groups: [{g2}]
        - optional_groups: [{host.tag}nosuch]
        - home: {home}
        - shell: /bin/sh
        - fullname: Briny Test
        - roomnumber: "12"
        - password: '$6$abc$xyz'
    {u2}:
      user.present:
        - createhome: False
        - system: True
    {bad}:
      user.present:
        - uid: notanumber
    """
    # test mode first: nothing is created
    dry = _by_id(apply({"u.sls": sls}, "u", test=True))
    assert dry[u1]["result"] is None and dry[u1]["comment"] == f"User {u1} set to be added (pending groups: {g2})"
    assert dry[g1]["comment"] == f"Group {g1} set to be added"
    assert not _exists_user(u1) and not _exists_group(g1)

    first = _by_id(apply({}, "u"))
    assert first[g1]["comment"] == f"New group {g1} created" and first[g1]["result"] is True
    assert set(first[g1]["changes"]) == {"name", "passwd", "gid", "members"}
    info = first[u1]["changes"]
    assert first[u1]["comment"] == f"New user {u1} created"
    assert info["groups"] == sorted([g1, g2]) and info["home"] == str(home) and info["shell"] == "/bin/sh"
    assert (info["fullname"], info["roomnumber"], info["password"]) == ("Briny Test", "12", "XXX-REDACTED-XXX")
    assert first[u2]["changes"]["home"] == ""  # createhome False, as Salt reports it
    assert first[bad]["result"] is False
    assert first[bad]["comment"].startswith(f"Failed to create new user {bad}")
    assert "invalid user ID" in first[bad]["comment"]
    assert home.is_dir() and home.stat().st_uid == pwd.getpwnam(u1).pw_uid
    assert _run(["getent", "shadow", u1]).stdout.split(":")[1] == "$6$abc$xyz"

    second = apply({}, "u")
    _quiet(second, failing=(bad,))
    assert _by_id(second)[u1]["comment"] == f"User {u1} is present and up to date"
    _quiet(apply({}, "u", test=True), pending=(bad,))

    # changes to an existing account
    mod = f"""
    {u1}:
      user.present:
        - shell: /bin/bash
        - fullname: Briny Two
        - groups: []
        - home: {home}
    {u2}:
      user.present:
        - uid: 47555
    """
    dry = _by_id(apply({"m.sls": mod}, "m", test=True))
    assert dry[u1]["comment"] == (
        "The following user attributes are set to be changed:\ngroups: []\nshell: /bin/bash\nfullname: Briny Two\n"
    )
    assert dry[u2]["result"] is False and "Changing uid" in dry[u2]["comment"]
    got = _by_id(apply({}, "m"))
    assert got[u1]["comment"] == f"Updated user {u1}"
    assert got[u1]["changes"] == {"groups": [g1], "shell": "/bin/bash", "fullname": "Briny Two"}
    assert got[u2]["comment"].startswith("Encountered error checking for needed changes. Additional info follows:")
    _quiet(apply({}, "m"), failing=(u2,))

    # group membership
    grp_sls = f"""
    {g2}:
      group.present:
        - addusers: [{u2}]
    """
    got = _by_id(apply({"g.sls": grp_sls}, "g"))
    assert got[g2]["changes"] == {"Final": "All changes applied successfully"}
    assert got[g2]["comment"] == f"The following group attributes are set to be changed:\naddusers: ['{u2}']\n"
    assert u2 in grp.getgrnam(g2).gr_mem
    _quiet(apply({}, "g"))

    gone = f"""
    {u1}:
      user.absent:
        - purge: True
    {u2}:
      user.absent: []
    {g1}:
      group.absent: []
    {g2}:
      group.absent: []
    """
    assert all(r["result"] is None for r in apply({"x.sls": gone}, "x", test=True))
    assert _exists_user(u1)
    got = _by_id(apply({}, "x"))
    assert got[u1]["comment"] == f"Removed user {u1}" and got[u1]["changes"] == {u1: "removed"}
    assert got[u2]["changes"] == {f"{u2} group": "removed", u2: "removed"}
    assert got[g1]["changes"] == {g1: ""} and got[g1]["comment"] == f"Removed group {g1}"
    assert not home.exists() and not _exists_user(u1) and not _exists_group(g2)
    again = _by_id(apply({}, "x"))
    assert again[u1]["comment"] == f"User {u1} is not present" and again[g1]["comment"] == "Group not present"


# --------------------------------------------------------------------- cron


@pytest.mark.skipif(shutil.which("crontab") is None, reason="needs crontab (Debian's cron)")
def test_cron(host: Host, apply) -> None:
    user = host.user("cron")
    assert _run(["useradd", "-M", user]).returncode == 0
    sls = f"""
    hello:
      cron.present:
        - name: /bin/echo hello
        - user: {user}
        - minute: 5
        - hour: '*/2'
    ident:
      cron.present:
        - name: /bin/echo ident
        - user: {user}
        - identifier: myid
        - comment: my comment
        - special: '@reboot'
    disabled:
      cron.present:
        - name: /bin/echo off
        - user: {user}
        - commented: True
        - minute: 3
    mail:
      cron.env_present:
        - name: MAILTO
        - value: root@example.com
        - user: {user}
    nobody:
      cron.present:
        - name: /bin/true
        - user: {host.tag}nosuchuser
    """
    dry = _by_id(apply({"c.sls": sls}, "c", test=True))
    assert dry["hello"]["comment"] == "Cron /bin/echo hello is set to be added" and dry["hello"]["result"] is None
    assert _run(["crontab", "-l", "-u", user]).returncode != 0  # still no crontab
    first = _by_id(apply({}, "c"))
    assert first["hello"]["comment"] == f"Cron /bin/echo hello added to {user}'s crontab"
    assert first["hello"]["changes"] == {user: "/bin/echo hello"}
    assert first["mail"]["changes"] == {user: "MAILTO"}
    assert first["nobody"]["result"] is False
    assert first["nobody"]["comment"].startswith("Cron /bin/true for user ") and "unknown" in first["nobody"]["comment"]
    assert _run(["crontab", "-l", "-u", user]).stdout == (
        "# Lines below here are managed by Salt, do not edit\n"
        "MAILTO=root@example.com\n"
        "# SALT_CRON_IDENTIFIER:/bin/echo hello\n"
        "5 */2 * * * /bin/echo hello\n"
        "# SALT_CRON_IDENTIFIER:/bin/echo off\n"
        "#DISABLED#3 * * * * /bin/echo off\n"
        "# my comment SALT_CRON_IDENTIFIER:myid\n"
        "@reboot /bin/echo ident\n"
    )
    _quiet(apply({}, "c"), failing=("nobody",))
    assert _by_id(apply({}, "c", test=True))["hello"]["comment"] == "Cron /bin/echo hello already present"

    change = f"""
    hello:
      cron.present:
        - name: /bin/echo hello
        - user: {user}
        - minute: 6
        - hour: '*/2'
    disabled:
      cron.absent:
        - name: /bin/echo off
        - user: {user}
    mail:
      cron.env_absent:
        - name: MAILTO
        - user: {user}
    whole:
      cron.file:
        - name: salt://crontab.txt
        - user: {user}
    """
    got = _by_id(apply({"d.sls": change, "crontab.txt": "# whole\n0 1 * * * /bin/true\n"}, "d", test=True))
    assert got["hello"]["comment"] == "Cron /bin/echo hello is set to be updated"
    assert got["disabled"]["comment"] == "Cron /bin/echo off is set to be removed"
    got = _by_id(apply({}, "d"))
    assert got["hello"]["comment"] == "Cron /bin/echo hello updated"
    assert got["disabled"]["comment"] == f"Cron /bin/echo off removed from {user}'s crontab"
    assert got["mail"]["comment"] == f"Cron env MAILTO removed from {user}'s crontab"
    assert got["whole"]["comment"] == f"Crontab for user {user} was updated"
    assert got["whole"]["changes"]["diff"].startswith("--- \n+++ \n")
    assert _run(["crontab", "-l", "-u", user]).stdout == "# whole\n0 1 * * * /bin/true\n"


# --------------------------------------------------------------------- ssh_auth


def test_ssh_auth(host: Host, apply, tmp_path: Path) -> None:
    user = host.user("ssh")
    home = tmp_path / "sshhome"
    assert _run(["useradd", "-m", "-d", str(home), user]).returncode == 0
    key1 = base64.b64encode(b"\x00\x00\x00\x0bssh-ed25519" + secrets.token_bytes(36)).decode()
    key2 = base64.b64encode(b"\x00\x00\x00\x07ssh-rsa" + secrets.token_bytes(64)).decode()
    key3 = base64.b64encode(b"\x00\x00\x00\x0bssh-ed25519" + secrets.token_bytes(36)).decode()
    sls = f"""
    k1:
      ssh_auth.present:
        - name: {key1}
        - user: {user}
        - enc: ed25519
        - comment: k1@host
    k2:
      ssh_auth.present:
        - name: 'no-pty ssh-rsa {key2} k2@host'
        - user: {user}
    fromfile:
      ssh_auth.present:
        - name: keyfile
        - user: {user}
        - source: salt://keys.pub
    nobody:
      ssh_auth.present:
        - name: {key1}
        - user: {host.tag}nosuchuser
    """
    files = {"s.sls": sls, "keys.pub": f"ssh-ed25519 {key3} k3@host\n"}
    dry = _by_id(apply(files, "s", test=True))
    assert dry["k1"]["comment"] == f"Key {key1} for user {user} is set to be added"
    assert dry["fromfile"]["comment"] == f"Set to add: {key3}\n"
    assert not (home / ".ssh").exists()
    first = _by_id(apply({}, "s"))
    assert first["k1"]["changes"] == {key1: "New"}
    assert first["k1"]["comment"] == f"The authorized host key {key1} for user {user} was added"
    assert first["k2"]["changes"] == {key2: "New"} and first["fromfile"]["changes"] == {"keyfile": "New"}
    assert first["nobody"]["result"] is False and "does not exist" in first["nobody"]["comment"]
    ssh_dir, keys = home / ".ssh", home / ".ssh" / "authorized_keys"
    uid = pwd.getpwnam(user).pw_uid
    assert (ssh_dir.stat().st_mode & 0o777, ssh_dir.stat().st_uid) == (0o700, uid)
    assert (keys.stat().st_mode & 0o777, keys.stat().st_uid) == (0o600, uid)
    assert keys.read_text() == (
        f"ssh-ed25519 {key1} k1@host\nno-pty ssh-rsa {key2} k2@host\nssh-ed25519 {key3} k3@host\n"
    )
    second = _by_id(apply({}, "s"))
    _quiet(list(second.values()), failing=("nobody",))
    assert second["k1"]["comment"] == f"The authorized host key {key1} is already present for user {user}"

    gone = f"""
    k2:
      ssh_auth.absent:
        - name: {key2}
        - user: {user}
    """
    assert (
        _by_id(apply({"a.sls": gone}, "a", test=True))["k2"]["comment"]
        == f"Key {key2} for user {user} is set for removal"
    )
    got = _by_id(apply({}, "a"))
    assert (got["k2"]["comment"], got["k2"]["changes"]) == ("Key removed", {key2: "Removed"})
    assert key2 not in keys.read_text() and key1 in keys.read_text()
    assert _by_id(apply({}, "a"))["k2"]["comment"] == "Key not present"


# --------------------------------------------------------------------- archive.extracted


def _tar(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in members.items():
            ti = tarfile.TarInfo(name)
            if name.endswith("/"):
                ti.type, ti.mode = tarfile.DIRTYPE, 0o755
            else:
                ti.size, ti.mode = len(data), 0o644
            tf.addfile(ti, io.BytesIO(data) if not name.endswith("/") else None)
    return buf.getvalue()


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_archive_extracted(host: Host, apply, tmp_path: Path) -> None:
    user = host.user("arc")
    assert _run(["useradd", "-M", user]).returncode == 0
    dest = tmp_path / "dest"
    good = {"app/": b"", "app/sub/": b"", "app/sub/b.txt": b"world\n", "app/a.txt": b"hello\n"}
    files = {
        "app.tar.gz": _tar(good),
        "app.zip": _zip({"app/a.txt": b"hello\n", "app/sub/b.txt": b"world\n"}),
        "evil.tar.gz": _tar({"ok/fine.txt": b"fine\n", "../evil": b"evil\n"}),
        "evil.zip": _zip({"ok/fine.txt": b"fine\n", "../evilzip": b"evil\n"}),
    }
    sls = f"""
    tgz:
      archive.extracted:
        - name: {dest}/tgz
        - source: salt://app.tar.gz
        - user: {user}
    zip:
      archive.extracted:
        - name: {dest}/zip
        - source: salt://app.zip
    evil:
      archive.extracted:
        - name: {dest}/evil
        - source: salt://evil.tar.gz
        - enforce_toplevel: False
    evilzip:
      archive.extracted:
        - name: {dest}/evilzip
        - source: salt://evil.zip
        - enforce_toplevel: False
    missing:
      archive.extracted:
        - name: {dest}/missing
        - source: salt://nope.tar.gz
    after:
      test.succeed_without_changes: []
    """
    files["ar.sls"] = sls
    dry = _by_id(apply(files, "ar", test=True))
    assert dry["tgz"]["comment"] == (
        f"Archive salt://app.tar.gz would be extracted to {dest}/tgz/, due to absence of one or more files/dirs"
    )
    assert not dest.exists()
    first = _by_id(apply({}, "ar"))
    assert first["tgz"]["comment"] == (
        f"salt://app.tar.gz extracted to {dest}/tgz/, due to absence of one or more files/dirs"
    )
    assert first["tgz"]["changes"] == {
        "updated ownership": True,
        "directories_created": [f"{dest}/tgz/"],
        "extracted_files": ["app", "app/sub", "app/sub/b.txt", "app/a.txt"],
    }
    assert first["zip"]["changes"]["extracted_files"] == ["app/a.txt", "app/sub/b.txt"]
    assert (dest / "tgz" / "app" / "a.txt").read_text() == "hello\n"
    assert (dest / "tgz" / "app" / "a.txt").stat().st_uid == pwd.getpwnam(user).pw_uid
    for evil in ("evil", "evilzip"):
        assert first[evil]["result"] is False and "../evil" in first[evil]["comment"], first[evil]
        assert not (dest / evil / "ok").exists()
    assert not (dest / "evil").exists() or not any((dest / "evil").iterdir())
    assert not (tmp_path / "evil").exists() and not (dest / "evil" / ".." / "evil" / "x").exists()
    assert first["missing"]["comment"] == "Failed to cache salt://nope.tar.gz, check minion log for more information"
    assert first["after"]["result"] is True
    second = apply({}, "ar")
    _quiet(second, failing=("evil", "evilzip", "missing"))
    assert _by_id(second)["tgz"]["comment"] == "All files in archive are already present"
    _quiet(apply({}, "ar", test=True), failing=("evil", "evilzip", "missing"))


# --------------------------------------------------------------------- module.run and event.send


def test_module_run_and_event_send(apply) -> None:
    sls = """
    legacy:
      module.run:
        - name: test.echo
        - text: hi
    newform:
      module.run:
        - test.arg:
          - x
          - y: z
        - test.false: []
    missing:
      module.run:
        - name: nosuch.fun
    ev:
      event.send:
        - name: briny/test/tag
        - data: {a: 1}
    """
    dry = _by_id(apply({"mr.sls": sls}, "mr", test=True))
    assert dry["legacy"]["comment"] == "Module function test.echo is set to execute"
    assert dry["newform"]["comment"] == "Functions test.arg, test.false to be executed."
    assert dry["ev"]["comment"] == "Event would have been fired"
    got = _by_id(apply({}, "mr"))
    assert (got["legacy"]["result"], got["legacy"]["changes"]) == (True, {"ret": "hi"})
    assert got["newform"]["result"] is False
    assert got["newform"]["comment"] == "'test.false': False, test.arg: Success"
    assert got["newform"]["changes"] == {"test.arg": {"args": ["x"], "kwargs": {"y": "z"}}}
    assert got["missing"]["comment"] == "Module function nosuch.fun is not available"
    assert got["ev"]["comment"] == "Event fired" and got["ev"]["changes"] == {"tag": "briny/test/tag", "data": {"a": 1}}
