"""git, pip and gem states applied live on this host with briny-call --local: twice (the
second run changes nothing) and in test mode (nothing changes on disk), on
the golden cases' trees (tests/golden/vcs/cases) and on a user's global
~/.gitconfig (a throwaway user, removed afterwards)."""

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

pytestmark = [pytest.mark.host, pytest.mark.skipif(shutil.which("git") is None, reason="needs git")]


def _states(proc: subprocess.CompletedProcess) -> dict:
    data = goldenlib.parse_output(proc.stdout, proc.stderr)
    assert isinstance(data, dict) and "unparsed" not in data, proc.stdout + proc.stderr
    return {v["__id__"]: v for v in data.values()}


def _snapshot(sandbox) -> dict:
    """The sandbox's files, but for ORIG_HEAD: git.detached's hard_reset (done on every run, as
    Salt does) records there the commit it reset from, the first run's branch and then its own."""
    return {k: v for k, v in goldenlib.snapshot(sandbox).items() if not k.endswith(".git/ORIG_HEAD")}


PIP_IDEMPOTENT = """\
{%- set sb = '@SANDBOX@' %}
{%- do salt['cmd.run']('/usr/bin/python3 ' ~ salt['cp.cache_file']('salt://lib/mkwheel.py') ~ ' ' ~ sb) %}
{%- set src = {'no_index': True, 'find_links': sb ~ '/wheels', 'bin_env': sb ~ '/venv',
               'env_vars': {'PIP_CONFIG_FILE': '/dev/null', 'PIP_FIND_LINKS': sb ~ '/wheels'}} %}
toy:
  pip.installed:
    - pkgs: ['brinytoy>=2.0']
    {%- for k, v in src.items() %}
    - {{ k }}: {{ v|json }}
    {%- endfor %}
reqs:
  pip.installed:
    - requirements: salt://files/reqs.txt
    {%- for k, v in src.items() %}
    - {{ k }}: {{ v|json }}
    {%- endfor %}
"""


