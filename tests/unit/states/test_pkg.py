"""The pkg state module over a fake ``pkg`` execution module: Salt 3007's
comments and changes (observed with the reference on Debian 12), test mode,
the once-per-run refresh of ``mod_init``, and failures."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from briny.common import loader

# An in-memory package database; the state reaches it only through __salt__.
_FAKE_PKG = textwrap.dedent("""
    from briny.common.exceptions import CommandExecutionError

    def _db():
        return __opts__["_fakepkg"]

    def list_pkgs(removed=False, **kwargs):
        return dict(_db()["config_only"] if removed else _db()["installed"])

    def version(*names, **kwargs):
        inst = _db()["installed"]
        return inst.get(names[0], "") if len(names) == 1 else {n: inst.get(n, "") for n in names}

    def latest_version(*names, refresh=True, **kwargs):
        _db()["calls"].append(("latest_version", names, refresh))
        repo, inst = _db()["repo"], _db()["installed"]
        out = {n: (repo.get(n, "") if repo.get(n, "") != inst.get(n) else "") for n in names}
        return out[names[0]] if len(names) == 1 else out

    def list_repo_pkgs(*args, **kwargs):
        out = {}
        for arg in args:
            name, _, ver = arg.partition("=")
            offered = _db()["repo"].get(name)
            if offered and ver in ("", offered):
                out[name] = [offered]
        return out

    def version_matches(installed, spec, **kwargs):
        return installed == str(spec).lstrip("=")

    def bin_pkg_info(path, **kwargs):
        debs = _db()["debs"]
        if path not in debs:
            raise CommandExecutionError(f"{path} does not exist on minion")
        return debs[path]

    def refresh_db(**kwargs):
        _db()["calls"].append(("refresh_db",))
        return {}

    def install(pkgs=None, sources=None, refresh=False, **kwargs):
        db = _db()
        db["calls"].append(("install", pkgs, sources, refresh))
        old = dict(db["installed"])
        for item in sources or []:
            for name, path in item.items():
                if path not in db["debs"]:
                    raise CommandExecutionError(f"{path} does not exist on minion")
                db["installed"][name] = db["debs"][path]["version"]
        for item in pkgs or []:
            name, ver = (next(iter(item.items())) if isinstance(item, dict) else (item, None))
            if name not in db["repo"]:
                raise CommandExecutionError("Problem encountered installing package(s)",
                                            info={"changes": {}, "errors": [f"E: Unable to locate package {name}"]})
            db["installed"][name] = ver or db["repo"][name]
        return {n: {"old": old.get(n, ""), "new": v} for n, v in db["installed"].items() if old.get(n) != v}

    def _rm(pkgs, purge):
        db = _db()
        db["calls"].append(("purge" if purge else "remove", pkgs))
        changes = {}
        for n in pkgs:
            if n in db["held"]:
                raise CommandExecutionError("Problem encountered removing package(s)", info={
                    "changes": {"removed": {}, "installed": {}} if purge else {},
                    "errors": ["E: Held packages were changed and -y was used without "
                               "--allow-change-held-packages."]})
            if n in db["installed"]:
                changes[n] = {"old": db["installed"].pop(n), "new": ""}
            db["config_only"].pop(n, None)
        return {"removed": {}, "installed": changes} if purge else changes

    def remove(pkgs=None, **kwargs):
        return _rm(pkgs, False)

    def purge(pkgs=None, **kwargs):
        return _rm(pkgs, True)

    def _hold(pkgs, on):
        out = {}
        for n in pkgs:
            held = n in _db()["held"]
            r = {"name": n, "changes": {}, "result": True}
            if held == on:
                r["comment"] = f"Package {n} is already set to be held." if on else \\
                    f"Package {n} is already set not to be held."
            elif __opts__["test"]:
                r["result"] = None
                r["comment"] = f"Package {n} is set to be held." if on else f"Package {n} is set not to be held."
            else:
                (_db()["held"].add if on else _db()["held"].discard)(n)
                r["changes"] = {"old": "install", "new": "hold"} if on else {"old": "hold", "new": "install"}
                r["comment"] = f"Package {n} is now being held." if on else f"Package {n} is no longer being held."
            out[n] = r
        return out

    def hold(pkgs=None, **kwargs):
        return _hold(pkgs, True)

    def unhold(pkgs=None, **kwargs):
        return _hold(pkgs, False)
