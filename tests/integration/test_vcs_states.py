"""git and pip states applied live on this host with briny-call --local: twice (the
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
    "corpus,case", [("vcs", "git_latest"), ("vcs", "git_present"), ("vcs", "git_config"), ("langpkg", "pip_idem")]
)
def test_second_run_changes_nothing(corpus, case, briny_call, tmp_path):
    conf, sandbox = goldenlib.build_requisite_case(tmp_path, goldenlib.GOLDEN / corpus / "cases")
    (tmp_path / "srv" / "pip_idem.sls").write_text(PIP_IDEMPOTENT.replace("@SANDBOX@", str(sandbox)))
    first = _states(briny_call(conf, ["state.sls", case], cwd=tmp_path))
    assert any(r["changes"] for r in first.values())
    disk = goldenlib.snapshot(sandbox)
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
        disk = goldenlib.snapshot(sandbox)
        third = _states(briny_call(conf, ["state.sls", case], cwd=tmp_path))
        assert not any(r["changes"] for r in third.values())
        # clone_tag (rev v1) and update_tag_then_head (the remote HEAD) share a target on
        # purpose, to show an update within one run: on a second run v1 is behind HEAD.
        assert second["clone_tag"]["comment"].startswith("Repository would be updated to 3d660f4, but this is not")
        for key in ("clone_tag", "update_tag_then_head"):
            first[key]["result"] = second[key]["result"] = False
    assert not changed
    assert {k: r["result"] for k, r in second.items()} == {k: r["result"] for k, r in first.items()}
    assert goldenlib.snapshot(sandbox) == disk
    if case == "pip_idem":
        assert (sandbox / "venv" / "lib").is_dir()
        site = next((sandbox / "venv" / "lib").glob("python3*/site-packages"))
        assert (site / "brinytoy" / "__init__.py").read_text() == "VERSION = '2.0'\n"
        assert (site / "brinyother" / "__init__.py").exists()
    tested = _states(briny_call(conf, ["state.sls", case, "test=True"], cwd=tmp_path))
    if case == "pip_idem":  # as Salt: a requirements file is never checked in test mode
        assert tested.pop("reqs")["comment"] == "Requirements file 'salt://files/reqs.txt' will be processed."
    for key, ret in tested.items():
        if first[key]["result"] is True:
            assert (ret["result"], ret["changes"]) == (True, {}), key
    assert goldenlib.snapshot(sandbox) == disk


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
