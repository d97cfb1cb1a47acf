"""Core grains against what this host really has; layering of grains sources."""

from __future__ import annotations

import os
import platform
import socket
import sys

import pytest

import briny
from briny.minion.host import _grains_os
from briny.minion.host import grains as grains_mod
from briny.minion.host.grains import core_grains, load_grains


@pytest.fixture(scope="module")
def grains():
    return core_grains({"id": "minion1", "master": "salt"})


def _os_release():
    data = {}
    for path in ("/etc/os-release", "/usr/lib/os-release"):
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                for line in fh:
                    if "=" in line and not line.startswith("#"):
                        key, _, val = line.strip().partition("=")
                        data[key] = val.strip("\"'")
            break
    return data


def test_identity_and_types(grains):
    assert grains["id"] == "minion1"
    assert grains["master"] == "salt"
    assert grains["saltversion"] == briny.SALT_COMPAT_VERSION
    assert grains["saltversioninfo"] == list(briny.SALT_COMPAT_VERSIONINFO)
    assert grains["pythonversion"] == list(sys.version_info)
    assert grains["pythonexecutable"] == sys.executable
    types = {
        "num_cpus": int,
        "mem_total": int,
        "swap_total": int,
        "pid": int,
        "uid": int,
        "gid": int,
        "ipv4": list,
        "ipv6": list,
        "kernelparams": list,
        "osmajorrelease": int,
        "osrelease": str,
        "os": str,
        "path": str,
        "systempath": list,
        "server_id": int,
        "ip4_interfaces": dict,
        "dns": dict,
        "locale_info": dict,
        "ip_gw": bool,
    }
    for key, typ in types.items():
        if key == "osmajorrelease" and key not in grains:
            continue
        assert isinstance(grains[key], typ), key


def test_kernel_grains(grains):
    uname = os.uname()
    assert grains["kernel"] == uname.sysname == platform.system()
    assert grains["kernelrelease"] == uname.release
    assert grains["kernelversion"] == uname.version
    assert grains["nodename"] == uname.nodename
    assert grains["cpuarch"] == uname.machine


def test_os_grains_follow_os_release(grains):
    rel = _os_release()
    if not rel:
        pytest.skip("no os-release on this host")
    assert grains["osfullname"] == rel.get("NAME")
    assert grains["osrelease"] == rel.get("VERSION_ID", "")
    if rel.get("VERSION_CODENAME"):
        assert grains["oscodename"] == rel["VERSION_CODENAME"]
    if rel.get("ID") == "debian":
        assert grains["os"] == "Debian" and grains["os_family"] == "Debian"
        major = int(rel["VERSION_ID"].split(".")[0])
        assert grains["osmajorrelease"] == major
        assert grains["osfinger"] == f"Debian-{major}"
        assert grains["osrelease_info"] == [int(p) for p in rel["VERSION_ID"].split(".")]
        expected_arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine)
        assert grains["osarch"] == expected_arch


def test_os_family_mapping(monkeypatch):
    def fake(text):
        monkeypatch.setattr(
            _grains_os, "_os_release", lambda root="": dict(line.split("=", 1) for line in text.strip().splitlines())
        )

    fake("ID=ubuntu\nNAME=Ubuntu\nVERSION_ID=22.04\nVERSION_CODENAME=jammy")
    g = _grains_os.os_grains("Linux", "x86_64")
    assert (g["os"], g["os_family"], g["osfinger"], g["osmajorrelease"], g["osarch"]) == (
        "Ubuntu",
        "Debian",
        "Ubuntu-22.04",
        22,
        "amd64",
    )
    fake("ID=rocky\nNAME=Rocky Linux\nVERSION_ID=9.3\nVERSION=9.3 (Blue Onyx)")
    g = _grains_os.os_grains("Linux", "x86_64")
    assert (g["os"], g["os_family"], g["osfinger"], g["oscodename"], g["osarch"]) == (
        "Rocky",
        "RedHat",
        "Rocky Linux-9",
        "Blue Onyx",
        "x86_64",
    )
    fake("ID=centos\nNAME=CentOS Stream\nVERSION_ID=9")
    assert _grains_os.os_grains("Linux", "x86_64")["os"] == "CentOS Stream"
    fake("ID=someos\nID_LIKE=rhel fedora\nNAME=Some OS\nVERSION_ID=1")
    g = _grains_os.os_grains("Linux", "x86_64")
    # As Salt 3007: an os it has no name for keeps its NAME, and is its own family.
    assert (g["os"], g["os_family"]) == ("Some OS", "Some OS")


