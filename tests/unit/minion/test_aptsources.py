"""APT sources as data (briny.minion.host.aptsources) and Salt's repo operations on them
(briny.minion.host.aptrepo), over sources files in a temporary directory."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from briny.common.exceptions import CommandExecutionError, SaltInvocationError
from briny.minion.host import aptrepo
from briny.minion.host import aptsources as src

DEBIAN_SOURCES = """\
Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""


@pytest.mark.parametrize(
    "line,expected",
    [
        (
            "deb http://h/debian stable main contrib",
            ("deb", "http://h/debian", "stable", ["main", "contrib"], {}, False),
        ),
        (
            "deb [arch=amd64,i386 signed-by=/k.gpg] http://h/ stable main",
            ("deb", "http://h/", "stable", ["main"], {"arch": "amd64,i386", "signed-by": "/k.gpg"}, False),
        ),
        ("#deb-src http://h x", ("deb-src", "http://h", "x", [], {}, True)),
        ("# deb [trusted=yes] file:/r ./ # note", ("deb", "file:/r", "./", [], {"trusted": "yes"}, True)),
    ],
)
def test_parse_line(line: str, expected: tuple[Any, ...]) -> None:
    e = src.parse_line(line)
    assert not e.invalid
    assert (e.type, e.uri, e.dist, e.comps, e.options, e.disabled) == expected
    assert e.line == line


@pytest.mark.parametrize(
    "line",
    [
        "",
        "   ",
        "# a comment",
        "deb",
        "deb http://h",
        "foo http://h stable main",
        "deb [arch=amd64 http://h stable main",
    ],
)
def test_not_an_entry(line: str) -> None:
    e = src.parse_line(line)
    assert e.invalid and e.render() == line
    with pytest.raises(SaltInvocationError, match="must be the complete repo entry"):
        src.check_repo(line)


def test_render_is_salts_layout() -> None:
    e = src.parse_line("deb  [signed-by=/k arch=amd64]   http://h  stable main  #  hi")
    assert e.comment == "  hi"
    e.disabled = True
    assert e.render() == "# deb [signed-by=/k arch=amd64] http://h stable main #  hi"
    assert e.architectures == ["amd64"] and e.signedby == "/k"
    e.architectures = []
    e.signedby = ""
    assert e.render() == "# deb http://h stable main #  hi"
    assert src.strip_uri("deb http://h/debian/ stable main") == "deb http://h/debian stable main"


def test_deb822_round_trip_and_entries() -> None:
    sf = src.SourceFile("/x/debian.sources", DEBIAN_SOURCES)
    assert sf.render() == DEBIAN_SOURCES and not sf.changed()
    entries = sf.entries()
    assert [(e.dist, e.stanza) for e in entries] == [("bookworm", 0), ("bookworm-updates", 0), ("bookworm-security", 2)]
    assert entries[0].record() == {
        "file": "/x/debian.sources",
        "comps": ["main"],
        "disabled": False,
        "dist": "bookworm",
        "type": "deb",
        "uri": "http://deb.debian.org/debian",
        "line": "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main",
        "architectures": [],
        "signedby": "/usr/share/keyrings/debian-archive-keyring.gpg",
    }
    with pytest.raises(CommandExecutionError, match="one of several in a deb822 stanza"):
        sf.update(entries[0])
    security = entries[2]
    security.disabled = True
    security.comps = ["main", "contrib"]
    sf.update(security)
    assert sf.render().endswith("Suites: bookworm-security\nComponents: main contrib\n"
                                "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\nEnabled: no\n")  # fmt: skip
    assert sf.render().startswith(DEBIAN_SOURCES.split("\n\n")[0])  # the other stanza as it was
    sf.remove(security)
    assert sf.render() == DEBIAN_SOURCES.split("\n\n")[0] + "\n"


def test_deb822_inline_key_and_continuations() -> None:
    text = "Types: deb\nURIs: https://h\nSuites: s\nComponents: main\nSigned-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n abc\n -----END PGP PUBLIC KEY BLOCK-----\n"
    sf = src.SourceFile("/x/h.sources", text)
    assert sf.render() == text
    assert sf.entries()[0].signedby == "(key in the file)"
    with pytest.raises(CommandExecutionError, match="Malformed deb822 line"):
        src.SourceFile("/x/bad.sources", "Types deb\n")


# ---------------------------------------------------------------------------
# Salt's operations on a temporary /etc/apt
# ---------------------------------------------------------------------------


@pytest.fixture
def etc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """(tmp etc/apt, host with a refresh counter)."""
    apt = tmp_path / "apt"
    (apt / "sources.list.d").mkdir(parents=True)
    monkeypatch.setattr(src, "SOURCES_LIST", str(apt / "sources.list"))
    monkeypatch.setattr(src, "SOURCES_DIR", str(apt / "sources.list.d"))
    refreshed: list[int] = []
    host = aptrepo.Host(run=lambda *a, **k: {"retcode": 1}, refresh=lambda: refreshed.append(1))
    return apt, host, refreshed


