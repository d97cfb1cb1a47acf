"""The ``file`` read functions formulas call (check_hash, contains*, readdir, access, ...), with
Salt 3007.17's answers for the same files (checked with ``dev/saltref.sh``)."""

from __future__ import annotations

import hashlib
import os

import pytest

from briny.common.exceptions import SaltInvocationError
from briny.common.loader import minion_mods


@pytest.fixture
def salt():
    return minion_mods({"id": "m1"}, {}, {})


@pytest.fixture
def text(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("hello world\nfoo = bar\n  # comment\n")
    return path


def test_check_hash(salt, text):
    data = text.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    md5 = hashlib.md5(data).hexdigest()
    assert salt["file.check_hash"](str(text), sha) is True
    assert salt["file.check_hash"](str(text), f"md5:{md5}") is True
    assert salt["file.check_hash"](str(text), f"md5={md5}") is True
    assert salt["file.check_hash"](str(text), "md5:00") is False
    with pytest.raises(SaltInvocationError, match=r"Hash abc \(length: 3\) could not be matched .* md5 \(32\), sha1"):
        salt["file.check_hash"](str(text), "abc")
    with pytest.raises(SaltInvocationError, match="hash must be a string"):
        salt["file.check_hash"](str(text), 5)


def test_contains(salt, text, tmp_path):
    assert salt["file.contains"](str(text), "  foo = ") is True  # the text is stripped
    assert salt["file.contains"](str(text), "nope") is False
    assert salt["file.contains"](str(tmp_path / "missing"), "x") is False
    assert salt["file.contains_regex"](str(text), "^# comm", lchar=" ") is True
    assert salt["file.contains_regex"](str(text), "^# comm") is False
    assert salt["file.contains_glob"](str(text), "*foo*") is True
    assert salt["file.contains_glob"](str(text), "foo*") is False


def test_readdir_access_and_kinds(salt, text, tmp_path):
    (tmp_path / "sub").mkdir()
    assert sorted(salt["file.readdir"](str(tmp_path))) == sorted([".", "..", "f.txt", "sub"])
    with pytest.raises(SaltInvocationError, match="Dir path must be absolute."):
        salt["file.readdir"]("relative")
    with pytest.raises(SaltInvocationError, match="A valid directory was not specified"):
        salt["file.readdir"](str(text))
    assert salt["file.access"](str(text), "r") is True
    assert salt["file.access"](str(tmp_path / "missing"), "f") is False
    assert salt["file.access"](str(text), os.R_OK) is True
    with pytest.raises(SaltInvocationError, match="Invalid mode specified."):
        salt["file.access"](str(text), "q")
    assert salt["file.path_exists_glob"](str(tmp_path / "f.t?t")) is True
    assert salt["file.path_exists_glob"](str(tmp_path / "z*")) is False
    assert salt["file.get_sum"](str(text), "md5") == hashlib.md5(text.read_bytes()).hexdigest()
    assert salt["file.get_sum"](str(tmp_path / "missing")) == "File not found"
    os.mkfifo(tmp_path / "pipe")
    assert salt["file.is_fifo"](str(tmp_path / "pipe")) is True
    assert salt["file.is_fifo"](str(text)) is False
    assert salt["file.is_chrdev"]("/dev/null") is True
    assert salt["file.is_blkdev"](str(tmp_path / "missing")) is False
    assert salt["file.lstat"](str(text))["st_size"] == text.stat().st_size
    assert salt["file.file_exists"](str(text)) is True
