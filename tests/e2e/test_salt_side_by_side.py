"""Issue 11: briny's daemons on a host that still holds a Salt master's and minion's files.

A fake root (``root_dir``, so the test runs unprivileged in a temporary
folder) is laid out as a Salt 3007 host is: keys under ``/etc/salt/pki``,
pidfiles naming live processes, IPC sockets that are bound, caches and logs,
and ``/var/run`` a link to ``/run``. briny's master and minion start there
with their default paths (only the ports and the master's address are set),
authenticate, answer ``test.ping``, and afterwards every one of Salt's
files is as it was: same paths, contents, modes and mtimes, and (where the
file system records reads) never read. briny's own files are where the
defaults say.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from briny.common.config import load_master_config, load_minion_config

from .support import Fleet

pytestmark = pytest.mark.slow

MINION_ID = "web1"  # the host's name: Salt's minion and briny's have the same id
OLD = 1_500_000_000_000_000_000  # an atime long ago (ns): a read would move it (relatime)
SALT_TREES = ("etc/salt", "var/cache/salt", "var/log/salt", "run/salt")
SALT_PIDFILES = ("run/salt-minion.pid", "run/salt-master.pid")


def _key_pair() -> tuple[bytes, bytes]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    )
    pub = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return pem, pub


class SaltHost:
    """Salt's files under ``root``, made by hand (no Salt needed); the live 'daemons' are sleeps."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.procs: list[subprocess.Popen[bytes]] = []
        self.socks: list[socket.socket] = []
        self.minion_pub = b""
        self.master_pub = b""

    def write(self, rel: str, data: bytes | str, mode: int = 0o644) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        path.chmod(mode)

    def bind(self, rel: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(path))
        sock.listen(1)
        self.socks.append(sock)

    def build(self) -> None:
        (self.root / "run").mkdir()
        (self.root / "var").mkdir()
        os.symlink("../run", self.root / "var" / "run")  # as on every systemd host
        minion_pem, minion_pub = _key_pair()
        self.minion_pub = minion_pub
        master_pem, master_pub = _key_pair()
        self.master_pub = master_pub
        self.write("etc/salt/minion", "master: salt\nid: web1\n")
        self.write("etc/salt/master", "interface: 0.0.0.0\n")
        self.write("etc/salt/pki/minion/minion.pem", minion_pem, 0o400)
        self.write("etc/salt/pki/minion/minion.pub", minion_pub)
        self.write("etc/salt/pki/minion/minion_master.pub", master_pub)
        self.write("etc/salt/pki/master/master.pem", master_pem, 0o400)
        self.write("etc/salt/pki/master/master.pub", master_pub)
        self.write(f"etc/salt/pki/master/minions/{MINION_ID}", minion_pub)
        for folder in ("minions_pre", "minions_rejected", "minions_denied", "minions_autosign"):
            (self.root / "etc/salt/pki/master" / folder).mkdir(parents=True)
        self.write("var/cache/salt/minion/files/base/top.sls", "base:\n  '*': [core]\n")
        self.write("var/cache/salt/minion/proc/20260101000000000001", b"\x81\xa3fun\xa9test.ping")
        self.write("var/cache/salt/minion/extmods/modules/custom.py", "def hello():\n    return 1\n")
        self.write("var/cache/salt/master/jobs/ab/cdef/.minions.p", b"\x91\xa4web1")
        self.write(f"var/cache/salt/master/minions/{MINION_ID}/data.p", b"\x81\xa6grains\x80")
        self.write("var/log/salt/minion", "2026-01-01 00:00:00,000 [salt.minion][INFO] Salt's own line\n", 0o640)
        self.write("var/log/salt/master", "2026-01-01 00:00:00,000 [salt.master][INFO] Salt's own line\n", 0o640)
        self.write("var/log/salt/key", "")
        for pidfile in SALT_PIDFILES:
            proc = subprocess.Popen(["sleep", "600"])  # a live process the pidfile names
            self.procs.append(proc)
            self.write(pidfile, f"{proc.pid}\n")
        self.bind("run/salt/minion/minion_event_7f3a_pub.ipc")
        self.bind("run/salt/minion/minion_event_7f3a_pull.ipc")
        self.bind("run/salt/master/master_event_pub.ipc")
        self.bind("run/salt/master/workers.ipc")
        for path in self.files():
            if path.is_file() and not path.is_symlink():
                st = path.stat()
                os.utime(path, ns=(OLD, st.st_mtime_ns))

    def files(self) -> Iterator[Path]:
        yield self.root / "var" / "run"
        for rel in SALT_PIDFILES:
            yield self.root / rel
        for rel in SALT_TREES:
            top = self.root / rel
            yield top
            for folder, dirs, names in os.walk(top):
                for name in sorted(dirs + names):
                    yield Path(folder) / name

    def snapshot(self) -> dict[str, Any]:
        """Path -> (kind, mode, size, mtime, content digest, atime of regular files). A file's
        atime is read before its content, then set back (ctime moves; it is not compared)."""
        snap: dict[str, Any] = {}
        for path in self.files():
            try:
                st = path.lstat()
            except FileNotFoundError:
                snap[str(path.relative_to(self.root))] = "missing"
                continue
            entry: tuple[Any, ...] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_mtime_ns)
            if stat.S_ISREG(st.st_mode):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                entry += (st.st_size, digest, st.st_atime_ns)
                os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
            elif stat.S_ISLNK(st.st_mode):
                entry += (os.readlink(path),)
            snap[str(path.relative_to(self.root))] = entry
        return snap

    def close(self) -> None:
        for sock in self.socks:
            sock.close()
        for proc in self.procs:
            proc.kill()
            proc.wait(10)