def test_mod_repo_adds_then_edits_in_place(etc) -> None:
    apt, host, refreshed = etc
    listfile = apt / "sources.list.d" / "x.list"
    listfile.write_text("# mine\ndeb  http://other   stable main\n")
    os.chmod(listfile, 0o640)
    out = aptrepo.mod_repo(host, "deb http://h/debian stable main", file=str(listfile), refresh=False)
    assert out["deb http://h/debian stable main"]["file"] == str(listfile)
    assert listfile.read_text() == "# mine\ndeb  http://other   stable main\ndeb http://h/debian stable main\n"
    assert listfile.stat().st_mode & 0o777 == 0o640 and refreshed == []
    aptrepo.mod_repo(
        host, "deb http://h/debian stable main", comps="main,contrib", architectures="amd64", file=str(listfile)
    )
    assert listfile.read_text().splitlines()[-1] == "deb [arch=amd64] http://h/debian stable main contrib"
    assert refreshed == [1]
    assert aptrepo.get_repo(host, "deb http://h/debian/ stable contrib")["comps"] == ["main", "contrib"]
    assert aptrepo.get_repo(host, "deb http://h/debian stable non-free") == {}
    assert list(aptrepo.list_repos()) == ["http://other", "http://h/debian"]


def test_mod_repo_moves_and_cleans(etc) -> None:
    apt, host, _ = etc
    a, b = apt / "sources.list.d" / "a.list", apt / "sources.list.d" / "b.list"
    a.write_text("deb http://h stable main\n")
    aptrepo.mod_repo(host, "deb http://h stable main", file=str(b), refresh=False)
    assert b.read_text() == "deb http://h stable main\n" and not a.exists()  # moved, emptied file gone
    b.write_text("deb http://other stable main\ndeb http://h stable main\n")
    aptrepo.mod_repo(host, "deb http://h stable main", file=str(b), clean_file=True, refresh=False)
    assert b.read_text() == "deb http://h stable main\n"
    aptrepo.mod_repo(host, "deb http://h stable main", file=str(apt / "sources.list.d" / "c.sources"), refresh=False)
    assert (
        apt / "sources.list.d" / "c.sources"
    ).read_text() == "Types: deb\nURIs: http://h\nSuites: stable\nComponents: main\n"
    assert not b.exists()


def test_consolidate(etc) -> None:
    apt, host, _ = etc
    (apt / "sources.list").write_text("# old\ndeb http://h stable main\n")
    (apt / "sources.list.d" / "a.list").write_text("deb http://h stable contrib\ndeb http://i x y\n")
    (apt / "sources.list.d" / "d.sources").write_text(DEBIAN_SOURCES)
    aptrepo.mod_repo(host, "deb http://j z main", consolidate=True, refresh=False)
    assert (
        apt / "sources.list"
    ).read_text() == "deb http://h stable main contrib\ndeb http://i x y\ndeb http://j z main\n"
    assert not (apt / "sources.list.d" / "a.list").exists()
    assert (apt / "sources.list.d" / "d.sources").read_text() == DEBIAN_SOURCES  # deb822 files are left alone


def test_del_repo(etc) -> None:
    apt, host, refreshed = etc
    listfile = apt / "sources.list.d" / "x.list"
    listfile.write_text("deb [arch=amd64] http://h stable main contrib\n")
    msg = aptrepo.del_repo(host, "deb [arch=amd64] http://h stable main")
    assert msg == f"Repo 'deb [arch=amd64] http://h stable main' has been removed from {listfile}.\n"
    assert listfile.read_text() == "deb [arch=amd64] http://h stable contrib\n"
    with pytest.raises(CommandExecutionError, match="doesn't exist in the sources.list"):
        aptrepo.del_repo(host, "deb http://h stable contrib")  # other architectures: Salt's rule
    msg = aptrepo.del_repo(host, "deb [arch=amd64] http://h stable contrib")
    assert msg == f"File {listfile} containing repo 'deb [arch=amd64] http://h stable contrib' has been removed."
    assert not listfile.exists() and refreshed == [1, 1]


def test_expand_repo_def_is_salts_line(etc) -> None:
    _, host, _ = etc
    out = aptrepo.expand_repo_def(host, "deb [signed-by=/k trusted=yes arch=amd64] http://h s main", disabled=True)
    assert out["line"] == "# deb [arch=amd64 signed-by=/k trusted=yes] http://h s main"
    assert out["file"] == src.SOURCES_LIST and out["signedby"] == "/k" and out["architectures"] == ["amd64"]
    assert aptrepo.expand_repo_def(host, "deb http://h s main", comps="a, b")["comps"] == ["a", "b"]


def test_ppa_outside_ubuntu(etc) -> None:
    _, host, _ = etc
    with pytest.raises(CommandExecutionError, match='cannot parse "ppa:" style repo definitions: ppa:a/b'):
        aptrepo.mod_repo(host, "ppa:a/b")
    ubuntu = aptrepo.Host(run=host.run, grains={"os": "Ubuntu", "oscodename": "noble"})
    assert aptrepo.expand_repo_def(ubuntu, "ppa:a/b")["line"] == "deb http://ppa.launchpad.net/a/b/ubuntu noble main"
