"""The local file client: first root wins, listings, hostile paths, symlinks."""

import os

import pytest

from briny.common.exceptions import FileServerError
from briny.common.fileclient import LocalFileClient, clean_path, find_sls, split_url


@pytest.fixture
def roots(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    (a / "web").mkdir(parents=True)
    (b / "db").mkdir(parents=True)
    (a / "web" / "init.sls").write_text("a")
    (a / "top.sls").write_text("top-a")
    (b / "top.sls").write_text("top-b")
    (b / "db" / "server.sls").write_text("db")
    (b / "db.sls").write_text("db-flat")
    return LocalFileClient({"base": [str(a), str(b)]}), tmp_path


def test_first_root_wins_and_listing(roots):
    client, _ = roots
    assert client.get_text("top.sls", "base") == "top-a"
    assert client.list_states("base") == ["db", "db.server", "top", "web"]
    assert client.get_text("nope.sls", "base") is None
    assert client.get_text("top.sls", "dev") is None


def test_find_sls_prefers_file_over_init(roots):
    client, _ = roots
    assert find_sls(client, "db", "base")[0] == "db.sls"
    assert find_sls(client, "web", "base")[0] == "web/init.sls"
    assert find_sls(client, "../etc/passwd", "base") is None


@pytest.mark.parametrize("path", ["../x", "a/../../x", "/etc/passwd", "a/%2e%2e/%2e%2e/x", "a\x00b", "..\\x"])
def test_hostile_paths_are_refused(path):
    with pytest.raises(FileServerError):
        clean_path(path)


def test_split_url():
    assert split_url("salt://a/b.conf?saltenv=dev") == ("a/b.conf", "dev")
    assert split_url("salt://a/b.conf") == ("a/b.conf", "base")
    assert split_url("/local/path", "prod") == ("/local/path", "prod")


def test_symlink_out_of_root_follows_setting(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir(), outside.mkdir()
    (outside / "secret").write_text("s")
    os.symlink(outside, root / "linked")
    assert LocalFileClient({"base": [str(root)]}).get_text("linked/secret", "base") == "s"
    with pytest.raises(FileServerError, match="leaves the file root"):
        LocalFileClient({"base": [str(root)]}, followsymlinks=False).get_text("linked/secret", "base")


def test_get_client_lives_with_its_job(tmp_path):
    from briny.common.fileclient import get_client
    from briny.common.jobcontext import JobContext

    opts = {"file_roots": {"base": [str(tmp_path)]}}
    job = JobContext()
    first = get_client(opts, job)
    assert get_client(dict(opts), job) is first  # one client per job, whatever opts copy asks
    assert get_client(opts, JobContext()) is not first  # another job: its own listing
    assert get_client(opts) is not first  # no job: nothing kept
    moved = {"file_roots": {"base": [str(tmp_path / "other")]}}
    assert get_client(moved, job) is not first  # ...until the roots differ
    given = LocalFileClient({})
    assert get_client(opts, JobContext(file_client=given)) is given  # the daemon's client wins