""")


@pytest.fixture
def db() -> dict[str, Any]:
    return {
        "installed": {"dpkg": "1.21.22", "hello": "2.10-3"},
        "config_only": {},
        "repo": {"hello": "2.10-3", "sl": "5.02-1+b1", "dpkg": "1.21.22"},
        "debs": {
            "/debs/t_1.0.deb": {"name": "t", "version": "1.0"},
            "/debs/t_2.0.deb": {"name": "t", "version": "2.0"},
        },
        "held": set(),
        "calls": [],
    }


@pytest.fixture
def make(tmp_path: Path, db: dict[str, Any]):
    fake = tmp_path / "fake_modules"
    fake.mkdir()
    (fake / "pkg.py").write_text(_FAKE_PKG)

    def build(test: bool = False) -> Any:
        opts = {"test": test, "id": "t", "_fakepkg": db, "cachedir": str(tmp_path / "cache")}
        salt = loader.minion_mods(opts, extra_dirs=[fake])
        return loader.states(opts, salt)

    return build


def test_installed_from_sources_then_idempotent(make, db) -> None:
    st = make()
    src = [{"t": "/debs/t_1.0.deb"}]
    ret = st["pkg.installed"](name="pkg1", sources=src)
    assert ret == {
        "name": "pkg1",
        "result": True,
        "changes": {"t": {"old": "", "new": "1.0"}},
        "comment": "The following packages were installed/updated: t",
    }
    ret = st["pkg.installed"](name="pkg1", sources=src)
    assert ret["result"] is True and ret["changes"] == {}
    assert ret["comment"] == "All specified packages are already installed"
    # a newer .deb updates, and test mode says so with Salt's "installed" marker
    ret = make(test=True)["pkg.installed"](name="pkg1", sources=[{"t": "/debs/t_2.0.deb"}])
    assert ret["result"] is None and ret["changes"] == {"t": {"new": "installed", "old": ""}}
    assert ret["comment"] == "The following packages would be installed/updated: t"
    ret = st["pkg.installed"](name="pkg1", sources=[{"t": "/debs/t_2.0.deb"}])
    assert ret["changes"] == {"t": {"old": "1.0", "new": "2.0"}}


def test_installed_repo_packages(make, db) -> None:
    ret = make(test=True)["pkg.installed"](name="multi", pkgs=["hello", "sl"])
    assert ret == {
        "name": "multi",
        "result": None,
        "changes": {"sl": {"new": "5.02-1+b1", "old": ""}},
        "comment": "The following packages would be installed/updated: sl",
    }
    assert "sl" not in db["installed"]
    ret = make()["pkg.installed"](name="multi", pkgs=["hello", "sl"])
    assert ret["changes"] == {"sl": {"old": "", "new": "5.02-1+b1"}}
    assert ret["comment"] == (
        "The following packages were installed/updated: sl\nThe following packages were already installed: hello"
    )
    ret = make()["pkg.installed"](name="hello", version="2.10-3")
    assert ret["comment"] == "All specified packages are already installed and are at the desired version"


def test_installed_missing_package_fails_with_apt_message(make, db) -> None:
    ret = make()["pkg.installed"](name="briny-no-such-pkg")
    assert ret["result"] is False and ret["changes"] == {}
    assert ret["comment"] == (
        "Problem encountered installing package(s). Additional info follows:\n\n"
        "errors:\n    - E: Unable to locate package briny-no-such-pkg"
    )
    ret = make()["pkg.installed"](name="x", sources=[{"x": "/nope.deb"}])
    assert ret["result"] is False
    assert ret["comment"] == "An error was encountered while installing package(s): /nope.deb does not exist on minion"
    ret = make()["pkg.installed"](name="x", pkgs="hello")
    assert ret["result"] is False and "pkgs" in ret["comment"]


def test_mod_init_refreshes_once_and_only_when_installing(make, db) -> None:
    st = make()
    assert st["pkg.mod_init"]({"fun": "removed"}) is False
    assert st["pkg.mod_init"]({"fun": "installed"}) is True
    st["pkg.installed"](name="hello")  # already there: no refresh spent
    st["pkg.installed"](name="sl")
    db["debs"]["/debs/u.deb"] = {"name": "u", "version": "1"}
    st["pkg.installed"](name="u", sources=[{"u": "/debs/u.deb"}])
    installs = [c for c in db["calls"] if c[0] == "install"]
    assert [c[3] for c in installs] == [True, False]
    # refresh: False skips it; test mode never refreshes
    st2 = make(test=True)
    st2["pkg.mod_init"]({"fun": "latest"})
    st2["pkg.latest"](name="sl")
    assert not any(c[0] == "refresh_db" for c in db["calls"])


def test_latest(make, db) -> None:
    db["installed"].pop("hello")
    ret = make(test=True)["pkg.latest"](name="hello")
    assert ret == {
        "name": "hello",
        "result": None,
        "changes": {"hello": {"new": "2.10-3", "old": ""}},
        "comment": "The following packages would be installed/upgraded: hello",
    }
    ret = make()["pkg.latest"](name="hello", refresh=False)
    assert ret["comment"] == "The following packages were successfully installed/upgraded: hello"
    assert ret["changes"] == {"hello": {"old": "", "new": "2.10-3"}}
    ret = make()["pkg.latest"](name="hello", refresh=False)
    assert ret == {"name": "hello", "result": True, "changes": {}, "comment": "Package hello is already up-to-date"}
    ret = make()["pkg.latest"](name="briny-no-such-pkg", refresh=False)
    assert ret["result"] is False and ret["comment"] == "No information found for 'briny-no-such-pkg'."


def test_removed_and_purged(make, db) -> None:
    ret = make(test=True)["pkg.removed"](name="multi", pkgs=["hello", "sl"])
    assert ret == {
        "name": "multi",
        "result": None,
        "changes": {"hello": {"new": "removed", "old": ""}},
        "comment": "The following packages will be removed: hello.",
    }
    ret = make()["pkg.removed"](name="multi", pkgs=["hello", "sl"])
    assert ret["changes"] == {"hello": {"old": "2.10-3", "new": ""}}
    assert ret["comment"] == (
        "The following packages were not installed: sl The following packages were removed: hello."
    )
    ret = make()["pkg.removed"](name="hello")
    assert ret["comment"] == "All specified packages are already absent" and ret["changes"] == {}
    db["config_only"]["hello"] = "2.10-3"
    ret = make(test=True)["pkg.purged"](name="hello")
    assert ret["result"] is None and ret["changes"] == {"hello": {"new": "purged", "old": ""}}
    assert ret["comment"] == "The following packages will be purged: hello."
    ret = make()["pkg.purged"](name="hello")
    assert ret["result"] is True and ret["comment"] == "All targeted packages were purged."
    ret = make()["pkg.purged"](name="hello")
    assert ret["comment"] == "None of the targeted packages are installed or partially installed"


def test_remove_held_package_fails(make, db) -> None:
    db["held"].add("dpkg")
    ret = make()["pkg.purged"](name="dpkg")
    assert ret["result"] is False and ret["changes"] == {"removed": {}, "installed": {}}
    assert ret["comment"] == (
        "Problem encountered removing package(s). Additional info follows:\n\nerrors:\n"
        "    - E: Held packages were changed and -y was used without "
        "--allow-change-held-packages."
    )


def test_hold_and_unhold(make, db) -> None:
    ret = make(test=True)["pkg.installed"](name="hello", hold=True)
    assert ret["result"] is None and ret["changes"] == {}
    assert ret["comment"] == "All specified packages are already installed.\nPackage hello is set to be held."
    ret = make()["pkg.installed"](name="hello", hold=True)
    assert ret["changes"] == {"hello": {"old": "install", "new": "hold"}}
    assert ret["comment"] == "All specified packages are already installed.\nPackage hello is now being held."
    ret = make()["pkg.installed"](name="hello", hold=True)
    assert ret["result"] is True and ret["changes"] == {}
    assert ret["comment"].endswith("Package hello is already set to be held.")
    ret = make()["pkg.installed"](name="hello", hold=False)
    assert ret["changes"] == {"hello": {"old": "hold", "new": "install"}}
    assert ret["comment"].endswith("Package hello is no longer being held.")


def test_version_latest_resolves_and_test_mode_shows_the_versions(make, db) -> None:
    """Salt 3007: ``latest`` is the newest version offered; test mode's ``new`` is the version
    each package would get (``installed`` when the repositories do not say), ``old`` empty."""
    dry = make(test=True)
    ret = dry["pkg.installed"](name="sl", version="latest")
    assert ret["changes"] == {"sl": {"new": "5.02-1+b1", "old": ""}}
    ret = dry["pkg.installed"](name="mix", pkgs=[{"sl": "latest"}, {"dpkg": "1.21.23"}, {"hello": "9"}, "nope"])
    assert ret["changes"] == {
        "sl": {"new": "5.02-1+b1", "old": ""},
        "dpkg": {"new": "installed", "old": ""},  # the repositories do not have that version
        "hello": {"new": "installed", "old": ""},
        "nope": {"new": "installed", "old": ""},
    }
    # the newest is installed already: latest is satisfied
    ret = dry["pkg.installed"](name="hello", version="latest")
    assert (ret["result"], ret["changes"]) == (True, {})
    assert ret["comment"] == "All specified packages are already installed and are at the desired version"
    ret = make()["pkg.installed"](name="sl", version="latest")
    assert ret["changes"] == {"sl": {"old": "", "new": "5.02-1+b1"}}
    assert db["calls"][-1][0] == "install" and db["calls"][-1][1] == [{"sl": "5.02-1+b1"}]


@pytest.mark.parametrize("fun", ["installed", "latest", "removed", "purged"])
def test_a_package_named_twice_fails_the_state_in_salts_words(make, db, fun) -> None:
    ret = make(test=True)[f"pkg.{fun}"](name="x", pkgs=["sl", {"sl": "5.02-1+b1"}, "hello"])
    assert (ret["result"], ret["changes"]) == (False, {})
    assert ret["comment"] == (
        "You are passing a list of packages that contains duplicated packages names: "
        "['sl', OrderedDict([('sl', '5.02-1+b1')]), 'hello']. This cannot be processed. In case you are "
        "targeting different versions of the same package, please target them individually"
    )
    assert "sl" not in db["installed"] and not [c for c in db["calls"] if c[0] == "install"]
