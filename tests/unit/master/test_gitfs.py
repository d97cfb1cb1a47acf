"""gitfs: remotes fetched into the master's cache and served as saltenvs (master/gitfs.py)."""

from __future__ import annotations

import os
import pwd
from pathlib import Path
from typing import Any

import pytest

from briny.common.exceptions import FileServerError
from briny.master import gitremotes
from briny.master.fileserver import FileServer, symlinks
from briny.master.runners import RunnerContext
from briny.master.runners import fileserver as runner
from tests.unit.master.gitrepos import SSHD, commit, git, git_daemon, git_http, keypair, make_repo, silent_server, sshd


def opts_for(tmp: Path, remotes: list[Any], **extra: Any) -> dict[str, Any]:
    (tmp / "roots").mkdir(exist_ok=True)
    return {
        "__role": "master",
        "cachedir": str(tmp / "cache"),
        "file_roots": {"base": [str(tmp / "roots")]},
        "fileserver_backend": ["gitfs", "roots"],
        "gitfs_remotes": remotes,
        "gitfs_timeout": 5,
        **extra,
    }


def served(fs: FileServer, path: str, env: str = "base") -> str:
    found = fs.resolve(path, env)
    assert found is not None, f"{path} not served in {env}"
    return Path(found[1]).read_text()


def test_branches_and_tags_are_saltenvs_from_a_path_and_file_url(tmp_path: Path) -> None:
    bare, work = make_repo(tmp_path, "a", {"top.sls": "base: {}\n", "web/init.sls": "a: 1\n"})
    commit(work, {"dev.sls": "d\n"}, branch="dev")
    git("tag", "v1", cwd=work)
    git("push", "-q", "origin", "v1", cwd=work)
    bare2, _ = make_repo(tmp_path, "b", {"other.sls": "b\n"})
    fs = FileServer(opts_for(tmp_path, [str(bare), f"file://{bare2}"]))
    report = fs.update_backends()
    assert report["gitfs"]["errors"] == []
    assert fs.envs() == ["base", "dev", "v1"]
    assert fs.file_list("base")["files"] == ["other.sls", "top.sls", "web/init.sls"]
    assert "dev.sls" in fs.file_list("dev")["files"]
    assert served(fs, "web/init.sls") == "a: 1\n"
    # nothing new: up to date, and the same trees are served
    again = fs.update_backends()["gitfs"]
    assert again["changed"] is False and set(again["remotes"].values()) == {"up to date"}


def test_backend_order_first_match_wins(tmp_path: Path) -> None:
    bare, _ = make_repo(tmp_path, "a", {"same.sls": "from git\n"})
    opts = opts_for(tmp_path, [str(bare)])
    (tmp_path / "roots" / "same.sls").write_text("from roots\n")
    fs = FileServer(opts)
    fs.update_backends()
    assert served(fs, "same.sls") == "from git\n"
    fs2 = FileServer({**opts, "fileserver_backend": ["roots", "gitfs"]})
    assert served(fs2, "same.sls") == "from roots\n"


def test_root_mountpoint_base_and_saltenv_mapping(tmp_path: Path) -> None:
    bare, work = make_repo(tmp_path, "a", {"salt/web.sls": "w\n", "README": "r\n"}, branch="main")
    commit(work, {"salt/dev.sls": "d\n"}, branch="develop")
    remote = {
        str(bare): [
            {"root": "salt"},
            {"mountpoint": "salt://formulas/web"},
            {"base": "main"},
            {"saltenv": [{"qa": [{"ref": "develop"}, {"mountpoint": ""}]}]},
        ]
    }
    fs = FileServer(opts_for(tmp_path, [remote], fileserver_backend=["gitfs"]))
    fs.update_backends()
    assert fs.envs() == ["base", "develop", "qa"]
    assert fs.file_list("base")["files"] == ["formulas/web/web.sls"]
    assert fs.file_list("qa")["files"] == ["dev.sls", "web.sls"]


def test_whitelist_blacklist_and_disable_mapping(tmp_path: Path) -> None:
    bare, work = make_repo(tmp_path, "a", {"a.sls": "a\n"})
    for branch in ("dev", "feature-x", "qa"):
        commit(work, {f"{branch}.sls": "x\n"}, branch=branch)
    opts = opts_for(
        tmp_path,
        [str(bare)],
        gitfs_saltenv_whitelist=["base", "dev", "feature-*"],
        gitfs_saltenv_blacklist=["feature-x"],
    )
    fs = FileServer(opts)
    fs.update_backends()
    assert fs.envs() == ["base", "dev"]
    fs2 = FileServer(
        {**opts, "gitfs_saltenv_whitelist": [], "gitfs_saltenv_blacklist": [], "gitfs_disable_saltenv_mapping": True}
    )
    fs2.update_backends()
    assert fs2.envs() == ["base"]


