"""gem states applied live with briny-call --local, never touching the network or the host's gems:
a throwaway user's gems with the gem on the PATH (``user``, installed --local into the user's
home), a Ruby of rbenv (``ruby``, through Debian's rbenv on an rbenv root the test makes), and
bad input (a gem that does not exist, a missing gem file, a broken or missing gem binary, an
unknown ruby, an argument gem.installed does not take). The golden cases run twice and in test
mode in test_vcs_states.py; the gems come from tests/golden/langpkg/cases/lib/mkgem.sh."""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

import goldenlib

pytestmark = [pytest.mark.host, pytest.mark.skipif(shutil.which("gem") is None, reason="needs ruby's gem")]
CASES = goldenlib.GOLDEN / "langpkg" / "cases"
MKGEM = CASES / "lib" / "mkgem.sh"


def _states(proc: subprocess.CompletedProcess) -> dict:
    data = goldenlib.parse_output(proc.stdout, proc.stderr)
    assert isinstance(data, dict) and "unparsed" not in data, proc.stdout + proc.stderr
    return {v["__id__"]: v for v in data.values()}


def _tree(tmp_path: Path, sls: str, extra_conf: str = "") -> Path:
    tree, conf = tmp_path / "srv", tmp_path / "etc"
    tree.mkdir()
    conf.mkdir()
    (conf / "minion").write_text(
        f"file_client: local\nfile_roots: {{base: [{tree}]}}\nroot_dir: {tmp_path}/root\nid: t\n{extra_conf}"
    )
    (tree / "gems.sls").write_text(textwrap.dedent(sls))
    return conf


def _gems(sandbox: Path) -> Path:
    subprocess.run(["/bin/sh", str(MKGEM), str(sandbox)], check=True, capture_output=True, timeout=120)
    return sandbox / "gems"


@pytest.fixture
def gem_user(tmp_path):
    """A throwaway user whose ~/.gemrc installs into the user's home, --local, from the .gem files there."""
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        pytest.skip("needs root and useradd")
    name = "brinygem" + secrets.token_hex(3)
    subprocess.run(["useradd", "-m", name], check=True, capture_output=True, timeout=60)
    try:
        pw = pwd.getpwnam(name)
        home = Path(pw.pw_dir)
        gems = _gems(tmp_path / "build")
        for gem in ("brinytoy-1.0.gem", "brinyother-1.0.gem"):
            shutil.copy(gems / "pkgs" / gem, home / gem)
        shutil.copytree(gems / "repo", home / "repo")
        (home / ".gemrc").write_text("---\ngem: --user-install\ninstall: --local\n:sources:\n- file:///nonexistent/\n")
        subprocess.run(["chown", "-R", f"{name}:", str(home)], check=True, timeout=60)
        yield name, home
    finally:
        subprocess.run(["userdel", "-r", name], capture_output=True, timeout=60)


def test_user_gems_with_the_gem_on_the_path(briny_call, tmp_path, gem_user):
    user, home = gem_user
    host_specs = sorted(Path("/var/lib/gems").rglob("brinytoy*")) if Path("/var/lib/gems").is_dir() else []
    repo = f"file://{home}/repo/"
    conf = _tree(
        tmp_path,
        f"""\
        toy:
          gem.installed:
            - name: brinytoy
            - user: {user}
        other_gone:
          gem.removed:
            - name: brinyother
            - user: {user}
        source:
          gem.sources_add:
            - name: {repo}
            - user: {user}
        no_source:
          gem.sources_remove:
            - name: file:///nonexistent/
            - user: {user}
        """,
    )
    dry = _states(briny_call(conf, ["state.sls", "gems", "test=True"], cwd=tmp_path))
    assert (dry["toy"]["result"], dry["toy"]["comment"]) == (None, "The gem brinytoy would have been installed")
    assert dry["source"]["comment"] == f"The gem source {repo} would have been added."
    assert dry["no_source"]["comment"] == "The gem source would have been removed."
    assert dry["other_gone"]["comment"] == "Gem is not installed."
    assert not (home / ".local" / "share" / "gem").exists()
    run = _states(briny_call(conf, ["state.sls", "gems"], cwd=tmp_path))
    assert run["toy"]["changes"] == {"brinytoy": "Installed"}
    assert run["source"]["changes"] == {repo: "Installed"}
    assert run["no_source"]["changes"] == {"file:///nonexistent/": "Removed"}
    spec = next((home / ".local" / "share" / "gem").glob("ruby/*/specifications/brinytoy-1.0.gemspec"))
    assert spec.stat().st_uid == pwd.getpwnam(user).pw_uid
    gemrc = (home / ".gemrc").read_text()
    assert repo in gemrc and "nonexistent" not in gemrc
    again = _states(briny_call(conf, ["state.sls", "gems"], cwd=tmp_path))
    assert {k: (r["result"], r["changes"]) for k, r in again.items()} == {k: (True, {}) for k in run}
    assert again["toy"]["comment"] == "Gem is already installed."
    assert again["source"]["comment"] == "Gem source is already added."
    assert again["no_source"]["comment"] == "Gem source is already removed."
    # the other gem, installed behind the state's back, is removed
    subprocess.run(["su", user, "-c", "cd && gem install --silent --no-document brinyother"], check=True, timeout=120)
    gone = _states(briny_call(conf, ["state.sls", "gems"], cwd=tmp_path))["other_gone"]
    assert (gone["comment"], gone["changes"]) == ("Gem was successfully removed.", {"brinyother": "Removed"})
    assert not list((home / ".local" / "share" / "gem").glob("ruby/*/specifications/brinyother-*"))
    now = sorted(Path("/var/lib/gems").rglob("brinytoy*")) if Path("/var/lib/gems").is_dir() else []
    assert now == host_specs  # the host's gems: untouched