@pytest.mark.parametrize(
    "corpus,case",
    [
        ("vcs", "git_latest"),
        ("vcs", "git_present"),
        ("vcs", "git_config"),
        ("vcs", "git_detached"),
        ("vcs", "git_detached_resolve"),
        ("langpkg", "pip_idem"),
        ("langpkg", "gem_states"),
    ],
)
def test_second_run_changes_nothing(corpus, case, briny_call, tmp_path):
    conf, sandbox = goldenlib.build_requisite_case(tmp_path, goldenlib.GOLDEN / corpus / "cases")
    (tmp_path / "srv" / "pip_idem.sls").write_text(PIP_IDEMPOTENT.replace("@SANDBOX@", str(sandbox)))
    first = _states(briny_call(conf, ["state.sls", case], cwd=tmp_path))
    assert any(r["changes"] for r in first.values())
    disk = _snapshot(sandbox)
    second = _states(briny_call(conf, ["state.sls", case], cwd=tmp_path))
    changed = {k: r["changes"] for k, r in second.items() if r["changes"]}
    if case == "git_latest":
        # As Salt (checked on the reference): a shallow clone gets the remote's tags on
        # its first update, and says so once.
        assert changed.pop("clone_depth") == {"new_tags": ["v1", "v1light"]}
        assert second["clone_depth"]["comment"] == (
            f"Repository {sandbox}/shallow is up-to-date\n\nChanges made: file://{sandbox}/remote.git was fetched, "
            "resulting in updated refs"
        )
        disk = _snapshot(sandbox)
        third = _states(briny_call(conf, ["state.sls", case], cwd=tmp_path))
        assert not any(r["changes"] for r in third.values())
        # clone_tag (rev v1) and update_tag_then_head (the remote HEAD) share a target on
        # purpose, to show an update within one run: on a second run v1 is behind HEAD.
        assert second["clone_tag"]["comment"].startswith("Repository would be updated to 3d660f4, but this is not")
        for key in ("clone_tag", "update_tag_then_head"):
            first[key]["result"] = second[key]["result"] = False
    assert not changed
    assert {k: r["result"] for k, r in second.items()} == {k: r["result"] for k, r in first.items()}
    assert _snapshot(sandbox) == disk
    if case == "pip_idem":
        assert (sandbox / "venv" / "lib").is_dir()
        site = next((sandbox / "venv" / "lib").glob("python3*/site-packages"))
        assert (site / "brinytoy" / "__init__.py").read_text() == "VERSION = '2.0'\n"
        assert (site / "brinyother" / "__init__.py").exists()
    if case == "gem_states":  # in the sandbox's GEM_HOME (lib/mkgem.sh): what the states left
        specs = sorted(p.name for p in (sandbox / "gems" / "home" / "specifications").iterdir())
        assert specs == ["brinyother-1.0.gemspec", "brinytoy-1.0.gemspec", "brinytoy-2.0.gemspec"] + [
            "brinytoy-3.0.pre1.gemspec"
        ]
        assert (sandbox / "gems" / "home" / "doc" / "brinyother-1.0" / "ri").is_dir()  # rdoc and ri: True
        assert not (sandbox / "gems" / "home" / "doc" / "brinytoy-1.0").exists()
    tested = _states(briny_call(conf, ["state.sls", case, "test=True"], cwd=tmp_path))
    if case == "pip_idem":  # as Salt: a requirements file is never checked in test mode
        assert tested.pop("reqs")["comment"] == "Requirements file 'salt://files/reqs.txt' will be processed."
    for key, ret in tested.items():
        if first[key]["result"] is not True:
            continue
        if case.startswith("git_detached") and ret["result"] is None:
            # as Salt: a rev that is not a SHA1 already in the checkout needs a fetch first
            assert (
                ret["comment"]
                == f"Repository remote {'upstream' if key == 'other_remote_name' else 'origin'} would be fetched"
            )
            assert ret["changes"] == {}, key
        else:
            assert (ret["result"], ret["changes"]) == (True, {}), key
    assert _snapshot(sandbox) == disk


