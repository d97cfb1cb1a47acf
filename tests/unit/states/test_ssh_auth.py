"""ssh_auth.present / absent on an authorized_keys file in a temporary folder (no root needed)."""

from __future__ import annotations

import base64
import os
import pwd
from pathlib import Path
from typing import Any

from briny.common import loader

ME = pwd.getpwuid(os.geteuid()).pw_name
KEY = base64.b64encode(b"\x00\x00\x00\x0bssh-ed25519" + b"k" * 36).decode()
KEY2 = base64.b64encode(b"\x00\x00\x00\x07ssh-rsa" + b"r" * 64).decode()


def _states(tmp_path: Path, test: bool = False) -> Any:
    opts = {"test": test, "id": "t", "file_client": "local", "file_roots": {"base": [str(tmp_path)]}}
    return loader.states(opts, loader.minion_mods(opts))


def test_present_absent_cycle(tmp_path: Path) -> None:
    conf = str(tmp_path / "s" / "authorized_keys")
    dry = _states(tmp_path, test=True)["ssh_auth.present"](KEY, ME, enc="ed25519", config=conf)
    assert (dry["result"], dry["comment"]) == (None, f"Key {KEY} for user {ME} is set to be added")
    st = _states(tmp_path)
    ret = st["ssh_auth.present"](KEY, ME, enc="ed25519", comment="c", config=conf)
    assert ret == {
        "name": KEY,
        "changes": {KEY: "New"},
        "result": True,
        "comment": f"The authorized host key {KEY} for user {ME} was added",
    }
    ret = st["ssh_auth.present"](f'no-pty,command="x" ssh-ed25519 {KEY} other comment', ME, config=conf)
    assert ret["changes"] == {KEY: "Updated"} and ret["name"].startswith("no-pty")
    assert Path(conf).read_text() == f'no-pty,command="x" ssh-ed25519 {KEY} other comment\n'
    ret = st["ssh_auth.present"](f'no-pty,command="x" ssh-ed25519 {KEY} other comment', ME, config=conf)
    assert ret["comment"] == f"The authorized host key {KEY} is already present for user {ME}"
    ret = _states(tmp_path, test=True)["ssh_auth.absent"](KEY, ME, config=conf)
    assert ret["comment"] == f"Key {KEY} for user {ME} is set for removal"
    ret = st["ssh_auth.absent"](KEY, ME, config=conf)
    assert (ret["comment"], ret["changes"]) == ("Key removed", {KEY: "Removed"})
    assert st["ssh_auth.absent"](KEY, ME, config=conf)["comment"] == "Key not present"


def test_source_and_failures(tmp_path: Path) -> None:
    conf = str(tmp_path / "s" / "authorized_keys")
    (tmp_path / "keys.pub").write_text(f"ssh-ed25519 {KEY} one\nssh-rsa {KEY2} two\n")
    dry = _states(tmp_path, test=True)["ssh_auth.present"]("lbl", ME, source="salt://keys.pub", config=conf)
    assert dry["comment"] == f"Set to add: {KEY}\nSet to add: {KEY2}\n"
    st = _states(tmp_path)
    assert st["ssh_auth.present"]("lbl", ME, source="salt://keys.pub", config=conf)["changes"] == {"lbl": "New"}
    again = st["ssh_auth.present"]("lbl", ME, source="salt://keys.pub", config=conf)
    assert (again["changes"], again["comment"]) == ({}, f"The authorized host key lbl is already present for user {ME}")
    ret = st["ssh_auth.present"]("lbl", ME, source="salt://nope.pub", config=conf)
    assert (ret["result"], ret["comment"]) == (
        False,
        "Failed to add the ssh key. Source file salt://nope.pub is missing",
    )
    ret = st["ssh_auth.present"](KEY, "nosuchuser-briny", config=conf)
    assert (ret["result"], ret["comment"]) == (False, "Failed to add the ssh key. User nosuchuser-briny does not exist")
    ret = st["ssh_auth.present"]("not base64!", ME, config=conf)
    assert ret["comment"] == "Invalid public ssh key, most likely has spaces or invalid syntax"
    ret = st["ssh_auth.present"](KEY, ME, enc="bogus", config=conf)
    assert (ret["result"], ret["comment"]) == (False, "Incorrect encryption key type 'bogus'.")
    ret = st["ssh_auth.absent"]("lbl", ME, source="salt://keys.pub", config=conf)
    assert (ret["comment"], ret["changes"]) == ("Key removed", {"lbl": "Removed"})


def test_test_mode_is_salts_for_a_user_not_there_yet_and_a_missing_source(tmp_path: Path) -> None:
    """Salt 3007 in test mode: a user an earlier state may create has every key to add; a source
    that cannot be fetched has no keys, so all are 'already present' / 'already absent'."""
    dry = _states(tmp_path, test=True)
    ret = dry["ssh_auth.present"](KEY, "nosuchuser-briny")
    assert (ret["result"], ret["comment"]) == (None, f"Key {KEY} for user nosuchuser-briny is set to be added")
    ret = dry["ssh_auth.present"]("lbl", ME, source="salt://nope.pub")
    assert (ret["result"], ret["changes"]) == (True, {})
    assert ret["comment"] == "All host keys in file salt://nope.pub are already present"
    ret = dry["ssh_auth.absent"]("lbl", ME, source="salt://nope.pub")
    assert (ret["result"], ret["comment"]) == (True, "All host keys in file salt://nope.pub are already absent")
    assert not (tmp_path / "s").exists()
