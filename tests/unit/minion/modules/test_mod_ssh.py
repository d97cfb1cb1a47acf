"""The ssh execution module on an authorized_keys file in a temporary folder (no root needed)."""

from __future__ import annotations

import base64
import os
import pwd
from pathlib import Path

import pytest

from briny.common.exceptions import CommandExecutionError
from briny.common.loader import minion_mods

ME = pwd.getpwuid(os.geteuid()).pw_name
KEY = base64.b64encode(b"\x00\x00\x00\x0bssh-ed25519" + b"k" * 36).decode()
KEY2 = base64.b64encode(b"\x00\x00\x00\x07ssh-rsa" + b"r" * 64).decode()


@pytest.fixture
def ssh(tmp_path: Path):
    salt = minion_mods({"id": "t", "file_roots": {"base": [str(tmp_path)]}})
    return salt, tmp_path / "dot_ssh" / "authorized_keys"


def test_add_update_remove(ssh) -> None:
    salt, path = ssh
    conf = str(path)
    assert salt["ssh.check_key"](ME, KEY, "ed25519", "a@b", [], config=conf) == "add"
    assert salt["ssh.set_auth_key"](ME, KEY, enc="ed25519", comment="a@b", config=conf) == "new"
    assert path.read_text() == f"ssh-ed25519 {KEY} a@b\n"
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    assert salt["ssh.set_auth_key"](ME, KEY, enc="ed25519", comment="a@b", config=conf) == "no change"
    assert salt["ssh.set_auth_key"](ME, KEY2, comment="r", options=["no-pty"], config=conf) == "new"
    assert salt["ssh.set_auth_key"](ME, KEY, enc="ed25519", comment="new", config=conf) == "replace"
    assert path.read_text() == f"ssh-ed25519 {KEY} new\nno-pty ssh-rsa {KEY2} r\n"
    keys = salt["ssh.auth_keys"](ME, config=conf)
    assert keys[KEY2]["options"] == ["no-pty"] and keys[KEY]["comment"] == "new"
    assert salt["ssh.rm_auth_key"](ME, KEY, config=conf) == "Key removed"
    assert salt["ssh.rm_auth_key"](ME, KEY, config=conf) == "Key not present"
    assert path.read_text() == f"no-pty ssh-rsa {KEY2} r\n"


def test_foreign_lines_kept_and_missing_newline(ssh) -> None:
    salt, path = ssh
    path.parent.mkdir()
    path.write_text("# a comment\nsomething odd")
    assert salt["ssh.set_auth_key"](ME, KEY, enc="ed25519", config=str(path)) == "new"
    assert path.read_text() == f"# a comment\nsomething odd\nssh-ed25519 {KEY} \n"


def test_bad_input(ssh) -> None:
    salt, path = ssh
    assert salt["ssh.set_auth_key"](ME, "two words", config=str(path)) == "invalid"
    assert salt["ssh.set_auth_key"](ME, "!!notbase64!!", config=str(path)) == "Invalid public key"
    assert salt["ssh.set_auth_key"]("nosuchuser-briny", KEY, config=str(path)) == "fail"
    with pytest.raises(CommandExecutionError, match="Incorrect encryption key type"):
        salt["ssh.set_auth_key"](ME, KEY, enc="bogus", config=str(path))


def test_symlinked_ssh_folder_refused(ssh, tmp_path: Path) -> None:
    salt, path = ssh
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    path.parent.symlink_to(elsewhere)
    with pytest.raises(CommandExecutionError, match="symlink"):
        salt["ssh.set_auth_key"](ME, KEY, enc="ed25519", config=str(path))
    assert list(elsewhere.iterdir()) == []


def test_keys_from_file(ssh, tmp_path: Path) -> None:
    salt, path = ssh
    (tmp_path / "keys.pub").write_text(f"ssh-ed25519 {KEY} one\n\nssh-rsa {KEY2} two\n")
    assert salt["ssh.check_key_file"](ME, "salt://keys.pub", config=str(path)) == {KEY: "add", KEY2: "add"}
    assert salt["ssh.set_auth_key_from_file"](ME, "salt://keys.pub", config=str(path)) == "new"
    assert salt["ssh.set_auth_key_from_file"](ME, "salt://keys.pub", config=str(path)) == "no change"
    assert salt["ssh.rm_auth_key_from_file"](ME, "salt://keys.pub", config=str(path)) == "Key removed"
    assert path.read_text() == ""
