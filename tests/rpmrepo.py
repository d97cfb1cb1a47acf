"""A throwaway RHEL-like package world for the dnf tests (and for recording Salt's goldens the
same way): small noarch RPMs built with rpmbuild, published with createrepo_c as two local
repositories (file:// baseurl), and an installroot whose rpm database starts with one base
package (it provides what an empty database lacks: /bin/sh, glibc, the release version).

The host's package state is never touched: ``dnf`` and ``rpm`` are reached through wrapper
scripts in ``ROOT/bin`` (put first on PATH) that add ``--installroot`` / ``--root``, the
releasever and the reposdir ``ROOT/etc/yum.repos.d``. docs/rhel-suse.md describes the set-up.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TOOLS = ("rpm", "rpmbuild", "dnf", "createrepo_c")
RELEASEVER = "9"


def _spec(name: str, version: str, requires: str = "", files: str = "", extra: str = "") -> str:
    head = (
        f"Name: {name}\nVersion: {version}\nRelease: 1\nSummary: briny test package {name}\n"
        f"License: MIT\nBuildArch: noarch\n{requires}%description\n{name} for briny's tests\n"
    )
    return head + extra + (files or "%files\n")


def _file_pkg(name: str, version: str, path: str, requires: str = "", config: bool = False, extra: str = "") -> str:
    install = (
        f"%install\nmkdir -p %{{buildroot}}{os.path.dirname(path)}\necho {name}={version} > %{{buildroot}}{path}\n"
    )
    files = f"%files\n{'%config(noreplace) ' if config else ''}{path}\n"
    return _spec(name, version, requires, files, install + extra)


def specs() -> dict[str, list[str]]:
    """repo name -> spec texts."""
    main: list[str] = [
        _spec(
            "brinytest-base",
            "1.0",
            "Provides: /bin/sh\nProvides: glibc\nProvides: system-release(releasever) = 9\n",
        )
    ]
    for v in ("1.0", "2.0"):
        main.append(_file_pkg("brinytest-lib", v, "/usr/share/brinytest/lib.txt"))
        main.append(_file_pkg("brinytest-app", v, "/usr/share/brinytest/app.txt", "Requires: brinytest-lib\n"))
        lua = (
            "%post -p <lua>\n"
            'local f = io.open("/var/brinytest-hook.log", "a")\n'
            f'if f then f:write("post {v}\\n") f:close() end\n'
        )
        main.append(_file_pkg("brinytest-hook", v, "/etc/brinytest-hook.conf", config=True, extra=lua))
    # the versionlock plugin's package, as Salt looks for it (the plugin itself is the host's dnf's)
    main.append(_spec("python3-dnf-plugin-versionlock", "4.3.1"))
    extra = [_file_pkg("brinytest-other", "1.0", "/usr/share/brinytest/other.txt")]
    return {"brinytest": main, "brinytest-extra": extra}


def missing_tools() -> list[str]:
    return [t for t in TOOLS if shutil.which(t) is None]


def build_repos(where: Path) -> dict[str, Path]:
    """Build the RPMs and publish them: repo name -> its folder (with repodata/)."""
    out: dict[str, Path] = {}
    top = where / "rpmbuild"
    for repo, texts in specs().items():
        folder = where / "repos" / repo
        folder.mkdir(parents=True, exist_ok=True)
        for i, text in enumerate(texts):
            spec = where / f"{repo}-{i}.spec"
            spec.write_text(text)
            subprocess.run(
                ["rpmbuild", "-bb", "--define", f"_topdir {top}", "--define", f"_rpmdir {folder}", str(spec)],
                check=True,
                capture_output=True,
                timeout=120,
            )
        subprocess.run(["createrepo_c", "-q", str(folder)], check=True, capture_output=True, timeout=120)
        out[repo] = folder
    return out


def repo_text(repo: str, folder: Path, enabled: bool = True) -> str:
    return f"[{repo}]\nname={repo}\nbaseurl=file://{folder}\ngpgcheck=0\nenabled={int(enabled)}\n"


@dataclass
class RpmWorld:
    root: Path  # the installroot
    bindir: Path  # wrappers for dnf and rpm; first on PATH
    reposdir: Path
    repos: dict[str, Path]

    def env(self) -> dict[str, str]:
        return {**os.environ, "PATH": f"{self.bindir}:{os.environ.get('PATH', '')}"}

    def rpm_qa(self) -> dict[str, str]:
        out = subprocess.run(
            [str(self.bindir / "rpm"), "-qa", "--qf", "%{NAME} %{VERSION}-%{RELEASE}\\n"],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
        return dict(line.split(" ", 1) for line in out.splitlines() if line)

    def dnf(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bindir / "dnf"), "-y", "-q", *args], capture_output=True, text=True, timeout=300
        )

    def reset(self) -> None:
        """Back to the base package alone and the first repository only."""
        extra = [n for n in self.rpm_qa() if n != "brinytest-base"]
        if extra:
            subprocess.run(
                [str(self.bindir / "rpm"), "-e", "--nodeps", *extra], check=True, capture_output=True, timeout=120
            )
        for f in self.reposdir.iterdir():
            f.unlink()
        (self.reposdir / "brinytest.repo").write_text(repo_text("brinytest", self.repos["brinytest"]))
        (self.root / "etc/dnf/plugins/versionlock.list").write_text("")
        for stale in ("var/brinytest-hook.log", "etc/brinytest-hook.conf", "etc/brinytest-hook.conf.rpmsave"):
            (self.root / stale).unlink(missing_ok=True)


def make_world(where: Path, repos: dict[str, Path]) -> RpmWorld:
    """An installroot under ``where`` with the base package installed and wrappers for dnf/rpm."""
    root, bindir = where / "root", where / "bin"
    reposdir = root / "etc" / "yum.repos.d"
    reposdir.mkdir(parents=True, exist_ok=True)
    bindir.mkdir(parents=True, exist_ok=True)
    dnf, rpm = shutil.which("dnf"), shutil.which("rpm")
    # the plugins' config (versionlock's lock list) inside the root, never the host's
    plugins = root / "etc" / "dnf" / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    (plugins / "versionlock.conf").write_text(f"[main]\nenabled = 1\nlocklist = {plugins}/versionlock.list\n")
    (bindir / "dnf").write_text(
        f"#!/bin/sh\nexec {dnf} --installroot={root} --releasever={RELEASEVER} --setopt=reposdir={reposdir} "
        f'--setopt=pluginconfpath={plugins} "$@"\n'
    )
    (bindir / "rpm").write_text(f'#!/bin/sh\nexec {rpm} --root={root} "$@"\n')
    for f in ("dnf", "rpm"):
        (bindir / f).chmod(0o755)
    world = RpmWorld(root, bindir, reposdir, repos)
    world.reset()
    done = world.dnf("install", "brinytest-base")
    if done.returncode != 0:
        raise RuntimeError(f"could not install the base package: {done.stderr}")
    return world


def world_fixture(tmp_path_factory: Any) -> RpmWorld:
    """The body of the session fixtures ``rpm_world``: skips when the tools or root are missing."""
    import pytest

    missing = missing_tools()
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (tests/run.sh installs them as root)")
    if os.geteuid() != 0:
        pytest.skip("rpm scriptlets in an installroot need root (chroot)")
    where = tmp_path_factory.mktemp("rpmworld")
    return make_world(where / "world", build_repos(where / "build"))
