"""``file`` states through ``briny-call --local``: a real tree applied twice, disk and results checked.

The expected comments and changes are those Salt 3007.17 gave for the same
tree (run side by side with ``dev/saltref.sh``); the places where briny
deliberately differs are documented in ``states/file.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

NOTE = "\nNote: No changes made, actual changes may\nbe different due to other states."
PLAIN = "plain\ncontent\n"

SLS = """\
#!yaml
tmpl:
  file.managed:
    - name: @S@/tmpl.conf
    - source: salt://files/tmpl.j2
    - template: jinja
    - context: {foo: bar}
    - defaults: {foo: default, baz: qux}
    - mode: 640
    - user: nobody
    - group: nogroup
hashed:
  file.managed:
    - name: @S@/hashed.txt
    - source: @S@/src/plain.txt
    - source_hash: sha256=@SHA@
changed:
  file.managed:
    - name: @S@/exist.txt
    - source: salt://files/plain.txt
missing_src:
  file.managed:
    - name: @S@/ms.txt
    - source: salt://files/nope.txt
bad_user:
  file.managed:
    - name: @S@/bu.txt
    - contents: x
    - user: nosuchuser_briny
isdir:
  file.managed:
    - name: @S@/adir
    - contents: x
confdir:
  file.directory:
    - name: @S@/tree1
    - user: nobody
    - group: nogroup
    - file_mode: 640
    - recurse: [user, group, mode]
copied:
  file.recurse:
    - name: @S@/dest
    - source: salt://files/rtree
    - clean: True
ensure_line:
  file.line:
    - name: @S@/lines
    - mode: ensure
    - after: "^b=.*"
    - content: "c=3"
port:
  file.replace:
    - name: @S@/lines
    - pattern: "^d=.*"
    - repl: "d=5"
    - require: [{file: ensure_line}]
block:
  file.blockreplace:
    - name: @S@/lines
    - marker_start: "# START"
    - marker_end: "# END"
    - content: "managed"
    - append_if_not_found: True
    - require: [{file: port}]
link:
  file.symlink:
    - name: @S@/link
    - target: @S@/tmpl.conf
kv:
  file.keyvalue:
    - name: @S@/kv
    - key_values: {port: "8080"}
data:
  file.serialize:
    - name: @S@/data.json
    - dataset: {b: 2, a: [1, 2]}
    - formatter: json
