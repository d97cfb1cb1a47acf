"""The pure helpers behind the file execution module (briny.minion.host.fileops)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from briny.common.exceptions import CommandExecutionError, HashError, SaltInvocationError
from briny.minion.host.fileops import diff, lines, perms, tree

BASE = "a=1\nb=2\nd=4\n"


# -- diff -------------------------------------------------------------------------
def test_unified_diff_looks_like_salts() -> None:
    assert diff.unified("old\ncontent\n", "plain\ncontent\n") == "--- \n+++ \n@@ -1,2 +1,2 @@\n-old\n+plain\n content\n"
    assert diff.unified(b"\x00\x01old", b"\x00new") == "Replace binary file"
    assert diff.unified("", "") == ""


@pytest.mark.parametrize(
    "given,want",
    [
        ("sha256=" + "a" * 64, {"hash_type": "sha256", "hsum": "a" * 64}),
        ("MD5=" + "B" * 32, {"hash_type": "md5", "hsum": "b" * 32}),
        ("c" * 40, {"hash_type": "sha1", "hsum": "c" * 40}),
        ("/some/file", None),
        ("salt://x/SHA256SUMS", None),
    ],
)
def test_parse_hash(given: str, want: dict | None) -> None:
    assert diff.parse_hash(given) == want


def test_parse_hash_errors() -> None:
    with pytest.raises(
        HashError,
        match=r"^Invalid hash type 'foo'\. Supported hash types are: sha512, "
        r"sha384, sha256, sha224, sha1, md5\. Either remove",
    ):
        diff.parse_hash("foo=abc")
    with pytest.raises(HashError, match="format is invalid"):
        diff.parse_hash("abc")


def test_hash_from_text() -> None:
    text = f"{'1' * 64}  other.txt\n{'2' * 64}  plain.txt\n"
    assert diff.hash_from_text(text, "/h", "plain.txt") == {"hash_type": "sha256", "hsum": "2" * 64}
    assert diff.hash_from_text(f"{'3' * 32}\n", "/h", "x") == {"hash_type": "md5", "hsum": "3" * 32}
    with pytest.raises(HashError):
        diff.hash_from_text("nothing here\n", "/h", "x")
    with pytest.raises(HashError):
        diff.hash_from_text(text, "/h", "third.txt")


def test_dict_diff() -> None:
    assert diff.dict_diff({"old": 1}, {"old": 1, "new": 1}) == {"new": {"new": 1, "old": "<_null_>"}}
    assert diff.dict_diff({"a": 1}, {"a": 1}) == {}
    # nested mappings are diffed key by key (Salt's recursive_diff), lists compared whole
    assert diff.dict_diff({"n": {"a": 1, "b": [1, 2]}, "k": 1}, {"n": {"a": 1, "b": [3], "c": 4}, "k": 1}) == {
        "n": {"b": {"new": [3], "old": [1, 2]}, "c": {"new": 4, "old": "<_null_>"}}
    }


# -- perms --------------------------------------------------------------------------
def test_modes() -> None:
    assert perms.normalize_mode(644) == "0644"
    assert perms.normalize_mode("0o750") == "0750"
    assert perms.normalize_mode(None) is None
    with pytest.raises(SaltInvocationError):
        perms.normalize_mode(999)
    assert perms.dir_mode_for("0640") == "0750"
    assert perms.dir_mode_for("0600") == "0700"


def test_owner_lookup_and_changes(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_text("x")
    os.chmod(f, 0o644)
    assert (
        perms.missing_owner("nosuchuser_briny", "nosuchgroup_briny")
        == "User nosuchuser_briny is not available Group nosuchgroup_briny is not available"
    )
    assert perms.missing_owner("root", "root") == ""
    assert perms.perm_changes(str(f), None, None, "0600") == {"mode": "0600"}
    perms.apply_perms(str(f), {"mode": "0600"})
    assert perms.mode_of(str(f)) == "0600"
    assert perms.primary_group("root") == "root"


# -- lines ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,want",
    [
        ({"mode": "ensure", "after": "^b=.*", "content": "c=3"}, "a=1\nb=2\nc=3\nd=4\n"),
        ({"mode": "ensure", "before": "^b=.*", "content": "a2=1"}, "a=1\na2=1\nb=2\nd=4\n"),
        ({"mode": "replace", "match": "^b=.*", "content": "b=22"}, "a=1\nb=22\nd=4\n"),
        ({"mode": "delete", "match": "^a=.*"}, "b=2\nd=4\n"),
        ({"mode": "insert", "location": "start", "content": "# header"}, "# header\na=1\nb=2\nd=4\n"),
        ({"mode": "insert", "location": "end", "content": "z=26"}, "a=1\nb=2\nd=4\nz=26\n"),
        ({"mode": "insert", "after": "^a=.*", "content": "a1=11"}, "a=1\na1=11\nb=2\nd=4\n"),
        ({"mode": "insert", "before": "^d=.*", "content": "c=3"}, "a=1\nb=2\nc=3\nd=4\n"),
    ],
)
def test_line_modes_and_idempotence(kwargs: dict, want: str) -> None:
    content = kwargs.pop("content", None)
    once = lines.line(BASE, content, **kwargs)
    assert once == want
    assert lines.line(once, content, **kwargs) == once


def test_line_indent_and_errors() -> None:
    assert lines.line("x:\n  a: 1\n", "b: 2", mode="ensure", after="  a: 1") == "x:\n  a: 1\n  b: 2\n"
    with pytest.raises(CommandExecutionError, match='Unknown mode: "frob"'):
        lines.line(BASE, "x", mode="frob")
    with pytest.raises(CommandExecutionError, match=r"Content can only be empty if mode is \['delete'\]"):
        lines.line(BASE, None, mode="insert")
    with pytest.raises(CommandExecutionError):
        lines.line(BASE, "x", mode="ensure", after="^nomatch")


def test_replace() -> None:
    assert lines.replace("host=a\nport=80\n", "^port=.*", "port=8080") == ("host=a\nport=8080\n", True)
    assert lines.replace("x x x\nx\n", "x", "y", count=1)[0] == "y x x\nx\n"
    assert lines.replace("PORT=1\n", "^PORT=.*", "port=9", flags=["IGNORECASE", "MULTILINE"])[0] == "port=9\n"
    assert lines.replace("old=1\n", "^new=.*", "new=1", append_if_not_found=True)[0] == "old=1\nnew=1\n"
    assert lines.replace("old=1\n", "^new=.*", "new=1", prepend_if_not_found=True)[0] == "new=1\nold=1\n"
    assert (
        lines.replace("old=1", "^new=.*", "new=1", append_if_not_found=True, not_found_content="new=custom")[0]
        == "old=1\nnew=custom\n"
    )
    assert lines.replace("host=web\n", r"^(host)=(.*)$", r"\1=new-\2")[0] == "host=new-web\n"
    with pytest.raises(CommandExecutionError, match="unterminated character set"):
        lines.replace("a", "([a", "b")


def test_blockreplace() -> None:
    text = "top\n# START\nold\n# END\nbottom\n"
    assert (
        lines.blockreplace(text, "# START", "# END", "line1\nline2\n") == "top\n# START\nline1\nline2\n# END\nbottom\n"
    )
    assert lines.blockreplace("a\nb", "# S", "# E", "x", append_if_not_found=True) == "a\nb\n# S\nx\n# E\n"
    assert lines.blockreplace("a\n", "# S", "# E", "x", prepend_if_not_found=True) == "# S\nx\n# E\na\n"
    assert lines.blockreplace("a\n", "# S", "# E", None, append_if_not_found=True) == "a\n# S\n\n# E\n"
    with pytest.raises(CommandExecutionError, match="Markers were not found"):
        lines.blockreplace("a\n", "# S", "# E", "x")


def test_comment_uncomment_keyvalue() -> None:
    assert lines.comment("host=a\nport=80\n", "^port=", ";") == "host=a\n;port=80\n"
    assert lines.uncomment("#port=80\n# port=81\nhost\n", "port=") == "port=80\n port=81\nhost\n"
    new, d, n = lines.keyvalue("host=a\nport=80\n# c\n", {"port": "8080", "host": "web"})
    assert (new, d, n) == ("host=web\nport=8080\n# c\n", ["- host=a", "+ host=web", "- port=80", "+ port=8080"], 2)
    new, d, n = lines.keyvalue("a b\n", {"newkey": "newval"}, " ", append_if_not_found=True)
    assert (new, d, n) == ("a b\nnewkey newval\n", ["- <EOF>", "+ newkey newval", "+ <EOF>"], 1)
    new, d, n = lines.keyvalue("#PermitRootLogin yes\n", {"PermitRootLogin": "no"}, " ", uncomment_char="#")
    assert new == "PermitRootLogin no\n" and n == 1


# -- tree -----------------------------------------------------------------------------
def test_clean_list_keeps_excluded_and_their_folders(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    for rel in ("f1.keep", "s/f2", "s/f3.keep", "x.txt"):
        (tmp_path / rel).write_text(rel)
    (tmp_path / "gone").mkdir()
    (tmp_path / "gone" / "y").write_text("y")
    got = tree.clean_list(str(tmp_path), set(), "*.keep")
    rel = [(os.path.relpath(p, tmp_path), top) for p, top in got]
    assert sorted(rel) == [("gone", True), ("gone/y", False), ("s/f2", True), ("x.txt", True)]
    # in the directory's own order, as Salt lists them: os.walk's, in each folder files then folders
    walked = [os.path.relpath(os.path.join(r, n), tmp_path) for r, d, f in os.walk(tmp_path) for n in f + d]
    assert [p for p, _top in rel] == [p for p in walked if p in dict(rel)]


def test_backup_is_named_like_salts(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_text("old\n")
    dest = tree.backup(str(f), str(tmp_path / "cache"))
    assert dest is not None and dest.startswith(str(tmp_path / "cache" / "file_backup") + str(tmp_path))
    assert Path(dest).read_text() == "old\n"
    assert os.path.basename(dest).startswith("f.txt_")
    assert tree.matches("E@\\.conf$", "a/b.conf") and tree.matches("*.txt", "a/b.txt")


def test_makedirs_folder_mode_follows_the_file_mode():
    from briny.minion.host.fileops.managed import dir_mode_for

    assert dir_mode_for("0600") == "700" and dir_mode_for(644) == "755" and dir_mode_for("0640") == "750"
    assert dir_mode_for(None) is None
