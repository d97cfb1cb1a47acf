"""gem states: RubyGems version order, Salt's version requirements, and results against a scripted
gem binary (lists what ``installed`` holds, adds a name to it on install, removes it on uninstall)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from briny.common import loader


def _gem_bin(folder: Path, installed: str) -> Path:
    """A gem keeping its gems as ``name (versions)`` lines in ``installed``."""
    folder.mkdir()
    db = folder / "installed"
    db.write_text(installed)
    script = folder / "gem"
    script.write_text(
        f"""#!/bin/sh
db={db}
case "$1" in
  --version) echo 3.3.15 ;;
  list) echo '*** LOCAL GEMS ***'; echo; grep "^$2" "$db" || true ;;
  install) [ "$2" = broken ] && {{ echo "ERROR:  Could not find a valid gem 'broken'" >&2; exit 2; }}
           echo "$2 (1.0)" >> "$db"; echo "Successfully installed $2-1.0" ;;
  uninstall) grep -v "^$2 " "$db" > "$db.new"; mv "$db.new" "$db"; echo "Successfully uninstalled $2" ;;
  sources) [ "$2" = "" ] && {{ echo '*** CURRENT SOURCES ***'; echo; cat {folder}/sources 2>/dev/null; }}
           [ "$2" = --add ] && echo "$3" >> {folder}/sources
           [ "$2" = --remove ] && {{ grep -vx "$3" {folder}/sources > {folder}/s.new; mv {folder}/s.new {folder}/sources; }}
           true ;;
esac
"""
    )
    script.chmod(0o755)
    return script


def _states(test: bool = False) -> Any:
    opts = {"test": test, "id": "t"}
    return loader.states(opts, loader.minion_mods(opts))


@pytest.fixture
def gem(tmp_path: Path) -> Path:
    return _gem_bin(tmp_path / "g", "brinytoy (2.0, 1.0)\nbundler (default: 2.3.27)\n")


@pytest.mark.parametrize(
    "left,right,expected",
    [
        ("1.0", "1", 0),
        ("1.10", "1.9", 1),
        ("3.0.pre1", "3.0", -1),
        ("3.0.pre1", "2.9", 1),
        ("3.0.rc1", "3.0.beta2", 1),
        ("2.3.27", "2.3.27", 0),
        ("0.9", "1.0.a", -1),
    ],
)
def test_rubygems_version_order(left: str, right: str, expected: int) -> None:
    mod = _states().module("gem")
    assert mod._version_cmp(left, right) == expected
    assert mod._version_cmp(right, left) == -expected


@pytest.mark.parametrize(
    "version,comment",
    [
        (None, "Gem is already installed."),
        ("1.0", "Gem is already installed."),
        (">=2.0", "Installed Gem meets version requirements."),
        (">1.5", "Installed Gem meets version requirements."),
        ("<=2.0", "Installed Gem meets version requirements."),
        ("<3", "Installed Gem meets version requirements."),
        (">2.0", None),
        ("3.0", None),
        ("~> 2.0", None),  # as Salt: a requirement it does not read installs every time
    ],
)
def test_version_requirements(version: Any, comment: str | None) -> None:
    mod = _states().module("gem")
    assert mod._meets({"brinytoy": ["2.0", "1.0"]}, "brinytoy", version) == comment
    assert mod._meets({}, "brinytoy", version) is None


def test_a_default_gem_meets_a_requirement() -> None:
    mod = _states().module("gem")
    assert mod._meets({"bundler": ["default: 2.3.27"]}, "bundler", ">=2") == "Installed Gem meets version requirements."


def test_installed_and_removed(gem: Path) -> None:
    st = _states()
    ret = st["gem.installed"]("brinyother", gem_bin=str(gem))
    assert ret == {
        "name": "brinyother",
        "result": True,
        "comment": "Gem was successfully installed",
        "changes": {"brinyother": "Installed"},
    }
    assert st["gem.installed"]("brinyother", gem_bin=str(gem))["comment"] == "Gem is already installed."
    dry = _states(test=True)["gem.removed"]("brinyother", gem_bin=str(gem))
    assert (dry["result"], dry["comment"], dry["changes"]) == (None, "The gem brinyother would have been removed", {})
    ret = st["gem.removed"]("brinyother", gem_bin=str(gem))
    assert (ret["result"], ret["comment"], ret["changes"]) == (
        True,
        "Gem was successfully removed.",
        {"brinyother": "Removed"},
    )
    assert st["gem.removed"]("brinyother", gem_bin=str(gem))["comment"] == "Gem is not installed."
    dry = _states(test=True)["gem.installed"]("brinytoy", version="3.0", gem_bin=str(gem))
    assert (dry["result"], dry["comment"], dry["changes"]) == (None, "The gem brinytoy would have been installed", {})


def test_failures_fail_the_state_with_gems_error(gem: Path, tmp_path: Path) -> None:
    st = _states()
    ret = st["gem.installed"]("broken", gem_bin=str(gem))
    assert (ret["result"], ret["changes"]) == (False, {})
    assert ret["comment"] == "Could not install gem.\n\nERROR:  Could not find a valid gem 'broken'"
    ret = st["gem.removed"]("brinytoy", gem_bin=str(tmp_path / "nosuchgem"))
    assert ret["result"] is False and ret["comment"].startswith("Could not list gems.\n\nUnable to run command")


def test_arguments_the_states_do_not_take(gem: Path) -> None:
    st = _states()
    ret = st["gem.installed"]("brinytoy", gem_bin=str(gem), install_dir="/x")
    assert ret == {
        "name": "brinytoy",
        "changes": {},
        "result": False,
        "comment": "'install_dir' is an invalid keyword argument for 'gem.installed'",
    }
    ret = st["gem.removed"]("brinytoy", gem_bin=str(gem), version="1", rdoc=True)
    assert ret["comment"] == "'version' and 'rdoc' are invalid keyword arguments for 'gem.removed'"
    assert st["gem.sources_add"]("x", gem_bin="g")["comment"] == (
        "'gem_bin' is an invalid keyword argument for 'gem.sources_add'"
    )
