"""known_hosts: briny.minion.host.sysfiles.sshkeys and the ``ssh`` execution module's known_hosts functions,
on files in a temporary folder (no SSH server: keys are given; tests/integration scans a real sshd)."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from briny.common.exceptions import CommandExecutionError
from briny.common.loader import minion_mods
from briny.minion.host.sysfiles import sshkeys

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs OpenSSH's ssh-keygen")

ED = "AAAAC3NzaC1lZDI1NTE5AAAAIEA1lUCy0V3ZjQCFaBP6Xr8a/jeHUQ7pg076xYPa5RBs"
EC = (
    "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBJhhq8AqadHKGe7rqVyZK0p5Rc0XfQV5/bUK73wv2g6CVmGEq7S5O8N0Xpy"
    "Emg3R+c9kyMPyjjyUepHouJuNSGA="
)


def _fp(key: str, name: str = "sha256") -> str:
    digest = hashlib.new(name, base64.b64decode(key)).hexdigest()
    return ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))


@pytest.fixture
def salt():
    return minion_mods({"id": "t"})


def test_fingerprints_and_key_types() -> None:
    assert sshkeys.fingerprint(ED) == _fp(ED) and sshkeys.fingerprint(ED, "MD5") == _fp(ED, "md5")
    assert sshkeys.fingerprint("not base64!") is None
    with pytest.raises(CommandExecutionError, match="^The fingerprint_hash_type crc32 is not supported.$"):
        sshkeys.fingerprint(ED, "crc32")
    assert sshkeys.key_type(ED) == "ssh-ed25519" and sshkeys.key_type(EC) == "ecdsa-sha2-nistp256"
    assert sshkeys.key_type("aGVsbG8=") is None and sshkeys.key_type("###") is None


def test_openssh_output_and_lines() -> None:
    out = ["# Host a found: line 3", f"a ssh-ed25519 {ED}", "# Host a found: line 5", f"a ecdsa-sha2-nistp256 {EC}"]
    assert [e["enc"] for e in sshkeys.parse_openssh_output(out + ["junk", "x y notbase64!"])] == [
        "ssh-ed25519",
        "ecdsa-sha2-nistp256",
    ]
    assert sshkeys.matched_line_numbers(out, None) == [3, 5]
    assert sshkeys.matched_line_numbers(out, "ssh-ed25519") == [3]
    entry = {"hostname": "h", "enc": "ssh-ed25519", "key": ED}
    assert sshkeys.entry_line(dict(entry), 22, False) == f"h ssh-ed25519 {ED}\n"
    ported = dict(entry)
    assert sshkeys.entry_line(ported, 2222, False) == f"[h]:2222 ssh-ed25519 {ED}\n" and ported["port"] == 2222
    assert sshkeys.ssh_hostname("h", 2222) == "[h]:2222" and sshkeys.ssh_hostname("h", "22") == "h"
    assert sshkeys.replace_lines("a\nb\nc", [2], ["d\n"]) == "a\nc\nd\n"


def test_set_check_get_rm(salt, tmp_path: Path) -> None:
    conf = tmp_path / "kh" / "known_hosts"
    common = {"config": str(conf)}
    assert salt["ssh.check_known_host"](hostname="h.example", key=ED, **common) == "add"
    ret = salt["ssh.set_known_host"](hostname="h.example", key=ED, enc="ssh-ed25519", hash_known_hosts=False, **common)
    assert ret == {
        "status": "updated",
        "old": None,
        "new": [{"hostname": "h.example", "enc": "ssh-ed25519", "key": ED}],
    }
    assert conf.read_text() == f"h.example ssh-ed25519 {ED}\n" and conf.stat().st_mode & 0o777 == 0o600
    assert salt["ssh.check_known_host"](hostname="h.example", key=ED, **common) == "exists"
    assert salt["ssh.check_known_host"](hostname="h.example", fingerprint=_fp(ED), **common) == "exists"
    assert salt["ssh.check_known_host"](hostname="h.example", key=EC, **common) == "update"
    entries = salt["ssh.get_known_host_entries"](None, "h.example", **common)
    assert entries == [{"hostname": "h.example", "key": ED, "enc": "ssh-ed25519", "fingerprint": _fp(ED)}]
    again = salt["ssh.set_known_host"](
        hostname="h.example", key=ED, enc="ssh-ed25519", hash_known_hosts=False, **common
    )
    assert again == {"status": "exists", "keys": [ED]}
    salt["ssh.set_known_host"](
        hostname="h.example", key=EC, enc="ecdsa-sha2-nistp256", hash_known_hosts=False, **common
    )
    assert conf.read_text() == f"h.example ssh-ed25519 {ED}\nh.example ecdsa-sha2-nistp256 {EC}\n"
    ret = salt["ssh.rm_known_host"](hostname="h.example", **common)
    assert ret["status"] == "removed" and f"{conf} updated." in ret["comment"]
    assert conf.read_text() == "" and (tmp_path / "kh" / "known_hosts.old").exists()
    assert salt["ssh.get_known_host_entries"](None, "h.example", **common) is None


def test_hashing_keeps_the_host_findable(salt, tmp_path: Path) -> None:
    conf = tmp_path / "known_hosts"
    conf.write_text(f"# mine\nother.example ssh-ed25519 {ED}\n")
    os.chmod(conf, 0o644)
    ret = salt["ssh.set_known_host"](hostname="h.example", key=ED, enc="ssh-ed25519", config=str(conf))
    assert ret["status"] == "updated"
    lines = conf.read_text().splitlines()
    assert lines[0] == "# mine" and all(line.startswith("|1|") for line in lines[1:]) and len(lines) == 3
    assert conf.stat().st_mode & 0o777 == 0o644
    found = subprocess.run(
        ["ssh-keygen", "-F", "h.example", "-f", str(conf)], capture_output=True, text=True, check=False
    )
    assert found.returncode == 0 and ED in found.stdout
    assert salt["ssh.check_known_host"](hostname="h.example", key=ED, config=str(conf)) == "exists"


def test_errors_are_salts(salt, tmp_path: Path) -> None:
    conf = str(tmp_path / "known_hosts")
    assert salt["ssh.set_known_host"](hostname="", key=ED) == {"status": "error", "error": "hostname argument required"}
    assert salt["ssh.set_known_host"](hostname="h", port=2222, config=conf)["error"] == (
        "argument port can not be used in conjunction with argument hash_known_hosts"
    )
    assert salt["ssh.set_known_host"](hostname="h", key="bm90IGEga2V5", enc="ssh-ed25519", config=conf) == {
        "status": "error",
        "error": "Invalid public key: bm90IGEga2V5",
    }
    assert salt["ssh.check_known_host"](user="brinynosuchuser", hostname="h") == {
        "status": "error",
        "error": "User brinynosuchuser does not exist",
    }
    assert salt["ssh.get_known_host_entries"](None, "h", config="rel/kh") == {
        "status": "error",
        "error": "Cannot determine absolute path to file.",
    }
    assert salt["ssh.rm_known_host"](hostname="h", config=conf) == {
        "status": "error",
        "error": f"Known hosts file {conf} does not exist",
    }
    assert not os.path.exists(conf)
