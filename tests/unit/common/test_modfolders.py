"""What module folders hold, kept between loaders (common/modfolders.py): invalidation on a
sync or refresh, and the recheck a missed module triggers."""

import textwrap

import pytest

from briny.common import loader, modfolders
from briny.common.modfolders import FOLDERS


@pytest.fixture
def ext(tmp_path):
    modfolders.forget()
    yield tmp_path / "extmods"
    modfolders.forget()


def opts(ext):
    return {"id": "m1", "extension_modules": str(ext), "file_client": "remote"}


def write(folder, name, body):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(textwrap.dedent(body))


def synced_tree(ext, tmp_path):
    """Opts of a masterless job whose file roots hold ``_modules/synced.py`` (for a sync)."""
    roots = tmp_path / "srv"
    write(roots / "_modules", "synced", "def f():\n    return 's'\n")
    return {**opts(ext), "file_client": "local", "file_roots": {"base": [str(roots)]}, "cachedir": str(tmp_path / "c")}


def test_a_listing_is_kept_until_forgotten(ext):
    write(ext / "modules", "one", "def f():\n    return 1\n")
    assert loader.minion_mods(opts(ext))["one.f"]() == 1
    write(ext / "modules", "two", "__virtualname__ = 'deux'\ndef f():\n    return 2\n")
    assert FOLDERS.listing(ext / "modules").names == {"one"}  # kept: no stat per loader
    modfolders.forget()  # what saltutil.sync_* and refresh_modules call
    found = FOLDERS.listing(ext / "modules")
    assert found.names == {"one", "two"} and list(found.virtual) == ["deux"]
    assert loader.minion_mods(opts(ext))["deux.f"]() == 2


def test_a_missed_module_rechecks_the_folders(ext, monkeypatch):
    salt = loader.minion_mods(opts(ext))
    assert "late.f" not in salt  # no folder at all: kept as missing
    assert FOLDERS.listing(ext / "modules") is None
    write(ext / "modules", "late", "def f():\n    return 'late'\n")
    monkeypatch.setattr(modfolders, "RECHECK_AFTER", 0.0)
    assert loader.minion_mods(opts(ext))["late.f"]() == "late"  # the miss read the folders again
    write(ext / "modules", "later", "def f():\n    return 'later'\n")
    monkeypatch.setattr(modfolders, "RECHECK_AFTER", 3600.0)
    assert "later.f" not in loader.minion_mods(opts(ext))  # read within the hour: kept
    assert FOLDERS.listing(ext / "modules").names == {"late"}


def test_builtin_folders_are_never_forgotten(ext):
    builtin = loader.BUILTIN_DIRS["modules"]
    assert loader.minion_mods(opts(ext))["test.ping"]() is True
    kept = FOLDERS.listing(builtin)
    modfolders.forget()
    assert FOLDERS.listing(builtin) is kept and FOLDERS.recheck(builtin) is kept


def test_a_sync_forgets_the_listings(ext, tmp_path):
    job_opts = synced_tree(ext, tmp_path)
    salt = loader.minion_mods(job_opts)
    assert FOLDERS.listing(ext / "modules") is None  # read (missing) before the sync
    assert salt["saltutil.sync_modules"]() == ["modules.synced"]
    assert FOLDERS.listing(ext / "modules").names == {"synced"}
    write(ext / "modules", "dropped_in", "def f():\n    return 'd'\n")
    assert "dropped_in" not in FOLDERS.listing(ext / "modules").names  # kept: not read again
    assert salt["saltutil.refresh_modules"]() is True
    assert "dropped_in" in FOLDERS.listing(ext / "modules").names


def test_a_listing_read_while_a_forget_ran_is_not_kept(ext, monkeypatch):
    """A sync's forget() that lands while another thread reads a folder: what that thread read
    may be from before the sync, so it is used once and not kept; the next look reads again."""
    write(ext / "modules", "old", "def f():\n    return 1\n")
    real_scan = modfolders.scan

    def scan_then_sync(folder):
        found = real_scan(folder)  # read before the sync landed
        write(ext / "modules", "synced", "def f():\n    return 2\n")
        modfolders.forget()
        return found

    monkeypatch.setattr(modfolders, "scan", scan_then_sync)
    assert FOLDERS.listing(ext / "modules").names == {"old"}
    monkeypatch.setattr(modfolders, "scan", real_scan)
    assert FOLDERS.listing(ext / "modules").names == {"old", "synced"}


def test_a_sync_whose_daemon_is_gone_still_reports_what_it_wrote(ext, tmp_path, caplog):
    """modules_changed cannot reach the daemon (its channel closed): the sync's files stay
    written, its answer says what changed, and the log says the daemon was not told."""
    from briny.common.exceptions import ChannelClosed
    from briny.common.jobcontext import JobContext

    def gone() -> None:
        raise ChannelClosed("the daemon went away")

    job_opts = synced_tree(ext, tmp_path)
    salt = loader.minion_mods(job_opts, job=JobContext(modules_changed=gone))
    assert salt["saltutil.sync_modules"]() == ["modules.synced"]
    assert (ext / "modules" / "synced.py").is_file()
    assert "could not tell the minion daemon its modules changed" in caplog.text
