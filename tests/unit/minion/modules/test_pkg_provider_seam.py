"""The ``pkg`` provider is chosen from the grains, as Salt's ``__virtual__`` chooses it: apt only
on the Debian family, whatever tools the host has (this Debian host has apt-get)."""

from __future__ import annotations

import shutil

import pytest

from briny.common import loader

ROCKY = {"os": "Rocky", "os_family": "RedHat", "osmajorrelease": 9}


def _pkg_module(grains: dict[str, object]) -> str | None:
    salt = loader.minion_mods({"id": "t", "test": False, "grains": grains})
    if "pkg.list_pkgs" not in salt:
        return None
    return salt["pkg.list_pkgs"].__module__.rsplit(".", 1)[-1]


@pytest.mark.skipif(not shutil.which("apt-get"), reason="needs a host with apt-get")
def test_apt_does_not_load_on_a_redhat_minion() -> None:
    assert _pkg_module(ROCKY) != "aptpkg"
    assert (
        _pkg_module({"os": "SUSE", "os_family": "Suse"}) is None
        or _pkg_module({"os": "SUSE", "os_family": "Suse"}) != "aptpkg"
    )


@pytest.mark.skipif(not shutil.which("apt-get"), reason="needs a host with apt-get")
def test_apt_loads_on_a_debian_minion() -> None:
    assert _pkg_module({"os": "Debian", "os_family": "Debian"}) == "aptpkg"


def test_debconf_is_debian_only() -> None:
    salt = loader.minion_mods({"id": "t", "test": False, "grains": ROCKY})
    assert "debconf.get_selections" not in salt
    with pytest.raises(Exception, match="unsupported OS family"):
        salt["debconf.get_selections"]()


def test_no_dnf_on_a_redhat_minion_says_so(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no dnf5, dnf, tdnf, yum
    salt = loader.minion_mods({"id": "t", "test": False, "grains": ROCKY})
    assert "pkg.install" not in salt
    with pytest.raises(Exception, match="'pkg' __virtual__ returned False: DNF nor YUM found"):
        salt["pkg.install"]("x")


def test_dnf_is_found_before_yum_in_a_folder(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    for tool in ("yum", "dnf"):
        (tmp_path / tool).write_text("#!/bin/sh\nexit 0\n")
        (tmp_path / tool).chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    salt = loader.minion_mods({"id": "t", "test": False, "grains": ROCKY})
    mod = salt.module("pkg")
    assert mod is not None and mod.__name__.endswith("yumpkg")
    assert mod._yum() == "dnf"