def test_fallback_serves_envs_the_remote_lacks(tmp_path: Path) -> None:
    one, work = make_repo(tmp_path, "one", {"a.sls": "a\n"})
    commit(work, {"b.sls": "b\n"}, branch="dev")
    two, _ = make_repo(tmp_path, "two", {"common.sls": "c\n"})
    fs = FileServer(opts_for(tmp_path, [str(one), {str(two): [{"fallback": "master"}]}], fileserver_backend=["gitfs"]))
    fs.update_backends()
    assert "common.sls" in fs.file_list("dev")["files"]


def test_git_daemon_transport_and_a_new_commit(tmp_path: Path) -> None:
    bare, work = make_repo(tmp_path, "served", {"v.sls": "one\n"})
    with git_daemon(tmp_path) as port:
        fs = FileServer(opts_for(tmp_path, [f"git://127.0.0.1:{port}/served.git"]))
        assert fs.update_backends()["gitfs"]["errors"] == []
        assert served(fs, "v.sls") == "one\n"
        commit(work, {"v.sls": "two\n"})
        assert fs.update_backends()["gitfs"]["changed"] is True
        assert served(fs, "v.sls") == "two\n"


def test_force_push_and_vanished_branch_are_followed(tmp_path: Path) -> None:
    bare, work = make_repo(tmp_path, "a", {"v.sls": "one\n"})
    commit(work, {"d.sls": "d\n"}, branch="dev")
    fs = FileServer(opts_for(tmp_path, [str(bare)]))
    fs.update_backends()
    assert "dev" in fs.envs()
    git("checkout", "-q", "master", cwd=work)
    git("reset", "-q", "--hard", "HEAD", cwd=work)
    (work / "v.sls").write_text("rewritten\n")
    git("commit", "-q", "-a", "--amend", "-m", "rewritten", cwd=work)
    git("push", "-q", "-f", "origin", "master", cwd=work)
    git("push", "-q", "origin", ":dev", cwd=work)
    assert fs.update_backends()["gitfs"]["errors"] == []
    assert served(fs, "v.sls") == "rewritten\n"
    assert "dev" not in fs.envs()


def test_unreachable_remote_is_named_and_others_keep_serving(tmp_path: Path) -> None:
    good, _ = make_repo(tmp_path, "good", {"g.sls": "g\n"})
    flaky, _ = make_repo(tmp_path, "flaky", {"f.sls": "f\n"})
    remotes = [str(good), {str(flaky): [{"name": "flaky"}]}, {str(tmp_path / "nope.git"): [{"name": "missing"}]}]
    fs = FileServer(opts_for(tmp_path, remotes))
    report = fs.update_backends()["gitfs"]
    assert report["remotes"]["missing"].startswith("error: gitfs remote missing: fetch:")
    assert report["remotes"]["flaky"] == "updated"
    assert fs.file_list("base")["files"] == ["f.sls", "g.sls"]
    # the flaky remote goes away: named, and its last good fetch is still served
    os.rename(flaky, tmp_path / "gone.git")
    report = fs.update_backends()["gitfs"]
    assert report["remotes"]["flaky"].startswith("error:")
    assert served(fs, "f.sls") == "f\n"


def test_a_hanging_server_is_killed_at_the_time_limit(tmp_path: Path) -> None:
    good, _ = make_repo(tmp_path, "good", {"g.sls": "g\n"})
    with silent_server() as port:
        fs = FileServer(
            opts_for(tmp_path, [{f"git://127.0.0.1:{port}/x.git": [{"name": "hang"}]}, str(good)], gitfs_timeout=1)
        )
        report = fs.update_backends()["gitfs"]
    assert "no answer within 1 s" in report["remotes"]["hang"]
    assert served(fs, "g.sls") == "g\n"


