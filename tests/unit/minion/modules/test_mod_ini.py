"""The ini format (briny.minion.host.sysfiles.ini) and the ``ini`` execution module on files in a temporary folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from briny.common.exceptions import CommandExecutionError
from briny.common.loader import minion_mods
from briny.minion.host.sysfiles import ini

SAMPLE = """# head comment
topkey=1

[Journal]
#Storage=auto
Seal=no
dup=1
dup=2
  cont line

; kept
[Empty]
not an option
"""


@pytest.fixture
def salt():
    return minion_mods({"id": "t", "test": False})


def test_parse_keeps_every_line_kind() -> None:
    doc = ini.parse(SAMPLE)
    assert doc.as_dict() == {"topkey": "1", "Journal": {"Seal": "no", "dup": "2\n  cont line"}, "Empty": {}}
    kinds = [(line.key, line.comment) for line in doc.sections["Journal"].lines]
    assert kinds == [(None, True), ("Seal", False), ("dup", False), ("dup", False), (None, False), (None, True)]
    assert doc.sections["Empty"].lines[0].text == "not an option"


def test_render_is_salts_layout_and_keeps_what_it_does_not_touch() -> None:
    doc = ini.parse(SAMPLE)
    assert ini.render(doc) == (
        "# head comment\ntopkey = 1\n\n[Journal]\n#Storage=auto\nSeal = no\ndup = 1\ndup = 2\n  cont line\n\n"
        "; kept\n\n[Empty]\nnot an option\n"
    )
    assert ini.render(doc, no_spaces=True).startswith("# head comment\ntopkey=1\n")
    assert ini.written_separator(" ") == " " and ini.written_separator(":") == " : "
    assert ini.render(ini.parse("")) == ""
    assert ini.render(ini.parse("[A]\nx=1")) == "[A]\nx = 1\n"


def test_update_uncomments_and_reports_salts_changes() -> None:
    doc = ini.parse(SAMPLE)
    changes = ini.update(doc, {"new": True, "Journal": {"Storage": "persistent", "Seal": "no"}, "S": {"a": 1}})
    assert changes == {
        "new": {"before": None, "after": "True"},
        "Journal": {"Storage": {"before": None, "after": "persistent"}},
        "S": {"before": None, "after": {"a": "1"}},
    }
    text = ini.render(doc)
    assert "\n[Journal]\nStorage = persistent\nSeal = no\n" in text and "#Storage" not in text
    assert text.endswith("\n[S]\na = 1\n") and "topkey = 1\nnew = True\n" in text


def test_a_repeated_key_is_kept_until_set_then_collapsed() -> None:
    doc = ini.parse("[A]\nk=1\nk=2\nother=x\n")
    assert ini.update(doc, {"A": {"other": "y"}}) == {"A": {"other": {"before": "x", "after": "y"}}}
    assert ini.render(doc) == "[A]\nk = 1\nk = 2\nother = y\n"
    assert ini.update(doc, {"A": {"k": "2"}}) == {}
    assert ini.update(doc, {"A": {"k": "3"}}) == {"A": {"k": {"before": "2", "after": "3"}}}
    assert ini.render(doc) == "[A]\nk = 3\nother = y\n"


def test_duplicate_section_headers_merge_without_loss() -> None:
    doc = ini.parse("[A]\nx=1\n[B]\ny=2\n[A]\nz=3\n")
    assert doc.as_dict() == {"A": {"x": "1", "z": "3"}, "B": {"y": "2"}}
    assert ini.render(doc) == "[A]\nx = 1\nz = 3\n\n[B]\ny = 2\n"


def test_bad_shapes_are_refused() -> None:
    doc = ini.parse("[A]\nx=1\n")
    with pytest.raises(CommandExecutionError, match="one level of sections"):
        ini.update(doc, {"A": {"B": {"c": 1}}})
    with pytest.raises(CommandExecutionError, match="'A' is a section"):
        ini.update(doc, {"A": "scalar"})
    with pytest.raises(CommandExecutionError, match="must be a dictionary"):
        ini.update(doc, ["A"])  # type: ignore[arg-type]


def test_execution_functions(salt, tmp_path: Path) -> None:
    path = tmp_path / "x.ini"
    path.write_text("top=1\n[A]\nx = 1\n# c\n[B]\ny = 2\n")
    os.chmod(path, 0o640)
    f = str(path)
    assert salt["ini.get_option"](f, "A", "x") == "1"
    assert salt["ini.get_option"](f, None, "top") == "1"
    assert salt["ini.get_option"](f, "Nope", "x") is None
    assert salt["ini.get_section"](f, "A") == {"x": "1"}
    assert salt["ini.get_section"](f, "Nope") == {}
    assert salt["ini.get_ini"](f) == {"top": "1", "A": {"x": "1"}, "B": {"y": "2"}}
    assert salt["ini.set_option"](f, {"A": {"x": 2}}) == {"A": {"x": {"before": "1", "after": "2"}}}
    assert path.stat().st_mode & 0o777 == 0o640
    assert salt["ini.remove_option"](f, "A", "x") == "2"
    assert salt["ini.remove_option"](f, "A", "x") is None
    assert salt["ini.remove_option"](f, "Nope", "top") is None  # a missing section removes nothing
    assert salt["ini.remove_option"](f, None, "top") == "1"
    assert salt["ini.remove_section"](f, "B") == {"y": "2"}
    assert salt["ini.remove_section"](f, "B") is None
    assert path.read_text() == "[A]\n# c\n"


def test_nothing_is_written_without_a_change(salt, tmp_path: Path) -> None:
    path = tmp_path / "x.ini"
    path.write_text("[A]\nx=1\n")
    before = path.stat().st_mtime_ns, path.stat().st_ino
    assert salt["ini.set_option"](str(path), {"A": {"x": "1"}}) == {}
    assert salt["ini.remove_option"](str(path), "A", "nope") is None
    assert (path.stat().st_mtime_ns, path.stat().st_ino) == before and path.read_text() == "[A]\nx=1\n"
    missing = tmp_path / "new.ini"
    assert salt["ini.set_option"](str(missing), {}) == {} and missing.read_text() == ""
    assert salt["ini.remove_option"](str(tmp_path / "gone.ini"), "A", "x") is None
    assert not (tmp_path / "gone.ini").exists()


def test_unreadable_and_unwritable_files_fail_with_salts_words(salt, tmp_path: Path) -> None:
    folder = tmp_path / "dir.ini"
    folder.mkdir()
    with pytest.raises(CommandExecutionError, match=r"^Unable to open file '.*dir.ini'. Exception: \[Errno 21\]"):
        salt["ini.get_ini"](str(folder))
    with pytest.raises(CommandExecutionError, match=r"^Unable to write file '.*/no/x.ini'. Exception: \[Errno 2\]"):
        salt["ini.set_option"](str(tmp_path / "no" / "x.ini"), {"a": 1})
    binary = tmp_path / "bin.ini"
    binary.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(CommandExecutionError, match="Unable to open file"):
        salt["ini.get_ini"](str(binary))