def _reads_are_recorded(folder: Path) -> bool:
    """Whether this file system moves atime on a read (relatime does for an atime before ctime)."""
    canary = folder / "canary"
    canary.write_text("x")
    os.utime(canary, ns=(OLD, canary.stat().st_mtime_ns))
    canary.read_text()
    moved = canary.stat().st_atime_ns != OLD
    canary.unlink()
    return moved


def _without_atimes(snap: dict[str, Any]) -> dict[str, Any]:
    return {k: v[:-1] if isinstance(v, tuple) and len(v) == 6 else v for k, v in snap.items()}


def test_briny_beside_a_salt_install_takes_none_of_its_files() -> None:
    root = Path(tempfile.mkdtemp(prefix="bs", dir="/tmp"))  # short: IPC paths have a length limit
    salt = SaltHost(root)
    fleet: Fleet | None = None
    try:
        salt.build()
        before = salt.snapshot()
        atimes_count = _reads_are_recorded(root)
        # only where to listen and connect: every path is the daemons' default, under root_dir
        defaults = dict.fromkeys(("pki_dir", "cachedir", "sock_dir", "log_file", "pidfile"))
        fleet = Fleet(root, [], master_opts={**defaults, "root_dir": str(root)}, minion_opts=defaults)
        fleet.master.log_file = root / "var/log/briny/master"
        minion = fleet.add_minion(MINION_ID, root_dir=str(root))
        minion.log_file = root / "var/log/briny/minion"
        master_opts, minion_opts = load_master_config(fleet.master_conf), load_minion_config(minion.conf_dir)
        assert {k: master_opts[k] for k in defaults} == {
            "pki_dir": f"{root}/etc/briny/pki/master",
            "cachedir": f"{root}/var/cache/briny/master",
            "sock_dir": f"{root}/run/briny/master",
            "log_file": f"{root}/var/log/briny/master",
            "pidfile": f"{root}/run/briny/briny-master.pid",
        }
        assert {k: minion_opts[k] for k in defaults} == {
            "pki_dir": f"{root}/etc/briny/pki/minion",
            "cachedir": f"{root}/var/cache/briny/minion",
            "sock_dir": f"{root}/run/briny/minion",
            "log_file": f"{root}/var/log/briny/minion",
            "pidfile": f"{root}/run/briny/briny-minion.pid",
        }

        fleet.start()  # the minion's key is pending, briny-key -A accepts it
        res = fleet.briny("*", "test.ping", "--out", "json")
        assert (res.returncode, res.json()) == (0, {MINION_ID: True}), res.stderr

        # briny's own files, where its defaults put them
        briny_pub = (root / "etc/briny/pki/minion/minion.pub").read_bytes()
        assert briny_pub != salt.minion_pub  # a key of its own
        assert (root / f"etc/briny/pki/master/minions/{MINION_ID}").read_bytes() == briny_pub
        assert (root / "etc/briny/pki/minion/minion_master.pub").read_bytes() == (
            root / "etc/briny/pki/master/master.pub"
        ).read_bytes()  # pinned briny's master
        assert (root / "run/briny/briny-master.pid").read_text().strip() == str(fleet.master.pid)
        assert (root / "run/briny/briny-minion.pid").read_text().strip() == str(minion.pid)
        assert (root / "run/briny/master/master_client.ipc").is_socket()
        assert (root / "run/briny/minion/minion_client.ipc").is_socket()
        assert "Got return from web1" in (root / "var/log/briny/master").read_text()
        assert "running job" in (root / "var/log/briny/minion").read_text()
        assert (root / "var/log/briny/key").exists()
        assert (root / "var/cache/briny/master").is_dir() and (root / "var/cache/briny/minion").is_dir()

        during = salt.snapshot()
        fleet.close()  # stopping removes briny's pidfiles, never Salt's
        assert not (root / "run/briny/briny-master.pid").exists()
        after = salt.snapshot()
        for label, snap in (("while briny ran", during), ("after briny stopped", after)):
            if not atimes_count:
                before, snap = _without_atimes(before), _without_atimes(snap)
            changed = {k: (before.get(k), snap.get(k)) for k in set(before) | set(snap) if before.get(k) != snap.get(k)}
            assert changed == {}, f"Salt's files changed {label}: {changed}"
        assert all(proc.poll() is None for proc in salt.procs)  # Salt's 'daemons' untouched
    finally:
        if fleet is not None:
            fleet.close()
        salt.close()
        shutil.rmtree(root, ignore_errors=True)


