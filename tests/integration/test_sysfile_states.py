"""ini, sysctl, host, mount and ssh_known_hosts states applied live with ``briny-call --local``.

Each tree runs in test mode (nothing on the host changes), live, and live
again (no changes the second time); the assertions look at the host: the
files, ``/proc/self/mountinfo``, ``sysctl``. Everything lives in the test's
temporary folder; a system setting a test must touch is put back in a
``finally``. The comments and changes are Salt's (tests/golden/files has the
reference's own answers for the same kinds of cases).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = [
    pytest.mark.host,
    pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="applies states to this host as root"),
]

Apply = Callable[..., dict[str, dict[str, Any]]]


@pytest.fixture
def apply(tmp_path: Path, briny_call) -> Apply:
    """apply(sls_text, test=False, config="") -> {state id: result}: state.sls on a one-file tree."""
    tree, conf = tmp_path / "srv", tmp_path / "etc"
    tree.mkdir()
    conf.mkdir()

    def run(sls: str, test: bool = False, config: str = "") -> dict[str, dict[str, Any]]:
        (tree / "case.sls").write_text(textwrap.dedent(sls))
        (conf / "minion").write_text(
            f"id: files\nfile_client: local\nroot_dir: {tmp_path}/root\nfile_roots:\n  base: [{tree}]\n"
            + textwrap.dedent(config)
        )
        p = briny_call(conf, ["state.sls", "case"] + (["test=True"] if test else []), cwd=tmp_path)
        try:
            data = json.loads(p.stdout)["local"]
        except (ValueError, KeyError):
            raise AssertionError(f"briny-call failed: {p.stdout}\n{p.stderr}") from None
        assert isinstance(data, dict), data
        return {tag.split("_|-")[1]: r for tag, r in data.items()}

    return run


def _quiet(results: dict[str, dict[str, Any]]) -> None:
    for ret in results.values():
        assert ret["changes"] == {} and ret["result"] is True, ret


# --------------------------------------------------------------------- ini


def test_ini_states(apply: Apply, tmp_path: Path) -> None:
    conf = tmp_path / "journald.conf"
    stock = "#  This file is part of systemd.\n\n[Journal]\n#Storage=auto\n#Compress=yes\nSeal=no\n"
    conf.write_text(stock)
    other = tmp_path / "other.ini"
    other.write_text("keep = 1\n[gone]\na = b\n[old]\nx = 1\ny = 2\n")
    sls = f"""
    journald:
      ini.options_present:
        - name: {conf}
        - strict: True
        - sections:
            Journal:
              Storage: persistent
              Compress: 'yes'
    sections:
      ini.sections_present:
        - name: {other}
        - sections: [new]
    sections_gone:
      ini.sections_absent:
        - name: {other}
        - sections: [gone]
    options_gone:
      ini.options_absent:
        - name: {other}
        - sections:
            old: [x]
    """
    dry = apply(sls, test=True)
    assert dry["journald"]["result"] is None and dry["journald"]["comment"] == (
        "Deleted key Seal in section Journal.\nChanged key Storage in section Journal.\n"
        "Changed key Compress in section Journal.\n"
    )
    assert dry["sections"]["comment"] == "Created new section new.\n"
    assert dry["sections_gone"]["comment"] == "Deleted section gone.\n"
    assert dry["options_gone"]["comment"] == "Deleted key x in section old.\n"
    assert conf.read_text() == stock and other.read_text() == "keep = 1\n[gone]\na = b\n[old]\nx = 1\ny = 2\n"

    first = apply(sls)
    assert first["journald"]["changes"] == {
        "Journal": {
            "Seal": {"before": "no", "after": None},
            "Storage": {"before": None, "after": "persistent"},
            "Compress": {"before": None, "after": "yes"},
        }
    }
    assert conf.read_text() == "#  This file is part of systemd.\n\n[Journal]\nStorage = persistent\nCompress = yes\n"
    assert first["sections_gone"]["changes"] == {"gone": {"a": "b"}}
    assert first["options_gone"]["changes"] == {"old": {"x": "1"}}
    assert other.read_text() == "keep = 1\n\n[old]\ny = 2\n\n[new]\n"
    _quiet(apply(sls))


# --------------------------------------------------------------------- hosts


def test_host_states(apply: Apply, tmp_path: Path) -> None:
    hosts = tmp_path / "hosts"
    original = "# static\n127.0.0.1\tlocalhost\n\n10.0.0.1\told.example\tdb.example\n"
    hosts.write_text(original)
    config = f"hosts.file: {hosts}\n"
    sls = """
    web:
      host.present:
        - name: web.example
        - ip: [10.0.0.5, 10.0.0.6]
        - comment: web tier
    old:
      host.absent:
        - name: old.example
        - ip: 10.0.0.1
    only:
      host.only:
        - name: 127.0.0.1
        - hostnames: [localhost, lh]
    """
    dry = apply(sls, test=True, config=config)
    assert dry["web"]["result"] is None and dry["web"]["changes"]["added"] == {
        "10.0.0.5": ["web.example"],
        "10.0.0.6": ["web.example"],
    }
    assert dry["old"]["comment"] == "Host old.example (10.0.0.1) needs to be removed"
    assert dry["only"]["comment"] == 'Would change 127.0.0.1 from "localhost" to "localhost lh"'
    assert hosts.read_text() == original

    first = apply(sls, config=config)
    assert first["web"]["comment"].splitlines() == [
        "Added host web.example (10.0.0.5)",
        "Added host web.example (10.0.0.6)",
        "Set comment for host 10.0.0.5 (web tier)",
        "Set comment for host 10.0.0.6 (web tier)",
    ]
    assert first["old"]["changes"] == {"host": "old.example"}
    assert first["only"]["changes"] == {"127.0.0.1": {"old": "localhost", "new": "localhost lh"}}
    assert hosts.read_text() == (
        "# static\n127.0.0.1\t\tlocalhost lh\n\n10.0.0.1\t\tdb.example \n"
        "10.0.0.5\t\tweb.example\t\t# web tier\n10.0.0.6\t\tweb.example\t\t# web tier\n"
    )
    _quiet(apply(sls, config=config))


def test_argument_errors_fail_only_their_state(apply: Apply, tmp_path: Path) -> None:
    sls = f"""
    bogus:
      host.present:
        - name: a.example
        - ip: 10.0.0.1
        - bogus: 1
        - other: 2
    missing:
      host.present:
        - name: b.example
    fine:
      ini.options_present:
        - name: {tmp_path}/fine.ini
        - sections:
            a: b
    """
    res = apply(sls, config=f"hosts.file: {tmp_path}/hosts\n")
    assert res["bogus"]["result"] is False
    assert res["bogus"]["comment"] == "'bogus' and 'other' are invalid keyword arguments for 'host.present'\n"
    assert res["missing"]["comment"] == "Missing parameter ip for state host.present\n"
    assert res["fine"]["result"] is True and (tmp_path / "fine.ini").read_text() == "a = b\n"
    assert not (tmp_path / "hosts").exists()


# --------------------------------------------------------------------- sysctl


@pytest.fixture
def msgmax():
    """kernel.msgmax (an IPC limit nothing here depends on), put back as it was."""
    proc = Path("/proc/sys/kernel/msgmax")
    if not proc.exists():
        pytest.skip("no /proc/sys/kernel/msgmax")
    before = proc.read_text().strip()
    try:
        yield int(before)
    finally:
        proc.write_text(before + "\n")


def test_sysctl_present_changes_the_kernel_and_the_config(apply: Apply, tmp_path: Path, msgmax: int) -> None:
    conf = tmp_path / "sysctl.d" / "60-briny.conf"
    new = msgmax + 1
    sls = f"""
    msgmax:
      sysctl.present:
        - name: kernel.msgmax
        - value: {new}
        - config: {conf}
    """
    dry = apply(sls, test=True)["msgmax"]
    assert (dry["result"], dry["comment"]) == (None, f"Sysctl option kernel.msgmax set to be changed to {new}")
    assert not conf.exists() and Path("/proc/sys/kernel/msgmax").read_text().strip() == str(msgmax)
    first = apply(sls)["msgmax"]
    assert (
        first["changes"] == {"kernel.msgmax": new} and first["comment"] == f"Updated sysctl value kernel.msgmax = {new}"
    )
    assert Path("/proc/sys/kernel/msgmax").read_text().strip() == str(new)
    assert conf.read_text() == f"#\n# Kernel sysctl configuration\n#\nkernel.msgmax = {new}\n"
    _quiet(apply(sls))
    Path("/proc/sys/kernel/msgmax").write_text(f"{msgmax}\n")  # the kernel drifted: the config is right, live is not
    again = apply(sls)["msgmax"]
    assert again["changes"] == {"kernel.msgmax": new}
    assert Path("/proc/sys/kernel/msgmax").read_text().strip() == str(new)


# --------------------------------------------------------------------- ssh_known_hosts


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def sshd():
    """A throwaway sshd on 127.0.0.1 (as nobody, its own host key, in a folder nobody can read):
    (port, public key); stopped by pid, its folder removed."""
    binary = shutil.which("sshd") or "/usr/sbin/sshd"
    if not os.path.exists(binary) or shutil.which("ssh-keyscan") is None:
        pytest.skip("needs Debian's openssh-server (sshd) and openssh-client (ssh-keyscan)")
    folder = Path(tempfile.mkdtemp(prefix="briny-sshd-"))
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(folder / "key")], check=True)
    os.chmod(folder, 0o755)
    os.chown(folder / "key", pwd.getpwnam("nobody").pw_uid, -1)
    port = _free_port()
    (folder / "config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {folder / 'key'}\nPidFile none\nUsePAM no\n"
    )
    log = open(folder / "log", "wb")  # noqa: SIM115 - closed below, after sshd
    proc = subprocess.Popen(
        [binary, "-D", "-e", "-f", str(folder / "config")], stdout=log, stderr=log, user="nobody", group="nogroup"
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            assert proc.poll() is None, f"sshd exited: {(folder / 'log').read_text()}"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "sshd did not listen in time"
                time.sleep(0.05)
        yield port, (folder / "key.pub").read_text().split()[1]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(folder, ignore_errors=True)


def _salt_fingerprint(key: str) -> str:
    digest = hashlib.sha256(base64.b64decode(key)).hexdigest()
    return ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))


def test_known_hosts_from_a_live_server(apply: Apply, tmp_path: Path, sshd) -> None:
    port, key = sshd
    conf = tmp_path / "known_hosts"
    sls = f"""
    by_fingerprint:
      ssh_known_hosts.present:
        - name: 127.0.0.1
        - port: {port}
        - fingerprint: {_salt_fingerprint(key)}
        - hash_known_hosts: False
        - config: {conf}
    wrong_fingerprint:
      ssh_known_hosts.present:
        - name: localhost
        - port: {port}
        - fingerprint: 00:11
        - hash_known_hosts: False
        - config: {conf}
    """
    dry = apply(sls, test=True)
    assert dry["by_fingerprint"]["comment"] == f"Key for 127.0.0.1 is set to be added to {conf}"
    assert not conf.exists()
    first = apply(sls)
    ret = first["by_fingerprint"]
    assert ret["result"] is True
    assert ret["comment"] == f"127.0.0.1's key saved to {conf} (fingerprint: {_salt_fingerprint(key)})"
    assert ret["changes"]["old"] is None and ret["changes"]["new"][0]["key"] == key
    assert conf.read_text() == f"[127.0.0.1]:{port} ssh-ed25519 {key}\n"
    assert first["wrong_fingerprint"]["result"] is False
    assert first["wrong_fingerprint"]["comment"] == (
        "Remote host public keys found but none of their fingerprints match the one you have provided"
    )
    again = apply(sls)["by_fingerprint"]
    assert (again["changes"], again["comment"]) == ({}, f"127.0.0.1 already exists in {conf}")


def test_known_hosts_of_a_user_hashed(apply: Apply, tmp_path: Path) -> None:
    name = "brinytest" + secrets.token_hex(3)
    home = tmp_path / "home"
    key = "AAAAC3NzaC1lZDI1NTE5AAAAIEA1lUCy0V3ZjQCFaBP6Xr8a/jeHUQ7pg076xYPa5RBs"
    subprocess.run(["useradd", "-M", "-d", str(home), name], check=True, capture_output=True)
    try:
        home.mkdir()
        sls = f"""
        known:
          ssh_known_hosts.present:
            - name: git.example
            - user: {name}
            - key: {key}
            - enc: ssh-ed25519
        forget:
          ssh_known_hosts.absent:
            - name: gone.example
            - user: {name}
        """
        dry = apply(sls, test=True)
        assert dry["known"]["comment"] == "Key for git.example is set to be added to .ssh/known_hosts"
        assert dry["forget"]["comment"] == "Host is already absent" and not (home / ".ssh").exists()
        first = apply(sls)
        assert first["known"]["comment"] == f"git.example's key saved to .ssh/known_hosts (key: {key})"
        path = home / ".ssh" / "known_hosts"
        info = pwd.getpwnam(name)
        assert (path.stat().st_uid, path.stat().st_mode & 0o777) == (info.pw_uid, 0o600)
        assert (path.parent.stat().st_uid, path.parent.stat().st_mode & 0o777) == (info.pw_uid, 0o700)
        assert path.read_text().startswith("|1|") and key in path.read_text()
        _quiet(apply(sls))
        gone = apply(sls.replace("gone.example", "git.example").replace("known:\n", "unused:\n"))
        assert gone["forget"]["changes"]["old"][0]["key"] == key and "git.example" not in path.read_text()
    finally:
        subprocess.run(["userdel", name], capture_output=True, check=False)