def test_symlink_leaving_the_repo_is_never_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("master's own\n")
    bare, work = make_repo(tmp_path, "a", {"real.sls": "r\n"})
    commit(work, {}, symlinks={"evil.sls": str(secret), "inside.sls": "real.sls", "up.sls": "../../../../secret.txt"})
    fs = FileServer(opts_for(tmp_path, [str(bare)], fileserver_followsymlinks=True))
    fs.update_backends()
    files = fs.file_list("base")["files"]
    assert "evil.sls" not in files and "up.sls" not in files and "inside.sls" in files
    with pytest.raises(FileServerError, match="leaves its file root"):
        fs.file_hash("evil.sls", "base")
    assert served(fs, "inside.sls") == "r\n"
    assert symlinks(fs, "base")["evil.sls"] == str(secret)


def test_dotdot_and_unknown_env_are_refused(tmp_path: Path) -> None:
    bare, _ = make_repo(tmp_path, "a", {"a.sls": "a\n"})
    fs = FileServer(opts_for(tmp_path, [str(bare)]))
    fs.update_backends()
    for bad in ("../state.json", "..%2fstate.json", "/etc/passwd"):
        with pytest.raises(FileServerError):
            fs.resolve(bad, "base")
    with pytest.raises(FileServerError, match="not served by"):
        fs.resolve("a.sls", "nope")


def test_mountpoint_clash_first_remote_wins(tmp_path: Path) -> None:
    one, _ = make_repo(tmp_path, "one", {"x.sls": "one\n"})
    two, _ = make_repo(tmp_path, "two", {"x.sls": "two\n", "y.sls": "y\n"})
    remotes = [{str(one): [{"mountpoint": "m"}]}, {str(two): [{"mountpoint": "m"}]}]
    fs = FileServer(opts_for(tmp_path, remotes, fileserver_backend=["gitfs"]))
    fs.update_backends()
    assert fs.file_list("base")["files"] == ["m/x.sls", "m/y.sls"]
    assert served(fs, "m/x.sls") == "one\n"


def test_bad_remote_config_is_named(tmp_path: Path) -> None:
    remotes, errors = gitremotes.parse(
        {
            "gitfs_remotes": [
                {"https://h/a.git": [{"bogus": 1}]},
                {"http://h/b.git": [{"user": "u"}, {"password": "p"}]},
                {"https://h/c.git": [{"root": "../up"}]},
                {"https://h/d.git": [{"name": "d"}]},
                {"https://h/e.git": [{"name": "d"}]},
            ]
        }
    )
    assert [r.label for r in remotes] == ["d"]
    text = "\n".join(errors)
    assert "unknown parameter(s) bogus" in text
    assert "insecure_auth" in text
    assert "leaves the repository" in text
    assert "same name" in text


def test_a_name_leaving_the_cache_is_refused(tmp_path: Path) -> None:
    """``.``, ``..`` or a path as a remote's name would make its cache folder the master's
    cachedir (clear_cache would remove it all): refused by name, the other remotes serve."""
    bare, _ = make_repo(tmp_path, "a", {"a.sls": "a\n"})
    bad = [{str(bare): [{"name": n}]} for n in (".", "..", "a/../b", "-x", ".hidden")]
    fs = FileServer(opts_for(tmp_path, [*bad, {str(bare): [{"name": "good"}]}]))
    gitfs = fs.backends[0]
    assert [r.label for r in gitfs.remotes] == ["good"]
    assert (
        gitfs.errors
        == [
            f"gitfs remote {bare}: 'name' must be 1 to 64 letters, digits, '_', '.', '-', starting with a letter or digit"
        ]
        * 5
    )
    (tmp_path / "cache" / "keep").mkdir(parents=True)
    assert fs.update_backends()["gitfs"]["remotes"] == {"good": "updated"}
    assert served(fs, "a.sls") == "a\n"
    gitfs.clear_cache()
    assert (tmp_path / "cache" / "keep").is_dir()


class _Guarded(dict):
    """A dict asserting its owner's lock is held whenever it is read or written."""

    def __init__(self, lock: Any) -> None:
        super().__init__()
        self.lock = lock

    def get(self, *args: Any) -> Any:
        assert self.lock.locked(), "read without the lock"
        return super().get(*args)

    def __setitem__(self, key: Any, value: Any) -> None:
        assert self.lock.locked(), "written without the lock"
        super().__setitem__(key, value)

    def clear(self) -> None:
        assert self.lock.locked(), "cleared without the lock"
        super().clear()


def test_update_times_are_read_and_written_under_the_lock(tmp_path: Path) -> None:
    """due() runs on the master's loop, update() on a worker: the update times are shared."""
    bare, _ = make_repo(tmp_path, "a", {"a.sls": "a\n"})
    fs = FileServer(opts_for(tmp_path, [str(bare)]))
    gitfs = fs.backends[0]
    gitfs._last = _Guarded(gitfs._lock)
    assert gitfs.due() == gitfs.remotes
    gitfs.update()
    assert gitfs.due() == []
    gitfs.clear_cache()
    assert gitfs.due() == gitfs.remotes