@pytest.fixture
def rbenv_root(tmp_path):
    """An rbenv root with one Ruby, ``briny``: the host's ruby, whose gem keeps its gems in the sandbox."""
    rbenv = shutil.which("rbenv")
    if rbenv is None:
        pytest.skip("needs Debian's rbenv (tests/run.sh installs it)")
    gems = _gems(tmp_path / "sandbox")
    root = tmp_path / "rbenv"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "rbenv").symlink_to(rbenv)
    version = root / "versions" / "briny" / "bin"
    version.mkdir(parents=True)
    (version / "ruby").symlink_to(shutil.which("ruby") or "/usr/bin/ruby")
    (version / "gem").symlink_to(gems / "bin" / "gem")
    subprocess.run([str(root / "bin" / "rbenv"), "rehash"], env=dict(os.environ, RBENV_ROOT=str(root)), check=True)
    return root, gems


def test_ruby_of_rbenv(briny_call, tmp_path, rbenv_root):
    root, gems = rbenv_root
    conf = _tree(
        tmp_path,
        """\
        toy:
          gem.installed:
            - name: brinytoy
            - version: '2.0'
            - ruby: briny
        unknown_ruby:
          gem.installed:
            - name: brinytoy
            - ruby: nosuchruby
        """,
        f"rbenv.root: {root}\n",
    )
    dry = _states(briny_call(conf, ["state.sls", "gems", "test=True"], cwd=tmp_path))
    assert (dry["toy"]["result"], dry["toy"]["changes"]) == (None, {})
    assert not (gems / "home" / "specifications" / "brinytoy-2.0.gemspec").exists()
    run = _states(briny_call(conf, ["state.sls", "gems"], cwd=tmp_path))
    assert (run["toy"]["result"], run["toy"]["changes"]) == (True, {"brinytoy": "Installed"})
    assert (gems / "home" / "specifications" / "brinytoy-2.0.gemspec").exists()
    bad = run["unknown_ruby"]
    assert (bad["result"], bad["changes"]) == (False, {})
    assert bad["comment"] == (
        "Could not list gems.\n\nrbenv: version `nosuchruby' is not installed (set by RBENV_VERSION environment variable)"
    )
    again = _states(briny_call(conf, ["state.sls", "gems"], cwd=tmp_path))
    assert (again["toy"]["comment"], again["toy"]["changes"]) == ("Gem is already installed.", {})


def test_bad_input_fails_that_state_only(briny_call, tmp_path):
    """The golden error cases (Salt: tracebacks, or the whole run aborted), briny's results."""
    conf, sandbox = goldenlib.build_requisite_case(tmp_path, CASES)
    for test in (False, True):
        args = ["state.sls", "gem_errors,gem_install_dir"] + (["test=True"] if test else [])
        ret = _states(briny_call(conf, args, cwd=tmp_path))
        assert not any(r["changes"] for r in ret.values())
        broken = ret["err_broken_gem_bin"]
        assert (broken["result"], broken["comment"]) == (
            False,
            "Could not list gems.\n\ngem: this gem binary is broken",
        )
        missing = ret["err_no_gem_bin"]
        assert missing["result"] is False
        assert missing["comment"] == (
            f"Could not list gems.\n\nUnable to run command '{sandbox}/gems/bin/nosuchgem list brinytoy': "
            f"[Errno 2] No such file or directory: '{sandbox}/gems/bin/nosuchgem'"
        )
        assert ret["err_install_dir"]["comment"] == "'install_dir' is an invalid keyword argument for 'gem.installed'"
        if test:  # as Salt: test mode does not look for the gem it would install
            assert ret["err_missing_gem"]["comment"] == "The gem brinynothing would have been installed"
            continue
        assert ret["err_missing_gem"]["comment"] == (
            "Could not install gem.\n\nERROR:  Could not find a valid gem 'brinynothing' (>= 0) in any repository"
        )
        assert ret["err_missing_gem_file"]["comment"] == (
            f"Could not install gem.\n\nERROR:  Could not find a valid gem '{sandbox}/gems/pkgs/brinynothing-1.0.gem'"
            " (>= 0) in any repository"
        )
    assert not list((sandbox / "gems" / "home" / "specifications").glob("brinyother*"))
