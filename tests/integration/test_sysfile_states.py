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
    assert res["bogus"]["comment"] == "'bogus' and 'other' are invalid keyword arguments for 'host.present'"
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


# --------------------------------------------------------------------- mount


def _mounted_under(root: Path) -> list[str]:
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if point == str(root) or point.startswith(str(root) + "/"):
            points.append(point)
    return points


@pytest.fixture
def host_mounts(tmp_path: Path):
    """Whatever a test leaves mounted, as swap or as a loop device under tmp_path is undone afterwards."""
    loops: list[str] = []
    try:
        yield loops
    finally:
        for point in reversed(_mounted_under(tmp_path)):
            subprocess.run(["umount", "-l", point], capture_output=True, check=False)
        for line in Path("/proc/swaps").read_text().splitlines()[1:]:
            if line.split()[0].startswith(str(tmp_path)):
                subprocess.run(["swapoff", line.split()[0]], capture_output=True, check=False)
        for loop in loops:
            subprocess.run(["losetup", "-d", loop], capture_output=True, check=False)
    assert not _mounted_under(tmp_path)


def _options(point: Path) -> set[str]:
    """The per-mount and super options of the (topmost) mount on ``point``."""
    found: set[str] = set()
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        comps = line.split()
        if comps[4] == str(point):
            found = set(comps[5].split(",")) | set(comps[comps.index("-") + 3].split(","))
    return found


def test_tmpfs_mounted_remounted_unmounted(apply: Apply, tmp_path: Path, host_mounts) -> None:
    fstab = tmp_path / "fstab"
    fstab.write_text("# keep me\nproc /proc proc defaults 0 0\n\nnot an entry\n")
    point = tmp_path / "mnt"

    def sls(opts: str) -> str:
        return f"""
        tmp:
          mount.mounted:
            - name: {point}
            - device: tmpfs
            - fstype: tmpfs
            - opts: {opts}
            - mkmnt: True
            - config: {fstab}
        """

    dry = apply(sls("size=1m,mode=750"), test=True)["tmp"]
    assert (dry["result"], dry["comment"]) == (None, f"{point} would be created and mounted")
    assert not point.exists() and fstab.read_text() == "# keep me\nproc /proc proc defaults 0 0\n\nnot an entry\n"
    first = apply(sls("size=1m,mode=750"))["tmp"]
    assert first["changes"] == {"mount": True, "persist": "new"}
    assert first["comment"] == "Target was successfully mounted. Added new entry to the fstab."
    assert {"size=1024k", "mode=750"} <= _options(point)
    assert fstab.read_text().endswith(f"not an entry\ntmpfs\t\t{point}\ttmpfs\tsize=1m,mode=750\t0 0\n")
    _quiet(apply(sls("size=1m,mode=750")))
    dry = apply(sls("size=2m,mode=750,noexec"), test=True)["tmp"]
    assert dry["comment"] == "Remount would be forced because options (noexec,size=2048k) changed"
    again = apply(sls("size=2m,mode=750,noexec"))["tmp"]
    assert again["changes"] == {
        "umount": "Forced remount because options (noexec,size=2048k) changed",
        "persist": "update",
    }
    assert {"size=2048k", "noexec"} <= _options(point)
    _quiet(apply(sls("size=2m,mode=750,noexec")))
    off = f"""
    off_tmp:
      mount.unmounted:
        - name: {point}
        - persist: True
        - config: {fstab}
    """
    assert apply(off, test=True)["off_tmp"]["comment"] == f"Mount point {point} is mounted but should not be"
    gone = apply(off)["off_tmp"]
    assert gone["changes"] == {"umount": True, "persist": "purged"} and not _mounted_under(point)
    assert fstab.read_text() == "# keep me\nproc /proc proc defaults 0 0\n\nnot an entry\n"
    assert apply(off)["off_tmp"]["comment"] == "Target was already unmounted. fstab entry not found"