def test_taking_over_a_salt_minions_and_masters_keys_on_purpose() -> None:
    """The README's recipe: copy minion.pem/minion.pub (and minion_master.pub, with the master's
    pair) into briny's pki_dir; the briny master sees the key Salt's master knew, same fingerprint."""
    root = Path(tempfile.mkdtemp(prefix="bt", dir="/tmp"))
    salt = SaltHost(root)
    fleet: Fleet | None = None
    try:
        salt.build()
        for src, dst, mode in (
            ("pki/minion/minion.pem", "pki/minion/minion.pem", 0o600),
            ("pki/minion/minion.pub", "pki/minion/minion.pub", 0o644),
            ("pki/minion/minion_master.pub", "pki/minion/minion_master.pub", 0o644),
            ("pki/master/master.pem", "pki/master/master.pem", 0o600),
            ("pki/master/master.pub", "pki/master/master.pub", 0o644),
        ):
            target = root / "etc/briny" / dst
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            shutil.copyfile(root / "etc/salt" / src, target)
            target.chmod(mode)
        defaults = dict.fromkeys(("pki_dir", "cachedir", "sock_dir", "log_file", "pidfile"))
        fleet = Fleet(root, [], master_opts={**defaults, "root_dir": str(root)}, minion_opts=defaults)
        fleet.master.log_file = root / "var/log/briny/master"
        minion = fleet.add_minion(MINION_ID, root_dir=str(root))
        minion.log_file = root / "var/log/briny/minion"
        fleet.start()
        res = fleet.briny("*", "test.ping", "--out", "json")
        assert (res.returncode, res.json()) == (0, {MINION_ID: True}), res.stderr
        assert (root / f"etc/briny/pki/master/minions/{MINION_ID}").read_bytes() == salt.minion_pub
        assert (root / "etc/briny/pki/minion/minion_master.pub").read_bytes() == salt.master_pub
        finger = fleet.key("-f", MINION_ID, "--out", "json").json()
        # salt-key -f: sha256 of the PEM's base64 lines (checked against salt-key 3007.17)
        digest = hashlib.sha256(b"".join(line + b"\n" for line in salt.minion_pub.splitlines()[1:-1])).hexdigest()
        assert finger == {"minions": {MINION_ID: ":".join(digest[i : i + 2] for i in range(0, 64, 2))}}
    finally:
        if fleet is not None:
            fleet.close()
        salt.close()
        shutil.rmtree(root, ignore_errors=True)