"""


def _prepare(tmp_path: Path) -> tuple[Path, Path]:
    sandbox, tree, conf = tmp_path / "sb", tmp_path / "srv", tmp_path / "etc"
    for d in (sandbox / "src", sandbox / "adir", sandbox / "tree1" / "sub", tree / "files" / "rtree" / "sub", conf):
        d.mkdir(parents=True)
    sha = hashlib.sha256(PLAIN.encode()).hexdigest()
    (tree / "t.sls").write_text(SLS.replace("@S@", str(sandbox)).replace("@SHA@", sha))
    (tree / "files" / "tmpl.j2").write_text("foo={{ foo }}\nbaz={{ baz }}\nid={{ grains['id'] }}\n")
    (tree / "files" / "plain.txt").write_text(PLAIN)
    (tree / "files" / "rtree" / "a.txt").write_text("one\n")
    (tree / "files" / "rtree" / "sub" / "b.txt").write_text("two\n")
    (sandbox / "src" / "plain.txt").write_text(PLAIN)
    (sandbox / "exist.txt").write_text("old\ncontent\n")
    (sandbox / "tree1" / "f1").write_text("a\n")
    (sandbox / "tree1" / "sub" / "f2").write_text("b\n")
    (sandbox / "lines").write_text("a=1\nb=2\nd=4\n")
    (sandbox / "kv").write_text("host=a\nport=80\n")
    (sandbox / "dest").mkdir()
    (sandbox / "dest" / "stale").write_text("x\n")
    (conf / "minion").write_text(
        textwrap.dedent(f"""\
        id: golden
        file_client: local
        root_dir: {tmp_path / "root"}
        cachedir: {tmp_path / "cache"}
        file_roots:
          base: [{tree}]
        """)
    )
    return conf, sandbox


def _apply(conf: Path, *extra: str) -> dict[str, dict]:
    cmd = [
        sys.executable,
        "-m",
        "briny.minion.call",
        "--local",
        "-c",
        str(conf),
        "state.sls",
        "t",
        *extra,
        "--out=json",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.stdout.startswith("{"), proc.stderr[-3000:]
    data = json.loads(proc.stdout)["local"]
    return {v["__id__"]: v for v in data.values()}


def _mode(p: Path) -> str:
    return f"{stat.S_IMODE(p.lstat().st_mode):04o}"


FAILING = {"missing_src", "bad_user", "isdir"}


@pytest.mark.skipif(os.geteuid() != 0, reason="owners need root")
def test_file_tree_twice_like_salt(tmp_path: Path) -> None:
    conf, sb = _prepare(tmp_path)
    dry = _apply(conf, "test=True")
    assert (dry["tmpl"]["result"], dry["tmpl"]["comment"], dry["tmpl"]["changes"]) == (
        None,
        f"The file {sb}/tmpl.conf is set to be changed" + NOTE,
        {"newfile": f"{sb}/tmpl.conf"},
    )
    assert dry["changed"]["changes"] == {"diff": "--- \n+++ \n@@ -1,2 +1,2 @@\n-old\n+plain\n content\n"}
    assert dry["missing_src"]["comment"] == "Source file salt://files/nope.txt not found in saltenv 'base'"
    assert dry["ensure_line"]["comment"] == "Changes would be made"
    assert dry["kv"]["comment"] == (
        f"File {sb}/kv is set to be changed (1 lines)\nPredicted diff:\n\r\t\t- port=80\n\r\t\t+ port=8080\n"
    )
    assert not (sb / "tmpl.conf").exists() and (sb / "lines").read_text() == "a=1\nb=2\nd=4\n"

    live = _apply(conf)
    want = {
        "tmpl": (
            True,
            f"File {sb}/tmpl.conf updated",
            {"diff": "New file", "group": "nogroup", "mode": "0640", "user": "nobody"},
        ),
        "hashed": (True, f"File {sb}/hashed.txt updated", {"diff": "New file", "mode": "0644"}),
        "changed": (
            True,
            f"File {sb}/exist.txt updated",
            {"diff": "--- \n+++ \n@@ -1,2 +1,2 @@\n-old\n+plain\n content\n"},
        ),
        "missing_src": (
            False,
            "Unable to manage file: Source file salt://files/nope.txt not found in saltenv 'base'",
            {},
        ),
        "bad_user": (False, "User nosuchuser_briny is not available ", {}),
        "isdir": (False, f"Specified target {sb}/adir is a directory", {}),
        "ensure_line": (True, "Changes were made", {"diff": "--- \n+++ \n@@ -1,3 +1,4 @@\n a=1\n b=2\n+c=3\n d=4\n"}),
        "port": (True, "Changes were made", {"diff": "--- \n+++ \n@@ -1,4 +1,4 @@\n a=1\n b=2\n c=3\n-d=4\n+d=5\n"}),
        "link": (True, f"Created new symlink {sb}/link -> {sb}/tmpl.conf", {"new": f"{sb}/link"}),
        "kv": (True, "Changed 1 lines", {"diff": "- port=80\n+ port=8080\n"}),
        "data": (True, f"File {sb}/data.json updated", {"diff": "New file"}),
    }
    for sid, expected in want.items():
        assert (live[sid]["result"], live[sid]["comment"], live[sid]["changes"]) == expected, sid
    assert live["block"]["comment"] == "Changes were made"
    assert live["confdir"]["comment"] == f"Directory {sb}/tree1 updated"
    assert live["confdir"]["changes"][f"{sb}/tree1/f1"] == {"group": "nogroup", "mode": "0640", "user": "nobody"}
    assert live["copied"]["comment"] == f"Recursively updated {sb}/dest"
    assert live["copied"]["changes"]["removed"] == [f"{sb}/dest/stale"]

    # the disk
    t = sb / "tmpl.conf"
    assert t.read_text() == "foo=bar\nbaz=qux\nid=golden\n"
    assert (t.owner(), t.group(), _mode(t)) == ("nobody", "nogroup", "0640")
    assert (sb / "exist.txt").read_text() == PLAIN and (sb / "hashed.txt").read_text() == PLAIN
    assert (sb / "lines").read_text() == "a=1\nb=2\nc=3\nd=5\n# START\nmanaged\n# END\n"
    assert os.readlink(sb / "link") == str(t)
    assert (sb / "kv").read_text() == "host=a\nport=8080\n"
    assert (sb / "data.json").read_text() == '{\n  "a": [\n    1,\n    2\n  ],\n  "b": 2\n}\n'
    assert sorted(str(p.relative_to(sb / "dest")) for p in (sb / "dest").rglob("*")) == ["a.txt", "sub", "sub/b.txt"]
    f2 = sb / "tree1" / "sub" / "f2"
    assert (f2.owner(), f2.group(), _mode(f2)) == ("nobody", "nogroup", "0640")
    assert not (sb / "ms.txt").exists() and not (sb / "bu.txt").exists()

    for args in ((), ("test=True",)):
        again = _apply(conf, *args)
        for sid, ret in again.items():
            if sid == "bad_user" and args:  # Salt does not look the user up in test mode
                assert ret["result"] is None
                continue
            assert ret["changes"] == {}, (args, sid, ret)
            assert ret["result"] is (sid not in FAILING), (args, sid, ret)
    assert again["tmpl"]["comment"] == f"The file {sb}/tmpl.conf is in the correct state"
    assert again["link"]["comment"] == f"The symlink {sb}/link is present"
    assert again["copied"]["comment"] == f"The directory {sb}/dest is in the correct state"