def test_latest_follows_new_commits_and_checks_out_files(briny_call, tmp_path):
    conf, sandbox = goldenlib.build_requisite_case(tmp_path, goldenlib.GOLDEN / "vcs" / "cases")
    _states(briny_call(conf, ["state.sls", "git_latest"], cwd=tmp_path))
    assert (sandbox / "head" / "a.txt").read_text() == "two\n"
    assert (sandbox / "dev" / "d.txt").read_text() == "dev\n"
    assert (sandbox / "tagged" / "a.txt").read_text() == "two\n"  # fast-forwarded from v1
    work = tmp_path / "push"
    env = dict(
        os.environ,
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@e",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@e",
    )
    for cmd in (
        ["git", "clone", "-q", str(sandbox / "remote.git"), str(work)],
        ["sh", "-c", f"echo three > {work}/a.txt"],
        ["git", "-C", str(work), "commit", "-qam", "three"],
        ["git", "-C", str(work), "push", "-q", "origin", "main"],
    ):
        subprocess.run(cmd, check=True, env=env, capture_output=True, timeout=60)
    new = subprocess.run(
        ["git", "-C", str(work), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    dry = _states(briny_call(conf, ["state.sls", "git_latest", "test=True"], cwd=tmp_path))["clone_head"]
    assert dry["result"] is None and dry["changes"]["revision"]["new"] == new
    assert dry["comment"].startswith("Remote 'origin' would be fetched. Repository would be updated from ")
    assert (sandbox / "head" / "a.txt").read_text() == "two\n"
    ret = _states(briny_call(conf, ["state.sls", "git_latest"], cwd=tmp_path))["clone_head"]
    assert ret["result"] is True and ret["changes"]["revision"]["new"] == new
    assert (
        ret["comment"]
        == f"file://{sandbox}/remote.git was fetched, resulting in updated refs. Repository was fast-forwarded to remote HEAD ({new[:7]})."
    )
    assert (sandbox / "head" / "a.txt").read_text() == "three\n"


def _git(*args: str, env: dict | None = None) -> str:
    return subprocess.run(
        ["git", *args], capture_output=True, text=True, check=True, timeout=60, env=env
    ).stdout.strip()


def test_detached_checks_out_commits_and_follows_the_remote(briny_call, tmp_path):
    conf, sandbox = goldenlib.build_requisite_case(tmp_path, goldenlib.GOLDEN / "vcs" / "cases")
    first = _states(briny_call(conf, ["state.sls", "git_detached"], cwd=tmp_path))
    dev = _git("-C", str(sandbox / "remote.git"), "rev-parse", "dev")
    # HEAD detached at the branch's commit, its files checked out, nothing left uncommitted
    head = sandbox / "d_branch"
    assert _git("-C", str(head), "rev-parse", "HEAD") == dev
    assert (
        subprocess.run(["git", "-C", str(head), "symbolic-ref", "-q", "HEAD"], timeout=60, check=False).returncode == 1
    )
    assert (head / "d.txt").read_text() == "dev\n" and _git("-C", str(head), "status", "--porcelain") == ""
    assert (sandbox / "dirty" / "a.txt").read_text() == "one\n"  # hard_reset dropped the local change
    assert _git("-C", str(sandbox / "d_upstream"), "remote") == "upstream"
    assert _git("-C", str(sandbox / "moved"), "remote", "get-url", "origin") == f"file://{sandbox}/remote.git"
    assert not (sandbox / "forced" / "gone.txt").exists() and (sandbox / "forced" / "a.txt").exists()
    assert (sandbox / "plain" / "keep.txt").read_text() == "x\n"  # not a repository, left alone
    assert first["err_bad_rev"]["comment"] == "Revision 'nosuchbranch' does not exist"
    # a new commit on the remote's dev branch: test mode says it would fetch, a run checks it out
    work = tmp_path / "push"
    env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e")
    env.update(GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@e")
    _git("clone", "-q", "-b", "dev", str(sandbox / "remote.git"), str(work), env=env)
    (work / "d.txt").write_text("dev2\n")
    _git("-C", str(work), "commit", "-qam", "dev2", env=env)
    _git("-C", str(work), "push", "-q", "origin", "dev", env=env)
    new = _git("-C", str(work), "rev-parse", "HEAD")
    dry = _states(briny_call(conf, ["state.sls", "git_detached", "test=True"], cwd=tmp_path))["branch_fresh"]
    assert (dry["result"], dry["comment"], dry["changes"]) == (None, "Repository remote origin would be fetched", {})
    assert _git("-C", str(head), "rev-parse", "HEAD") == dev
    ret = _states(briny_call(conf, ["state.sls", "git_detached"], cwd=tmp_path))["branch_fresh"]
    assert ret["result"] is True and ret["changes"] == {"HEAD": {"old": dev, "new": new}}
    assert ret["comment"] == (
        f"Remote origin was fetched, resulting in updated refs. Commit ID {new} was checked out at {head}."
    )
    assert (head / "d.txt").read_text() == "dev2\n"


def test_detached_resolves_annotated_tags_and_short_sha1s(briny_call, tmp_path):
    """Where briny differs from Salt on purpose (git_detached_resolve is a KNOWN_DIFFERENCE)."""
    conf, sandbox = goldenlib.build_requisite_case(tmp_path, goldenlib.GOLDEN / "vcs" / "cases")
    ret = _states(briny_call(conf, ["state.sls", "git_detached_resolve"], cwd=tmp_path))
    remote = str(sandbox / "remote.git")  # made when the SLS renders
    c1 = _git("-C", remote, "rev-parse", "v1^{commit}")
    assert _git("-C", remote, "rev-parse", "v1") != c1  # v1 is an annotated tag: a tag object of its own
    assert ret["annotated_tag"]["changes"] == {"HEAD": {"old": None, "new": c1}}
    assert f"Commit ID {c1} was checked out at {sandbox}/d_annotated." in ret["annotated_tag"]["comment"]
    assert _git("-C", str(sandbox / "d_annotated"), "rev-parse", "HEAD") == c1
    assert (ret["short_sha_there"]["result"], ret["short_sha_there"]["changes"]) == (True, {})
    assert ret["short_sha_there"]["comment"] == "Already checked out at correct revision"
    bad = ret["err_bad_sha"]
    assert (bad["result"], bad["comment"]) == (
        False,
        "Revision '0123456789abcdef0123456789abcdef01234567' does not exist",
    )
    again = _states(briny_call(conf, ["state.sls", "git_detached_resolve", "test=True"], cwd=tmp_path))
    assert again["annotated_tag"]["comment"] == "Repository remote origin would be fetched"
    assert again["short_sha_there"]["comment"] == "Already checked out at correct revision"


@pytest.fixture
def throwaway_user():
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        pytest.skip("needs root and useradd")
    name = "brinygit" + secrets.token_hex(3)
    subprocess.run(["useradd", "-m", name], check=True, capture_output=True, timeout=60)
    try:
        yield name
    finally:
        subprocess.run(["userdel", "-r", name], capture_output=True, timeout=60)


def test_global_config_as_user(briny_call, tmp_path, throwaway_user):
    """The users-formula's form: global keys of a user, set and unset (a regex, all values)."""
    user = throwaway_user
    tree, conf = tmp_path / "srv", tmp_path / "etc"
    tree.mkdir()
    conf.mkdir()
    (conf / "minion").write_text(
        f"file_client: local\nfile_roots: {{base: [{tree}]}}\nroot_dir: {tmp_path}/root\nid: t\n"
    )
    (tree / "cfg.sls").write_text(
        textwrap.dedent(
            f"""\
            name:
              git.config_set:
                - name: user.name
                - value: B User
                - user: {user}
                - global: True
            insteadof:
              git.config_set:
                - name: url.https://.insteadOf
                - value: "git://"
                - user: {user}
                - global: True
            colors:
              git.config_unset:
                - name: 'color\\..+'
                - user: {user}
                - global: True
                - all: True
            ghost:
              git.config_set:
                - name: user.name
                - value: x
                - user: nosuchuser{secrets.token_hex(3)}
                - global: True
            """
        )
    )
    home = pwd.getpwnam(user).pw_dir
    with open(f"{home}/.gitconfig", "w") as fh:
        fh.write("[color]\n\tui = auto\n\tdiff = always\n[push]\n\tdefault = simple\n")
    dry = _states(briny_call(conf, ["state.sls", "cfg", "test=True"], cwd=tmp_path))
    assert dry["name"]["comment"] == "Global key 'user.name' would be added as 'B User'"
    assert dry["colors"]["changes"] == {"color.diff": ["always"], "color.ui": ["auto"]}
    assert dry["ghost"]["result"] is False and dry["ghost"]["comment"].startswith("User 'nosuchuser")
    assert dry["ghost"]["comment"].endswith("' is not available")
    run = _states(briny_call(conf, ["state.sls", "cfg"], cwd=tmp_path))
    assert run["name"]["changes"] == {"user.name": {"old": None, "new": ["B User"]}}
    assert run["insteadof"]["comment"] == "Global key 'url.https://.insteadOf' was added as 'git://'"
    assert (run["colors"]["result"], run["colors"]["comment"]) == (True, "Value(s) successfully unset")
    text = Path(f"{home}/.gitconfig").read_text()
    assert "B User" in text and "color" not in text and "default = simple" in text
    assert os.stat(f"{home}/.gitconfig").st_uid == pwd.getpwnam(user).pw_uid
    again = _states(briny_call(conf, ["state.sls", "cfg"], cwd=tmp_path))
    assert again["name"]["comment"] == "Global key 'user.name' is already set to 'B User'"
    assert again["colors"]["comment"] == "No matching keys are set"
    assert not any(r["changes"] for r in again.values())