def test_cpu_and_memory(grains):
    assert grains["num_cpus"] == os.cpu_count()
    with open("/proc/meminfo", encoding="utf-8") as fh:
        meminfo = {line.split(":")[0]: int(line.split()[1]) for line in fh if line.split()[1].isdigit()}
    assert grains["mem_total"] == meminfo["MemTotal"] // 1024
    assert grains["swap_total"] == meminfo.get("SwapTotal", 0) // 1024
    with open("/proc/cpuinfo", encoding="utf-8") as fh:
        text = fh.read()
    if "model name" in text:
        model = text.split("model name", 1)[1].split(":", 1)[1].splitlines()[0].strip()
        assert grains["cpu_model"] == model


def test_host_names(grains):
    hostname = socket.gethostname()
    assert grains["localhost"] == hostname
    assert grains["fqdn"].split(".")[0] == grains["host"]
    assert grains["fqdn"] == grains["host"] + ("." + grains["domain"] if grains["domain"] else "")
    assert grains["fqdn"] == hostname or grains["fqdn"].startswith(hostname + ".")


def test_fqdn_from_etc_hosts(monkeypatch):
    monkeypatch.setattr(socket, "gethostname", lambda: "box")
    hosts = [("10.0.0.5", ["box.corp.example", "box"]), ("127.0.0.1", ["localhost"]), ("fd00::5", ["box"])]
    g = grains_mod._fqdn_grains(hosts)
    assert (g["fqdn"], g["host"], g["domain"]) == ("box.corp.example", "box", "corp.example")
    assert g["fqdn_ip4"] == ["10.0.0.5"] and g["fqdn_ip6"] == ["fd00::5"]
    g = grains_mod._fqdn_grains([("127.0.0.1", ["localhost", "box"])])
    assert (g["fqdn"], g["domain"]) == ("box", "")


def test_addresses(grains):
    assert "127.0.0.1" in grains["ipv4"]
    assert grains["ip4_interfaces"].get("lo") == ["127.0.0.1"]
    all_iface_v4 = sorted({a for addrs in grains["ip4_interfaces"].values() for a in addrs})
    assert sorted(grains["ipv4"]) == all_iface_v4
    if os.path.exists("/proc/net/if_inet6"):
        with open("/proc/net/if_inet6", encoding="utf-8") as fh:
            count = len({line.split()[0] for line in fh if line.strip()})
        assert len(grains["ipv6"]) == count
    for name, addrs in grains["ip_interfaces"].items():
        assert addrs == grains["ip4_interfaces"][name] + grains["ip6_interfaces"][name]


def test_user_and_process(grains):
    import grp
    import pwd

    assert grains["uid"] == os.geteuid()
    assert grains["gid"] == os.getegid()
    assert grains["username"] == pwd.getpwuid(os.geteuid()).pw_name
    assert grains["groupname"] == grp.getgrgid(os.getegid()).gr_name
    assert grains["pid"] == os.getpid()
    assert grains["shell"] == os.environ.get("SHELL", "/bin/sh")
    assert grains["path"] == os.environ.get("PATH", "")


def test_init_and_virtual(grains):
    if os.path.isdir("/run/systemd/system"):
        assert grains["init"] == "systemd"
    assert isinstance(grains["init"], str) and grains["init"]
    if os.path.exists("/.dockerenv"):
        assert (grains["virtual"], grains["virtual_subtype"]) == ("container", "Docker")
    assert grains["virtual"]


def test_machine_id_and_server_id(grains):
    if os.path.exists("/etc/machine-id"):
        with open("/etc/machine-id", encoding="utf-8") as fh:
            assert grains["machine_id"] == fh.read().strip()
    # Salt's server_id for id "golden", recorded from the reference
    assert core_grains({"id": "golden"})["server_id"] == 609009245


def test_cheap_no_dns_and_no_subprocesses(monkeypatch):
    """Grains come from files and syscalls only (speed is for bench/, not a timed test)."""
    import socket
    import subprocess

    def refuse(*args, **kwargs):
        raise AssertionError(f"grains must not call this: {args[:1]}")

    for name in ("getfqdn", "gethostbyname", "gethostbyname_ex", "gethostbyaddr", "getaddrinfo"):
        monkeypatch.setattr(socket, name, refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)
    grains = core_grains({"id": "x"})
    assert grains["id"] == "x" and grains["fqdn"] and grains["num_cpus"] >= 1


