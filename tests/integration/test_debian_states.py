"""pkgrepo, debconf, alternatives, timezone, locale and service masking applied to this host.

Each tree runs through ``briny-call --local`` in test mode (nothing on the
host changes), live, and live again (no changes the second time), with the
host checked directly (files, links, ``debconf-show``, ``locale -a``,
``dpkg``, ``apt-cache``). The pkgrepo test builds a local APT repository in a
temporary directory (``dpkg-deb``, ``apt-ftparchive``, signed with a key made
by ``gpg --batch`` in a temporary GNUPGHOME) and points APT at it only
(``APT_CONFIG``: no network, no host package lists). Names are throwaway
(``brinytest<hex>``) and a :class:`~tests.integration.debianhost.HostGuard`
puts back every system file a test touched (``/etc/timezone``,
``/etc/localtime``, ``/etc/locale.gen``, ...), failing the test if anything
is left changed. Expected comments are Salt 3007's (see the goldens in
tests/golden/debian) unless a comment says otherwise.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import goldenlib  # put on sys.path by conftest.py
import pytest

from .debianhost import HostGuard

pytestmark = [
    pytest.mark.host,
    pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="needs root"),
]
TIMEOUT = 300


def _run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, check=False, **kwargs)


def _need(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")


@pytest.fixture
def host():
    with HostGuard() as guard:  # puts back what the test changed, as it ends
        yield guard
    left = guard.differences()
    assert not left, f"the host could not be put back as it was: {left}"


@pytest.fixture
def apply(tmp_path: Path, host: HostGuard, briny_call):
    """apply(files, sls, test=False) -> {state id: result}; ``files`` are written into the tree first."""
    tree, conf = tmp_path / "srv", tmp_path / "etc"
    tree.mkdir()
    conf.mkdir()
    (conf / "minion").write_text(
        f"id: debtest\nfile_client: local\nroot_dir: {tmp_path / 'root'}\nfile_roots:\n  base: [{tree}]\n"
    )

    def run(files: dict[str, str], sls: str, test: bool = False) -> dict[str, dict[str, Any]]:
        for rel, body in files.items():
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            (tree / rel).write_text(textwrap.dedent(body))
        proc = briny_call(conf, ["state.sls", sls, *(["test=True"] if test else [])], cwd=tmp_path)
        data = goldenlib.parse_output(proc.stdout, proc.stderr)
        assert isinstance(data, dict) and "unparsed" not in data, f"{proc.stdout}\n{proc.stderr}"
        return {v["__id__"]: v for v in data.values()}

    return run


def _no_changes(res: dict[str, dict[str, Any]]) -> None:
    assert {k: v["changes"] for k, v in res.items() if v["changes"]} == {}


def _tag() -> str:
    return "brinytest" + secrets.token_hex(3)


# ---------------------------------------------------------------------------
# pkgrepo: a local signed repository, signed-by from salt://, require_in a pkg
# ---------------------------------------------------------------------------


@pytest.fixture
def local_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """(tag, repo dir, armored key, parts dir, key id): a signed repo with package TAG-hello; APT sees
    only the sources linked into parts dir (APT_CONFIG), the package is purged afterwards."""
    _need("dpkg-deb", "apt-ftparchive", "gpg", "apt-get")
    tag = _tag()
    pkg, repo, home = tmp_path / "pkg", tmp_path / "repo", tmp_path / "gnupg"
    (pkg / "DEBIAN").mkdir(parents=True)
    (pkg / "DEBIAN" / "control").write_text(
        f"Package: {tag}-hello\nVersion: 1.0\nArchitecture: all\nMaintainer: briny tests <t@example.invalid>\n"
        "Description: briny pkgrepo test package\n"
    )
    dists = repo / "dists" / "stable" / "main" / "binary-amd64"
    dists.mkdir(parents=True)
    (repo / "pool").mkdir()
    assert (
        _run(["dpkg-deb", "--root-owner-group", "--build", str(pkg), str(repo / "pool" / "hello.deb")]).returncode == 0
    )
    packages = _run(["apt-ftparchive", "packages", "pool"], cwd=repo)
    (dists / "Packages").write_text(packages.stdout)
    release = _run(
        ["apt-ftparchive", "-o", "APT::FTPArchive::Release::Suite=stable", "-o",
         "APT::FTPArchive::Release::Components=main", "-o", "APT::FTPArchive::Release::Architectures=amd64",
         "release", "dists/stable"],
        cwd=repo,
    )  # fmt: skip
    (repo / "dists" / "stable" / "Release").write_text(release.stdout)
    home.mkdir(mode=0o700)
    env = dict(os.environ, GNUPGHOME=str(home))
    gen = [
        "gpg",
        "--batch",
        "--passphrase",
        "",
        "--quick-gen-key",
        f"{tag} <t@example.invalid>",
        "ed25519",
        "sign",
        "1d",
    ]
    assert _run(gen, env=env).returncode == 0
    signed = _run(["gpg", "--batch", "--yes", "--clearsign", "-o", "dists/stable/InRelease", "dists/stable/Release"],
                  env=env, cwd=repo)  # fmt: skip
    assert signed.returncode == 0, signed.stderr
    key = _run(["gpg", "--batch", "--armor", "--export"], env=env).stdout
    listed = _run(["gpg", "--batch", "--with-colons", "--list-keys"], env=env).stdout
    keyid = next(line.split(":")[4] for line in listed.splitlines() if line.startswith("pub:"))
    _run(["gpgconf", "--kill", "all"], env=env)
    apt = tmp_path / "apt"
    parts = apt / "parts"
    for sub in ("parts", "lists/partial", "cache/archives/partial", "trusted.gpg.d"):
        (apt / sub).mkdir(parents=True)
    (apt / "apt.conf").write_text(
        f'Dir::Etc::SourceList "/dev/null";\nDir::Etc::SourceParts "{parts}";\nDir::State::Lists "{apt}/lists";\n'
        f'Dir::Cache "{apt}/cache";\nDir::Etc::Trusted "{apt}/trusted.gpg";\nDir::Etc::TrustedParts "{apt}/trusted.gpg.d";\n'
    )
    monkeypatch.setenv("APT_CONFIG", str(apt / "apt.conf"))
    yield tag, repo, key, parts, keyid
    if _run(["dpkg-query", "-W", f"{tag}-hello"]).returncode == 0:
        _run(["dpkg", "--purge", f"{tag}-hello"])


def _policy(tag: str) -> str:
    return _run(["apt-cache", "policy", f"{tag}-hello"]).stdout


def test_pkgrepo_signed_repo_then_package(apply, local_repo) -> None:
    tag, repo, key, parts, keyid = local_repo
    listfile = Path(f"/etc/apt/sources.list.d/{tag}.list")
    keyring = Path(f"/etc/apt/keyrings/{tag}.gpg")
    (parts / listfile.name).symlink_to(listfile)  # APT reads this one source only
    line = f"deb [signed-by={keyring}] file:{repo} stable main"
    sls = f"""
        repo:
          pkgrepo.managed:
            - name: {line}
            - humanname: briny test repo
            - file: {listfile}
            - key_url: salt://repo.asc
            - aptkey: False
            - require_in:
              - pkg: hello
        hello:
          pkg.installed:
            - name: {tag}-hello
        """
    files = {"repo.sls": sls, "repo.asc": key}
    res = apply(files, "repo", test=True)
    assert res["repo"]["result"] is None and res["repo"]["changes"] == {"repo": line}
    assert res["repo"]["comment"].startswith(f"Package repo '{line}' would be configured.")
    assert not listfile.exists() and not keyring.exists()
    res = apply(files, "repo")
    assert res["repo"] == {**res["repo"], "result": True, "changes": {"repo": line}}
    assert res["repo"]["comment"] == f"Configured package repo '{line}'"
    assert listfile.read_text() == line + "\n"
    assert keyring.stat().st_mode & 0o777 == 0o644 and not keyring.read_bytes().startswith(b"-----")  # dearmored
    assert "Candidate: 1.0" in _policy(tag)  # the refresh fetched the signed lists
    assert res["hello"]["result"] is True and res["hello"]["changes"][f"{tag}-hello"]["new"] == "1.0"
    res = apply(files, "repo")
    _no_changes(res)
    assert res["repo"]["comment"] == f"Package repo '{line}' already configured"
    res = apply({"gone.sls": f"gone:\n  pkgrepo.absent:\n    - name: {line}\n    - keyid: {keyid}\n"
                 "    - aptkey: False\n"}, "gone")  # fmt: skip
    assert res["gone"]["result"] is True and res["gone"]["changes"]["repo"] == line
    assert not listfile.exists() and not keyring.exists()


def test_pkgrepo_deb822_and_files_kept(apply, local_repo) -> None:
    tag, repo, key, parts, _ = local_repo
    sources = Path(f"/etc/apt/sources.list.d/{tag}.sources")
    (parts / sources.name).symlink_to(sources)
    keyring = Path(f"/etc/apt/keyrings/{tag}.asc")
    sls = f"""
        deb822:
          pkgrepo.managed:
            - name: deb [signed-by={keyring} arch=amd64] file:{repo} stable main
            - file: {sources}
            - key_url: salt://repo.asc
            - aptkey: False
        """
    files = {"s.sls": sls, "repo.asc": key}
    res = apply(files, "s")
    assert res["deb822"]["result"] is True, res
    assert sources.read_text() == (
        f"Types: deb\nURIs: file:{repo}\nSuites: stable\nComponents: main\nArchitectures: amd64\nSigned-By: {keyring}\n"
    )
    assert keyring.read_text().startswith("-----BEGIN PGP PUBLIC KEY BLOCK")  # .asc: kept armored
    assert "Candidate: 1.0" in _policy(tag)  # APT reads the stanza briny wrote
    # options in another order than Salt writes them: already configured (Salt: reconfigured each run)
    _no_changes(apply(files, "s"))
    # edit in place: disable it; comments and other stanzas stay
    sources.write_text(
        "# kept\n"
        + sources.read_text()
        + "\n# other\nTypes: deb-src\nURIs: http://example.invalid\nSuites: x\nComponents: main\n"
    )
    mode = 0o640
    os.chmod(sources, mode)
    inode = sources.stat().st_ino
    sls2 = sls.replace("- aptkey: False", "- aptkey: False\n            - disabled: True\n            - refresh: False")
    res = apply({"s2.sls": sls2}, "s2")
    assert res["deb822"]["changes"]["disabled"] == {"new": True, "old": False}
    text = sources.read_text()
    assert (
        text.startswith("# kept\nTypes: deb\n") and "Enabled: no\n" in text and "URIs: http://example.invalid" in text
    )
    assert sources.stat().st_mode & 0o777 == mode and sources.stat().st_ino != inode  # atomic rename, mode kept
    res = apply({"a.sls": f"a:\n  pkgrepo.absent:\n    - name: deb [arch=amd64] file:{repo} stable main\n"}, "a")
    assert res["a"]["changes"] == {"repo": f"deb [arch=amd64] file:{repo} stable main"}
    assert sources.read_text() == "# other\nTypes: deb-src\nURIs: http://example.invalid\nSuites: x\nComponents: main\n"
    sources.unlink()
    keyring.unlink()


def test_pkgrepo_bad_input_fails_that_state_only(apply, tmp_path: Path) -> None:
    tag = _tag()
    listfile = Path(f"/etc/apt/sources.list.d/{tag}.list")
    keyring = Path(f"/etc/apt/keyrings/{tag}.gpg")
    listfile.write_text("# mine\ndeb http://example.invalid/keep stable main\n")
    before = listfile.read_text()
    sls = f"""
        malformed:
          pkgrepo.managed:
            - name: deb [arch=amd64 http://example.invalid/x stable main
            - file: {listfile}
        {{% for sid, key in (("not_a_key", "notakey.gpg"), ("missing_key", "nosuch.gpg")) %}}
        {{{{ sid }}}}:
          pkgrepo.managed:
            - name: deb [signed-by={keyring}] http://example.invalid/y stable main
            - file: {listfile}
            - key_url: salt://{{{{ key }}}}
            - aptkey: False
            - refresh: False
        {{% endfor %}}
        keyserver_offline:
          pkgrepo.managed:
            - name: deb [signed-by={keyring}] http://example.invalid/z stable main
            - keyid: 0123456789ABCDEF
            - keyserver: hkp://127.0.0.1:1
            - aptkey: False
            - refresh: False
        unknown_argument:
          pkgrepo.managed:
            - name: deb http://example.invalid/keep stable main
            - file: {listfile}
            - gpgcheck: 1
        still_runs:
          test.succeed_without_changes
        """
    res = apply({"bad.sls": sls, "notakey.gpg": "<html>not a key</html>\n"}, "bad")
    assert res["malformed"]["result"] is False
    assert (
        "is not valid. This must be the complete repo entry as seen in the sources file" in res["malformed"]["comment"]
    )
    assert (
        res["not_a_key"]["result"] is False
        and "Error: Could not add key: salt://notakey.gpg" in res["not_a_key"]["comment"]
    )
    assert res["missing_key"]["comment"].endswith("Error: file not found: salt://nosuch.gpg")  # Salt: a TypeError
    assert res["keyserver_offline"]["comment"].endswith("Error: Could not add key: 0123456789ABCDEF")
    assert res["unknown_argument"]["result"] is True and "gpgcheck" in res["unknown_argument"]["warnings"][0]
    assert res["still_runs"]["result"] is True
    assert listfile.read_text() == before and not keyring.exists()
    listfile.unlink()


# ---------------------------------------------------------------------------
# debconf, alternatives
# ---------------------------------------------------------------------------


def test_debconf(apply) -> None:
    _need("debconf-get-selections", "debconf-show")
    pkg = _tag()
    sls = f"""
        answers:
          debconf.set:
            - name: {pkg}
            - data:
                '{pkg}/str': {{'type': 'string', 'value': 'hello world'}}
                '{pkg}/flag': {{'type': 'boolean', 'value': True}}
                '{pkg}/pw': {{'type': 'password', 'value': 's3cret'}}
        """
    res = apply({"d.sls": sls}, "d", test=True)
    assert res["answers"]["changes"][f"{pkg}/pw"] == "New value: (password hidden)"  # Salt shows the password
    assert pkg not in _run(["debconf-get-selections"]).stdout
    res = apply({}, "d")
    assert res["answers"]["changes"] == {
        f"{pkg}/str": "hello world",
        f"{pkg}/flag": "true",
        f"{pkg}/pw": "(password hidden)",
    }
    shown = _run(["debconf-show", pkg]).stdout
    assert f"{pkg}/str: hello world" in shown and f"{pkg}/flag: true" in shown
    res = apply({}, "d")
    _no_changes(res)
    assert res["answers"]["comment"] == "All specified answers are already set"
    bad = f"bad:\n  debconf.set:\n    - name: {pkg}\n    - data:\n        '{pkg}/x': {{'type': 'nosuchtype', 'value': 1}}\n"
    res = apply({"bad.sls": bad}, "bad")  # Salt: result True, the answer silently skipped
    assert res["bad"]["result"] is False and res["bad"]["changes"] == {f"{pkg}/x": "Failed to set!"}
    _run(["debconf-communicate", pkg], input="PURGE\n")


def test_alternatives(apply, tmp_path: Path) -> None:
    _need("update-alternatives")
    name = _tag()
    for target in ("one", "two"):
        (tmp_path / target).write_text("#!/bin/sh\n")
        (tmp_path / target).chmod(0o755)
    link = tmp_path / "bin" / name
    link.parent.mkdir()
    sls = f"""
        one:
          alternatives.install:
            - name: {name}
            - link: {link}
            - path: {tmp_path}/one
            - priority: 10
        two:
          alternatives.install:
            - name: {name}
            - link: {link}
            - path: {tmp_path}/two
            - priority: 5
        chosen:
          alternatives.set:
            - name: {name}
            - path: {tmp_path}/two
        """
    res = apply({"a.sls": sls}, "a", test=True)
    assert [res[k]["result"] for k in ("one", "two")] == [None, None] and not os.path.lexists(
        f"/etc/alternatives/{name}"
    )
    res = apply({}, "a")
    assert res["chosen"]["changes"] == {"path": f"{tmp_path}/two"}
    assert (
        os.readlink(f"/etc/alternatives/{name}") == f"{tmp_path}/two"
        and os.readlink(link) == f"/etc/alternatives/{name}"
    )
    _no_changes(apply({}, "a"))
    res = apply({"r.sls": f"r:\n  alternatives.remove:\n    - name: {name}\n    - path: {tmp_path}/two\n"}, "r")
    assert res["r"]["changes"] == {"path": f"{tmp_path}/one"}
    _run(["update-alternatives", "--remove-all", name])


# ---------------------------------------------------------------------------
# timezone, locale (the HostGuard restores the files)
# ---------------------------------------------------------------------------


def test_timezone(apply) -> None:
    if not os.path.isfile("/usr/share/zoneinfo/Europe/Paris"):
        pytest.skip("needs tzdata")
    Path("/etc/adjtime").write_text("0.0 0 0.0\n0\nLOCAL\n")
    sls = "tz:\n  timezone.system:\n    - name: Europe/Paris\n"
    res = apply({"tz.sls": sls}, "tz", test=True)
    assert res["tz"]["result"] is None
    assert res["tz"]["comment"] == "Timezone Europe/Paris needs to be set, UTC needs to be set to True"
    assert os.readlink("/etc/localtime") != "/usr/share/zoneinfo/Europe/Paris"
    res = apply({}, "tz")  # Salt 3007 here: a traceback (timedatectl without systemd as PID 1)
    assert res["tz"]["changes"] == {"timezone": "Europe/Paris", "utc": True}
    assert res["tz"]["comment"] == "Set timezone Europe/Paris, Set UTC to True"
    assert os.readlink("/etc/localtime") == "/usr/share/zoneinfo/Europe/Paris"
    assert Path("/etc/timezone").read_text() == "Europe/Paris\n"
    assert Path("/etc/adjtime").read_text() == "0.0 0 0.0\n0\nUTC\n"
    assert _run(["date", "+%Z"]).stdout.strip() in ("CET", "CEST")
    res = apply({}, "tz")
    _no_changes(res)
    assert res["tz"]["comment"] == "Timezone Europe/Paris already set, UTC already set to Europe/Paris"


def test_locale(apply) -> None:
    _need("locale-gen", "locale")
    if "kw_GB.utf8" in _run(["locale", "-a"]).stdout:
        pytest.skip("kw_GB.UTF-8 is already compiled on this host")
    sls = "gen:\n  locale.present:\n    - name: kw_GB.UTF-8\nsys:\n  locale.system:\n    - name: kw_GB.UTF-8\n"
    res = apply({"l.sls": sls}, "l", test=True)
    assert res["gen"]["comment"] == "Locale kw_GB.UTF-8 needs to be generated"
    assert res["sys"]["comment"] == "System locale kw_GB.UTF-8 needs to be set"
    res = apply({}, "l")
    assert res["gen"]["changes"] == {"locale": "kw_GB.UTF-8"} and res["sys"]["changes"] == {"locale": "kw_GB.UTF-8"}
    assert "kw_GB.utf8" in _run(["locale", "-a"]).stdout
    assert 'LANG="kw_GB.UTF-8"' in Path("/etc/default/locale").read_text().splitlines()
    assert "kw_GB.UTF-8 UTF-8" in Path("/etc/locale.gen").read_text().splitlines()
    _no_changes(apply({}, "l"))


# ---------------------------------------------------------------------------
# service: offline mode and masks
# ---------------------------------------------------------------------------


def test_service_masks_offline(apply) -> None:
    _need("systemctl")
    if os.path.isdir("/run/systemd/system"):
        pytest.skip("systemd is PID 1 here: not offline mode")
    unit = _tag()
    link = Path(f"/etc/systemd/system/{unit}.service")
    sls = f"""
        masked:
          service.masked:
            - name: {unit}
        running:
          service.running:
            - name: {unit}
        """
    res = apply({"m.sls": sls}, "m", test=True)
    assert res["masked"]["result"] is None and res["masked"]["changes"] == {"masked": {"old": False, "new": True}}
    assert res["running"]["comment"] == "Running in OFFLINE mode. Nothing to do"
    assert not os.path.lexists(link)
    res = apply({}, "m")  # Salt 3007 offline: masks it, then "Cannot run in offline mode ..."
    assert res["masked"]["comment"] == f"Service {unit} was masked" and os.readlink(link) == "/dev/null"
    assert res["running"]["result"] is True and res["running"]["comment"] == "Running in OFFLINE mode. Nothing to do"
    res = apply({}, "m")
    _no_changes(res)
    assert res["masked"]["comment"] == f"Service {unit} is already masked"
    runtime = f"rt:\n  service.masked:\n    - name: {unit}\n    - runtime: True\n"
    res = apply({"rt.sls": runtime}, "rt")
    assert res["rt"]["result"] is False and "a runtime mask needs systemd running as PID 1" in res["rt"]["comment"]
    assert not os.path.exists("/run/systemd/system")
    res = apply({"u.sls": f"u:\n  service.unmasked:\n    - name: {unit}\n"}, "u")
    assert res["u"]["changes"] == {"masked": {"old": True, "new": False}} and not os.path.lexists(link)
