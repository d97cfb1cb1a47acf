"""The gem execution module against a scripted gem binary (a real executable in a temporary folder
that records how it was called and answers as RubyGems does): the command lines Salt 3007 builds,
the parsing of gem's output, failures, and which gem runs (gem_bin, rbenv for ``ruby``)."""

from __future__ import annotations

import logging
import os
import shlex
import stat
from pathlib import Path

import pytest

from briny.common.exceptions import CommandExecutionError
from briny.common.loader import minion_mods

LIST_OUT = """
*** LOCAL GEMS ***

brinytoy (3.0.pre1, 2.0, 1.0)
bundler (default: 2.3.27)
json (2.7.1, default: 2.6.1)
"""


def _fake_gem(folder: Path, version: str = "3.3.15", out: str = "", rc: int = 0, err: str = "") -> Path:
    """A gem that writes its arguments (one a line) to ``calls`` and answers ``--version``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "out.txt").write_text(out)
    script = folder / "gem"
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "--version" ]; then echo {version}; exit 0; fi\n'
        f'printf "%s\\n" "$@" "--" >> {folder}/calls\n'
        f"cat {folder}/out.txt\n" + (f"echo {shlex.quote(err)} >&2\n" if err else "") + f"exit {rc}\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script


def _calls(gem: Path) -> list[list[str]]:
    text = (gem.parent / "calls").read_text()
    return [c.strip("\n").split("\n") for c in text.split("--\n") if c.strip()]


@pytest.fixture
def mods():
    return minion_mods({"id": "t"}, {}, {})


def test_install_options_for_rubygems_3(mods, tmp_path):
    gem = _fake_gem(tmp_path / "g")
    mods["gem.install"](
        "a b",
        gem_bin=str(gem),
        version="1.0",
        rdoc=True,
        pre_releases=True,
        proxy="http://p:3128",
        source="file:///srv/gems/",
    )
    mods["gem.install"](["c"], gem_bin=str(gem), rdoc=True, ri=True)
    assert _calls(gem) == [
        ["install", "a", "b", "--version", "1.0", "--no-document", "--prerelease", "-p", "http://p:3128"]
        + ["--source", "file:///srv/gems/"],
        ["install", "c"],  # rdoc and ri: documentation is built
    ]


@pytest.mark.parametrize(
    "version,expected",
    [("2.7.6", ["--no-rdoc", "--no-ri", "--pre"]), ("4.0.1", ["--no-document", "--prerelease"])],
)
def test_install_options_follow_the_rubygems_version(mods, tmp_path, version, expected):
    gem = _fake_gem(tmp_path / "g", version=version)
    mods["gem.install"]("a", gem_bin=str(gem), pre_releases=True)
    assert _calls(gem) == [["install", "a", *expected]]


def test_uninstall_update_and_sources_commands(mods, tmp_path):
    gem = _fake_gem(tmp_path / "g", out="*** CURRENT SOURCES ***\n\nhttps://rubygems.org/\nfile:///srv/gems/\n")
    mods["gem.uninstall"]("a b", gem_bin=str(gem))
    mods["gem.update"]("a", gem_bin=str(gem))
    mods["gem.update_system"](gem_bin=str(gem))
    mods["gem.update_system"]("3.4.0", gem_bin=str(gem))
    mods["gem.sources_add"]("file:///x/", gem_bin=str(gem))
    mods["gem.sources_remove"]("file:///x/", gem_bin=str(gem))
    assert mods["gem.sources_list"](gem_bin=str(gem)) == ["https://rubygems.org/", "file:///srv/gems/"]
    assert _calls(gem) == [
        ["uninstall", "a", "b", "-a", "-x"],
        ["update", "a"],
        ["update", "--system"],
        ["update", "--system", "3.4.0"],
        ["sources", "--add", "file:///x/"],
        ["sources", "--remove", "file:///x/"],
        ["sources"],
    ]


def test_list_and_version_parse_gem_output(mods, tmp_path):
    gem = _fake_gem(tmp_path / "g", out=LIST_OUT)
    assert mods["gem.list"](gem_bin=str(gem)) == {
        "brinytoy": ["3.0.pre1", "2.0", "1.0"],
        "bundler": ["default: 2.3.27"],
        "json": ["2.7.1", "default: 2.6.1"],
    }
    mods["gem.list"]("brinytoy", gem_bin=str(gem))
    assert _calls(gem) == [["list"], ["list", "brinytoy"]]
    assert mods["gem.version"](gem_bin=str(gem)) == "3.3.15"
    quiet = _fake_gem(tmp_path / "q", version="")
    assert mods["gem.version"](gem_bin=str(quiet)) == {}  # Salt's answer when gem prints no version


def test_list_upgrades(mods, tmp_path, caplog):
    gem = _fake_gem(tmp_path / "g", out="brinytoy (1.0 < 2.0)\nrake (13.0.6 < 13.2.1)\nnoise here\n")
    with caplog.at_level(logging.ERROR):
        assert mods["gem.list_upgrades"](gem_bin=str(gem)) == {"brinytoy": "2.0", "rake": "13.2.1"}
    assert "Can't parse line 'noise here'" in caplog.text
    assert _calls(gem) == [["outdated"]]


def test_a_failing_gem_raises_its_error(mods, tmp_path):
    gem = _fake_gem(tmp_path / "g", rc=2, err="ERROR:  Could not find a valid gem 'nope' (>= 0) in any repository")
    with pytest.raises(CommandExecutionError, match=r"^ERROR:  Could not find a valid gem 'nope'"):
        mods["gem.install"]("nope", gem_bin=str(gem))
    silent = _fake_gem(tmp_path / "s", rc=5)
    with pytest.raises(CommandExecutionError, match="exited with status 5$"):
        mods["gem.list"](gem_bin=str(silent))
    with pytest.raises(CommandExecutionError, match=r"^Unable to run command '/no/such/gem list'"):
        mods["gem.list"](gem_bin="/no/such/gem")


def _rbenv_root(root: Path) -> Path:
    """An rbenv root: ``bin/rbenv`` records its calls, ``shims/gem`` answers with RBENV_VERSION."""
    (root / "bin").mkdir(parents=True)
    (root / "shims").mkdir()
    rbenv = root / "bin" / "rbenv"
    rbenv.write_text(f'#!/bin/sh\necho "$RBENV_ROOT $*" >> {root}/rbenv-calls\n')
    shim = root / "shims" / "gem"
    shim.write_text('#!/bin/sh\necho "mygem (${RBENV_VERSION:-none})"\n')
    for path in (rbenv, shim):
        path.chmod(0o755)
    return root


def test_ruby_runs_gem_through_rbenv(tmp_path):
    root = _rbenv_root(tmp_path / "rbenv")
    mods = minion_mods({"id": "t", "rbenv.root": str(root)}, {}, {})
    if mods["cmd.has_exec"]("/usr/local/rvm/bin/rvm"):
        pytest.skip("RVM is installed here, and comes first")
    assert mods["gem.list"](ruby="3.1.4") == {"mygem": ["3.1.4"]}
    assert mods["gem.list"]() == {"mygem": ["none"]}
    assert (root / "rbenv-calls").read_text() == f"{root} rehash\n{root} rehash\n"


def test_ruby_without_rvm_or_rbenv_is_ignored_with_a_warning(tmp_path, caplog, monkeypatch):
    mods = minion_mods({"id": "t", "rbenv.root": str(tmp_path / "none")}, {}, {})
    if mods["cmd.has_exec"]("/usr/local/rvm/bin/rvm"):
        pytest.skip("RVM is installed here")
    gem = _fake_gem(tmp_path / "g", out=LIST_OUT)
    monkeypatch.setenv("PATH", f"{gem.parent}:{os.environ.get('PATH', '')}")  # the gem on the PATH
    with caplog.at_level(logging.WARNING):
        assert "brinytoy" in mods["gem.list"](ruby="9.9.9")
    assert "Use of argument ruby found, but neither rvm or rbenv is installed" in caplog.text
    assert _calls(gem) == [["list"]]