def test_a_url_is_never_read_as_an_option(tmp_path: Path) -> None:
    """A remote URL starting with '-' reaches git as a repository, never as an option of fetch."""
    marker = tmp_path / "ran"
    bare, _ = make_repo(tmp_path, "a", {"a.sls": "a\n"})
    url = f"--upload-pack=touch {marker};git-upload-pack {bare}"
    fs = FileServer(opts_for(tmp_path, [{url: [{"name": "dash"}]}, str(bare)]))
    report = fs.update_backends()["gitfs"]
    assert report["remotes"]["dash"].startswith("error: gitfs remote dash: fetch:")
    assert f"strange pathname {url!r} blocked" in report["remotes"]["dash"]
    assert not marker.exists()
    assert served(fs, "a.sls") == "a\n"


def test_a_malformed_remote_is_named_without_its_password() -> None:
    remotes, errors = gitremotes.parse(
        {
            "gitfs_remotes": [
                {"https://u:s3cret@h/a.git": [{"password": "s3cret"}], "https://h/b.git": [{"password": "s3cret"}]},
                ["https://u:s3cret@h/c.git"],
                "https://h/d.git",
            ]
        }
    )
    assert [r.label for r in remotes] == ["https://h/d.git"]
    assert errors == [
        "gitfs remote #1 (a mapping of 2 URLs) is neither a URL nor 'URL: [params]'",
        "gitfs remote #2 (a list) is neither a URL nor 'URL: [params]'",
    ]


def test_runners_update_envs_lists_and_clear_cache(tmp_path: Path) -> None:
    bare, _ = make_repo(tmp_path, "a", {"a/b.sls": "b\n"})
    ctx = RunnerContext(opts_for(tmp_path, [str(bare), {str(tmp_path / "nope.git"): [{"name": "nope"}]}]))
    report = runner.update(ctx)
    assert report["gitfs"]["remotes"]["nope"].startswith("error:") and ctx.context["retcode"] == 1
    assert runner.envs(ctx) == ["base"]
    assert runner.file_list(ctx, backend="gitfs") == ["a/b.sls"]
    assert runner.dir_list(ctx) == ["a"]
    assert runner.clear_cache(ctx)["gitfs"] == [str(bare), "nope"]
    assert runner.envs(ctx, backend="gitfs") == []
    assert not (tmp_path / "cache" / "gitfs" / "nope").exists()


def test_http_with_credentials_and_refused_ones(tmp_path: Path) -> None:
    make_repo(tmp_path, "web", {"h.sls": "over http\n"})
    with git_http(tmp_path, "deploy", "s3cret") as port:
        url = f"http://127.0.0.1:{port}/web.git"
        good = {url: [{"name": "good"}, {"user": "deploy"}, {"password": "s3cret"}, {"insecure_auth": True}]}
        bad = {url + "/": [{"name": "bad"}, {"user": "deploy"}, {"password": "wrong"}, {"insecure_auth": True}]}
        fs = FileServer(opts_for(tmp_path, [good, bad], fileserver_backend=["gitfs"]))
        report = fs.update_backends()["gitfs"]
    assert report["remotes"]["good"] == "updated"
    assert report["remotes"]["bad"].startswith("error: gitfs remote bad: fetch:")
    assert "s3cret" not in str(report) and "wrong" not in str(report)
    assert served(fs, "h.sls") == "over http\n"
    # the password never lands in the cache
    for dirpath, _dirs, files in os.walk(tmp_path / "cache"):
        for name in files:
            assert b"s3cret" not in (Path(dirpath) / name).read_bytes()


@pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists(SSHD), reason="needs root and openssh-server (tests/run.sh)"
)
def test_ssh_with_a_deploy_key_and_a_passphrase(tmp_path: Path) -> None:
    bare, _ = make_repo(tmp_path, "s", {"s.sls": "over ssh\n"})
    keys = tmp_path / "keys"
    keys.mkdir()
    deploy = keypair(keys, "deploy")
    locked = keypair(keys, "locked", passphrase="open sesame")
    stranger = keypair(keys, "stranger")
    user = pwd.getpwuid(os.geteuid()).pw_name
    with sshd(tmp_path / "sshd", [deploy, locked]) as port:
        url = f"ssh://{user}@127.0.0.1:{port}{bare}"
        remotes = [
            {url: [{"name": "deploy"}, {"privkey": str(deploy)}, {"pubkey": f"{deploy}.pub"}]},
            {url + "/": [{"name": "locked"}, {"privkey": str(locked)}, {"passphrase": "open sesame"}]},
            {url + "//": [{"name": "stranger"}, {"privkey": str(stranger)}]},
        ]
        fs = FileServer(opts_for(tmp_path, remotes, fileserver_backend=["gitfs"], gitfs_timeout=20))
        report = fs.update_backends()["gitfs"]
    assert report["remotes"]["deploy"] == "updated", report
    assert report["remotes"]["locked"] == "updated", report
    assert report["remotes"]["stranger"].startswith("error: gitfs remote stranger: fetch:"), report
    assert served(fs, "s.sls") == "over ssh\n"


def test_the_master_loop_updates_on_the_interval_and_fires_the_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from briny.master import gitfsloop
    from tests.waiting import until

    bare, work = make_repo(tmp_path, "a", {"v.sls": "one\n"})
    fs = FileServer(opts_for(tmp_path, [str(bare)], gitfs_update_interval=0.2, fileserver_events=True))
    fired: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(gitfsloop, "TICK", 0.05)

    async def scenario() -> None:
        task = asyncio.ensure_future(gitfsloop.run(fs.opts, fs, lambda tag, data: fired.append((tag, data))))
        try:
            await until(lambda: fired, 10, "the first update's event")
            assert fired[0] == ("salt/fileserver/gitfs/update", {"changed": True, "backend": "gitfs"})
            await asyncio.get_running_loop().run_in_executor(None, lambda: commit(work, {"v.sls": "two\n"}))
            await until(lambda: len([f for f in fired if f[1]["changed"]]) >= 2, 10, "the new commit fetched")
        finally:
            task.cancel()

    asyncio.run(scenario())
    assert served(fs, "v.sls") == "two\n"


def test_a_new_commit_is_written_from_the_previous_tree(tmp_path: Path) -> None:
    bare, work = make_repo(tmp_path, "a", {"keep.sls": "k\n", "edit.sls": "1\n", "gone.sls": "g\n", "was_file": "f\n"})
    remote = {str(bare): [{"mountpoint": "m"}]}
    fs = FileServer(opts_for(tmp_path, [remote], fileserver_backend=["gitfs"]))
    fs.update_backends()
    first = fs.resolve("m/keep.sls", "base")
    assert first is not None
    old_keep = Path(first[1])
    (work / "gone.sls").unlink()
    (work / "was_file").unlink()
    commit(
        work, {"edit.sls": "2\n", "new/dir/n.sls": "n\n", "was_file/inside.sls": "i\n"}, symlinks={"ln.sls": "keep.sls"}
    )
    assert fs.update_backends()["gitfs"]["changed"] is True
    assert fs.file_list("base")["files"] == [
        "m/edit.sls",
        "m/keep.sls",
        "m/ln.sls",
        "m/new/dir/n.sls",
        "m/was_file/inside.sls",
    ]
    assert served(fs, "m/edit.sls") == "2\n" and served(fs, "m/ln.sls") == "k\n"
    now = fs.resolve("m/keep.sls", "base")
    assert now is not None and now[1] != str(old_keep)
    assert os.stat(now[1]).st_ino == old_keep.stat().st_ino  # hard-linked, not written again
    assert (old_keep.parent / "edit.sls").read_text() == "1\n"  # the previous tree is untouched


def test_https_ssl_verify(tmp_path: Path) -> None:
    make_repo(tmp_path, "web", {"h.sls": "over https\n"})
    with git_http(tmp_path, "deploy", "s3cret", tls=tmp_path) as port:
        url = f"https://127.0.0.1:{port}/web.git"
        auth = [{"user": "deploy"}, {"password": "s3cret"}]
        remotes = [
            {url: [{"name": "unverified"}, {"ssl_verify": False}, *auth]},
            {url + "/": [{"name": "verified"}, *auth]},
        ]
        fs = FileServer(opts_for(tmp_path, remotes, fileserver_backend=["gitfs"]))
        report = fs.update_backends()["gitfs"]
    assert report["remotes"]["unverified"] == "updated", report
    assert report["remotes"]["verified"].startswith("error: gitfs remote verified: fetch:"), report
    assert "certificate" in report["remotes"]["verified"], report
    assert served(fs, "h.sls") == "over https\n"