def test_load_grains_layers(tmp_path):
    (tmp_path / "grains").write_text("roles: [web]\nos: FromFile\nfilekey: 1\n", encoding="utf-8")
    opts = {"id": "m1", "conf_dir": str(tmp_path), "grains": {"os": "FromConfig", "cfgkey": 2}}
    g = load_grains(opts)
    assert g["os"] == "FromConfig"
    assert g["roles"] == ["web"]
    assert g["filekey"] == 1 and g["cfgkey"] == 2
    assert g["kernel"] == os.uname().sysname


def test_load_grains_bad_file_is_ignored(tmp_path, caplog):
    (tmp_path / "grains").write_text("- just\n- a list\n", encoding="utf-8")
    g = load_grains({"id": "m1", "conf_dir": str(tmp_path)})
    assert g["id"] == "m1"
    assert "must hold a mapping" in caplog.text
    (tmp_path / "grains").write_text("a: [unclosed\n", encoding="utf-8")
    g = load_grains({"id": "m1", "conf_dir": str(tmp_path)})
    assert "a" not in g
    assert "Ignoring the grains file" in caplog.text


def test_load_grains_without_conf_dir():
    g = load_grains({"id": "m1", "grains": {"extra": True}})
    assert g["extra"] is True and g["id"] == "m1"


def test_custom_grains_modules(tmp_path):
    from briny.minion.host.grains import load_grains

    ext = tmp_path / "extmods" / "grains"
    ext.mkdir(parents=True)
    (ext / "roles.py").write_text(
        "def roles():\n    return {'roles': ['web'], 'os': 'Overridden'}\n"
        "def from_core(grains):\n    return {'kernel_again': grains['kernel']}\n"
        "def needs_args(x):\n    return {'never': x}\n"
        "def _private():\n    return {'hidden': 1}\n"
    )
    (ext / "off.py").write_text("def __virtual__():\n    return False\ndef g():\n    return {'off': 1}\n")
    (ext / "broken.py").write_text("raise RuntimeError('boom')\n")
    opts = {"id": "m1", "extension_modules": str(tmp_path / "extmods"), "grains": {"os": "FromConfig"}}
    grains = load_grains(opts)
    assert grains["roles"] == ["web"] and grains["kernel_again"] == grains["kernel"]
    assert "never" not in grains and "hidden" not in grains and "off" not in grains
    assert grains["os"] == "FromConfig"  # configured grains win over custom modules


def test_custom_grains_modules_are_loaded_as_salt_loads_them(tmp_path, caplog):
    """Through the loader: __virtual__ names and refusals, __virtualname__, __func_alias__, private
    sibling files; a failing function is logged (critical, as Salt) and the others still count;
    __grains__ and a ``grains`` argument see the grains found so far."""
    from briny.minion.host.grains import custom_grains

    ext = tmp_path / "extmods" / "grains"
    ext.mkdir(parents=True)
    (ext / "a_first.py").write_text("def first():\n    return {'first': 1}\n")
    (ext / "b_virtual.py").write_text(
        "__virtualname__ = 'renamed'\n"
        "__func_alias__ = {'list_': 'list'}\n"
        "from ._b_helpers import _value\n"
        "def __virtual__():\n    return __virtualname__\n"
        "def list_():\n    return {'aliased': _value()}\n"
        "def sees(grains):\n    return {'saw_first': grains.get('first'), 'dunder_first': __grains__.get('first')}\n"
        "def broken():\n    raise ValueError('bad grain')\n"
        "def last():\n    return {'after_broken': True}\n"
    )
    (ext / "_b_helpers.py").write_text("def _value():\n    return __opts__['id'] + '-helper'\n")
    (ext / "c_refused.py").write_text(
        "def __virtual__():\n    return (False, 'not here')\ndef g():\n    return {'refused': 1}\n"
    )
    opts = {"id": "m1", "extension_modules": str(tmp_path / "extmods")}
    with caplog.at_level("CRITICAL", logger="briny.minion.host.grains"):
        found = custom_grains(opts, {"kernel": "Linux"})
    assert found == {
        "first": 1,
        "aliased": "m1-helper",
        "saw_first": 1,
        "dunder_first": 1,
        "after_broken": True,
    }
    assert [r.levelname for r in caplog.records] == ["CRITICAL"]
    assert "renamed.broken" in caplog.records[0].getMessage() and "bad grain" in caplog.text