def test_loop_device_by_label_and_uuid(apply: Apply, tmp_path: Path, host_mounts) -> None:
    if shutil.which("losetup") is None or shutil.which("mkfs.ext4") is None:
        pytest.skip("needs losetup and mkfs.ext4")
    image = tmp_path / "disk.img"
    with open(image, "wb") as fh:
        fh.truncate(8 * 1024 * 1024)
    label = "BT" + secrets.token_hex(4)
    subprocess.run(["mkfs.ext4", "-q", "-L", label, str(image)], check=True, capture_output=True)
    attach = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True, text=True, check=False)
    if attach.returncode:
        pytest.skip(f"this host does not attach loop devices: {attach.stderr.strip()}")
    loop = attach.stdout.strip()
    host_mounts.append(loop)
    uuid = subprocess.run(
        ["blkid", "-s", "UUID", "-o", "value", loop], capture_output=True, text=True, check=True
    ).stdout.strip()
    fstab = tmp_path / "fstab"
    fstab.write_text("")
    point = tmp_path / "disk"
    sls = f"""
    by_label:
      mount.mounted:
        - name: {point}
        - device: LABEL={label}
        - fstype: ext4
        - mkmnt: True
        - config: {fstab}
    by_uuid:
      mount.mounted:
        - name: {point}
        - device: UUID={uuid}
        - fstype: ext4
        - persist: False
    """
    first = apply(sls)
    assert first["by_label"]["changes"] == {"mount": True, "persist": "new"}
    assert first["by_uuid"]["comment"] == "Target was already mounted"
    assert fstab.read_text() == f"LABEL={label}\t\t{point}\text4\tdefaults\t0 0\n"
    _quiet(apply(sls))
    missing = apply(sls.replace(f"LABEL={label}", "LABEL=brinynosuchlabel"))["by_label"]
    assert (missing["result"], missing["comment"]) == (False, "Unable to find device with label brinynosuchlabel.")


def test_bind_mount_and_a_device_change(apply: Apply, tmp_path: Path, host_mounts) -> None:
    fstab = tmp_path / "fstab"
    fstab.write_text("")
    (tmp_path / "src").mkdir()
    point = tmp_path / "dst"
    sls = f"""
    bind:
      mount.mounted:
        - name: {point}
        - device: {tmp_path / "src"}
        - fstype: none
        - opts: bind
        - mkmnt: True
        - persist: False
    """
    assert apply(sls)["bind"]["changes"] == {"mount": True}
    assert apply(sls)["bind"]["comment"] == "Target was already mounted"
    tmpfs = sls.replace(f"device: {tmp_path / 'src'}", "device: tmpfs").replace("fstype: none", "fstype: tmpfs")
    other = apply(tmpfs.replace("opts: bind", "opts: defaults"))
    assert other["bind"]["changes"]["mount"] is True
    assert other["bind"]["changes"]["umount"].startswith("Forced unmount because devices don't match. Wanted: tmpfs")
    assert "tmpfs" in {
        line.split()[-3] for line in Path("/proc/self/mountinfo").read_text().splitlines() if str(point) in line
    }


def test_swap_file(apply: Apply, tmp_path: Path, host_mounts) -> None:
    if shutil.which("mkswap") is None or shutil.which("swapon") is None:
        pytest.skip("needs mkswap and swapon")
    swapfile = tmp_path / "swapfile"
    with open(swapfile, "wb") as fh:
        fh.write(b"\0" * 65536)
    os.chmod(swapfile, 0o600)
    subprocess.run(["mkswap", str(swapfile)], check=True, capture_output=True)
    fstab = tmp_path / "fstab"
    fstab.write_text("# swap\n")
    sls = f"""
    swap:
      mount.swap:
        - name: {swapfile}
        - config: {fstab}
    """
    dry = apply(sls, test=True)["swap"]
    assert (dry["result"], dry["comment"]) == (None, f"Swap {swapfile} is set to be activated")
    first = apply(sls)["swap"]
    if first["result"] is False:
        pytest.skip(f"this host does not turn swap on for files: {first['comment']}")
    assert first["comment"] == f"Swap {swapfile} activated. Added new entry to the fstab."
    assert first["changes"]["persist"] == "new" and first["changes"]["type"] == "file"
    assert str(swapfile) in Path("/proc/swaps").read_text()
    assert fstab.read_text() == f"# swap\n{swapfile}\t\tnone\tswap\tdefaults\t0 0\n"
    _quiet(apply(sls))
