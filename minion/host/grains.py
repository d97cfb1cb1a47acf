"""Grains: static facts about the managed host, as Salt 3007 reports them.

Runs on the minion (and in ``briny-call``) once at start and on
``saltutil.refresh_grains``; the master only ever sees the cached result.

:func:`core_grains` computes the built-in grains from the kernel (``uname``,
``/proc``, ``/sys``, ioctls) and a few files (``/etc/os-release``,
``/etc/hosts``, ``/etc/resolv.conf``, ``/etc/machine-id``). It never does a
DNS lookup and never starts a subprocess, so it stays in the low
milliseconds; the price is that ``fqdn`` and ``fqdn_ip4/6`` come from
``/etc/hosts`` (the hostname, or the canonical name of the hosts line that
lists it) rather than from the resolver.

:func:`load_grains` layers, as Salt does: core grains, then the YAML file
``grains`` next to the minion config, then ``grains:`` from the config.
"""

from __future__ import annotations

import array
import hashlib
import ipaddress
import logging
import os
import re
import socket
import struct
import sys
import time
import warnings
from typing import Any

import briny

from ._grains_os import os_grains, read_text

log = logging.getLogger(__name__)


def _cpu_grains() -> dict[str, Any]:
    model = ""
    flags: list[str] = []
    for line in read_text("/proc/cpuinfo").splitlines():
        key, sep, val = line.partition(":")
        if not sep:
            continue
        key = key.strip()
        if not model and key in ("model name", "Processor", "cpu model", "cpu"):
            model = val.strip()
        elif not flags and key in ("flags", "Features"):
            flags = val.split()
        if model and flags:
            break
    return {"num_cpus": os.cpu_count() or 1, "cpu_model": model, "cpu_flags": flags}


def _mem_grains() -> dict[str, int]:
    mem = swap = 0
    for line in read_text("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            mem = int(line.split()[1]) // 1024
        elif line.startswith("SwapTotal:"):
            swap = int(line.split()[1]) // 1024
    return {"mem_total": mem, "swap_total": swap}


def _hosts_entries() -> list[tuple[str, list[str]]]:
    entries = []
    for line in read_text("/etc/hosts").splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) >= 2:
            entries.append((fields[0], fields[1:]))
    return entries


def _fqdn_grains(hosts: list[tuple[str, list[str]]]) -> dict[str, Any]:
    hostname = socket.gethostname()
    fqdn = hostname
    if "." not in hostname:
        for _addr, names in hosts:
            if hostname in names and "." in names[0]:
                fqdn = names[0]
                break
    host, _, domain = fqdn.partition(".")
    ip4: set[str] = set()
    ip6: set[str] = set()
    for addr, names in hosts:
        if fqdn in names or hostname in names:
            try:
                ip = ipaddress.ip_address(addr.split("%", 1)[0])
            except ValueError:
                continue
            (ip4 if ip.version == 4 else ip6).add(str(ip))
    return {
        "localhost": hostname,
        "fqdn": fqdn,
        "host": host,
        "domain": domain,
        "fqdn_ip4": sorted(ip4, key=ipaddress.ip_address),
        "fqdn_ip6": sorted(ip6, key=ipaddress.ip_address),
        "fqdns": [],
    }


def _ipv4_by_iface() -> dict[str, list[str]]:
    result: dict[str, list[str]] = {}
    try:
        import fcntl

        size = 40 if struct.calcsize("P") == 8 else 32
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            buf = array.array("B", b"\0" * 16384)
            req = struct.pack("iL", len(buf), buf.buffer_info()[0])
            out = fcntl.ioctl(sock.fileno(), 0x8912, req)  # SIOCGIFCONF
            length = struct.unpack("iL", out)[0]
        data = buf.tobytes()[:length]
        for off in range(0, length, size):
            name = data[off : off + 16].split(b"\0", 1)[0].decode(errors="replace").split(":", 1)[0]
            addr = socket.inet_ntoa(data[off + 20 : off + 24])
            result.setdefault(name, []).append(addr)
    except (OSError, ImportError) as exc:
        log.debug("cannot list IPv4 addresses: %s", exc)
    return result


def _ipv6_by_iface() -> dict[str, list[str]]:
    result: dict[str, list[str]] = {}
    for line in read_text("/proc/net/if_inet6").splitlines():
        parts = line.split()
        if len(parts) < 6:
            continue
        try:
            addr = str(ipaddress.IPv6Address(bytes.fromhex(parts[0])))
        except ValueError:
            continue
        result.setdefault(parts[5], []).append(addr)
    for addrs in result.values():
        addrs.sort(key=ipaddress.ip_address)
    return result


def _net_grains() -> dict[str, Any]:
    try:
        ifaces = [name for _idx, name in socket.if_nameindex()]
    except OSError:
        ifaces = []
    v4 = _ipv4_by_iface()
    v6 = _ipv6_by_iface()
    for name in list(v4) + list(v6):
        if name not in ifaces:
            ifaces.append(name)
    hwaddr = {}
    for name in ifaces:
        mac = read_text(f"/sys/class/net/{name}/address").strip()
        if mac:
            hwaddr[name] = mac
    ip4_if = {name: list(v4.get(name, [])) for name in ifaces}
    ip6_if = {name: list(v6.get(name, [])) for name in ifaces}
    all4 = sorted({a for addrs in v4.values() for a in addrs}, key=ipaddress.ip_address)
    all6 = sorted({a for addrs in v6.values() for a in addrs}, key=ipaddress.ip_address)
    gw4: str | bool = False
    for line in read_text("/proc/net/route").splitlines()[1:]:
        parts = line.split()
        if len(parts) > 7 and parts[1] == "00000000" and parts[7] == "00000000" and parts[2] != "00000000":
            gw4 = socket.inet_ntoa(struct.pack("<I", int(parts[2], 16)))
            break
    gw6: str | bool = False
    for line in read_text("/proc/net/ipv6_route").splitlines():
        parts = line.split()
        if len(parts) > 4 and parts[0] == "0" * 32 and parts[1] == "00" and parts[4] != "0" * 32:
            gw6 = str(ipaddress.IPv6Address(bytes.fromhex(parts[4])))
            break
    return {
        "hwaddr_interfaces": hwaddr,
        "ip4_interfaces": ip4_if,
        "ip6_interfaces": ip6_if,
        "ip_interfaces": {name: ip4_if[name] + ip6_if[name] for name in ifaces},
        "ipv4": all4,
        "ipv6": all6,
        "ip_gw": bool(gw4 or gw6),
        "ip4_gw": gw4,
        "ip6_gw": gw6,
    }


def _dns_grains() -> dict[str, Any]:
    dns: dict[str, Any] = {
        "nameservers": [],
        "ip4_nameservers": [],
        "ip6_nameservers": [],
        "sortlist": [],
        "domain": "",
        "search": [],
        "options": [],
    }
    for line in read_text("/etc/resolv.conf").splitlines():
        parts = line.split("#", 1)[0].split(";", 1)[0].split()
        if not parts:
            continue
        key, args = parts[0], parts[1:]
        if key == "nameserver" and args:
            try:
                ip = ipaddress.ip_address(args[0].split("%", 1)[0])
            except ValueError:
                continue
            dns["nameservers"].append(str(ip))
            dns["ip4_nameservers" if ip.version == 4 else "ip6_nameservers"].append(str(ip))
        elif key == "domain" and args:
            dns["domain"] = args[0]
        elif key == "search":
            dns["search"] = args
        elif key == "sortlist":
            dns["sortlist"] = args
        elif key == "options":
            dns["options"].extend(args)
    return {"dns": dns}


def _init_grain() -> str:
    if os.path.isdir("/run/systemd/system"):
        return "systemd"
    try:
        with open("/proc/1/cmdline", "rb") as fh:
            cmdline = [p.decode(errors="replace") for p in fh.read().split(b"\0") if p]
    except OSError:
        return "unknown"
    if not cmdline:
        return "unknown"
    first = os.path.basename(cmdline[0])
    if first in (
        "systemd",
        "upstart",
        "openrc-init",
        "runit",
        "runit-init",
        "s6-svscan",
        "supervisord",
        "dumb-init",
        "tini",
    ):
        return {"runit-init": "runit", "openrc-init": "openrc", "s6-svscan": "s6"}.get(first, first)
    if "/sbin/my_init" in cmdline:
        return "runit"
    if first == "init":
        try:
            target = os.path.realpath(cmdline[0] if os.path.isabs(cmdline[0]) else "/sbin/init")
        except OSError:
            target = ""
        if "systemd" in target:
            return "systemd"
        if "upstart" in target:
            return "upstart"
        return "sysvinit"
    return "unknown"


def _virtual_grains() -> dict[str, Any]:
    if os.path.exists("/.dockerenv"):
        return {"virtual": "container", "virtual_subtype": "Docker"}
    if os.path.exists("/run/.containerenv"):
        return {"virtual": "container", "virtual_subtype": "Podman"}
    cgroup = read_text("/proc/1/cgroup")
    if "docker" in cgroup:
        return {"virtual": "container", "virtual_subtype": "Docker"}
    if "kubepods" in cgroup:
        return {"virtual": "container", "virtual_subtype": "Kubernetes"}
    if "/lxc/" in cgroup or os.environ.get("container") == "lxc":
        return {"virtual": "LXC"}
    if os.path.isdir("/proc/vz") and not os.path.isdir("/proc/bc"):
        return {"virtual": "openvzve"}
    vendor = (read_text("/sys/class/dmi/id/sys_vendor") + " " + read_text("/sys/class/dmi/id/product_name")).lower()
    for needle, value in (
        ("vmware", "VMware"),
        ("virtualbox", "VirtualBox"),
        ("kvm", "kvm"),
        ("qemu", "kvm"),
        ("microsoft corporation virtual", "VirtualPC"),
        ("xen", "xen"),
        ("amazon ec2", "kvm"),
        ("google compute engine", "kvm"),
        ("bochs", "kvm"),
        ("parallels", "Parallels"),
    ):
        if needle in vendor:
            return {"virtual": value}
    if os.path.isdir("/proc/xen"):
        return {"virtual": "xen"}
    return {"virtual": "physical"}


def _user_grains() -> dict[str, Any]:
    import grp
    import pwd

    uid = os.geteuid()
    gid = os.getegid()
    try:
        username = pwd.getpwuid(uid).pw_name
    except KeyError:
        username = str(uid)
    try:
        groupname = grp.getgrgid(gid).gr_name
    except KeyError:
        groupname = str(gid)
    return {"username": username, "groupname": groupname, "pid": os.getpid(), "gid": gid, "uid": uid}


def _kernelparams() -> list[list[str | None]]:
    params: list[list[str | None]] = []
    for word in read_text("/proc/cmdline").split():
        key, sep, val = word.partition("=")
        if sep and len(val) >= 2 and val[0] == val[-1] == '"':
            val = val[1:-1]
        params.append([key, val if sep else None])
    return params


def _locale_grains() -> dict[str, Any]:
    import locale

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            lang, enc = locale.getdefaultlocale()
        except ValueError:
            lang, enc = None, None
    return {
        "locale_info": {
            "defaultlanguage": lang or "unknown",
            "defaultencoding": enc or "unknown",
            "detectedencoding": sys.getdefaultencoding(),
            "timezone": time.tzname[0],
        }
    }


def _disk_grains() -> dict[str, Any]:
    disks: list[str] = []
    ssds: list[str] = []
    try:
        names = sorted(os.listdir("/sys/block"))
    except OSError:
        names = []
    for name in names:
        if re.match(r"^(loop|ram|zram|dm-|md|sr|fd|nbd)\d*", name):
            continue
        disks.append(name)
        if read_text(f"/sys/block/{name}/queue/rotational").strip() == "0":
            ssds.append(name)
    return {"disks": disks, "ssds": ssds}


def core_grains(opts: dict[str, Any]) -> dict[str, Any]:
    """The built-in grains of this host (no DNS, no subprocesses)."""
    uname = os.uname()
    kernel = uname.sysname
    machine = uname.machine
    hosts = _hosts_entries()
    minion_id = opts.get("id") or socket.gethostname()
    grains: dict[str, Any] = {
        "cwd": os.getcwd(),
        "master": opts.get("master", "salt"),
        "id": minion_id,
        "server_id": abs(int(hashlib.sha256(str(minion_id).encode()).hexdigest(), 16) % (2**31)),
        "machine_id": (read_text("/etc/machine-id") or read_text("/var/lib/dbus/machine-id")).strip(),
    }
    grains.update(_fqdn_grains(hosts))
    grains.update(_net_grains())
    grains.update(_dns_grains())
    if kernel == "Linux":
        grains["kernelparams"] = _kernelparams()
    grains.update(_locale_grains())
    grains.update(
        {
            "kernel": kernel,
            "nodename": uname.nodename,
            "kernelrelease": uname.release,
            "kernelversion": uname.version,
            "cpuarch": machine,
        }
    )
    grains["init"] = _init_grain() if kernel == "Linux" else "unknown"
    grains.update(os_grains(kernel, machine))
    grains.update(_cpu_grains())
    grains.update(_mem_grains())
    grains.update(_virtual_grains())
    grains["ps"] = "ps auxwww" if grains["os"] in ("FreeBSD", "NetBSD", "OpenBSD", "MacOS") else "ps -efHww"
    path = os.environ.get("PATH", "")
    grains.update(
        {
            "path": path,
            "systempath": path.split(os.pathsep) if path else [],
            "pythonexecutable": sys.executable,
            "pythonpath": list(sys.path),
            "pythonversion": list(sys.version_info),
            "saltpath": os.path.dirname(os.path.abspath(briny.__file__)),
            "saltversion": briny.SALT_COMPAT_VERSION,
            "saltversioninfo": list(briny.SALT_COMPAT_VERSIONINFO),
        }
    )
    grains.update(_disk_grains())
    grains["shell"] = os.environ.get("SHELL", "/bin/sh")
    grains["transactional"] = False
    grains["efi"] = os.path.exists("/sys/firmware/efi/systab")
    grains["efi-secure-boot"] = False
    try:
        grains["fibre_channel_host"] = bool(os.listdir("/sys/class/fc_host"))
    except OSError:
        grains["fibre_channel_host"] = False
    grains.update(_user_grains())
    return grains


def grains_file(opts: dict[str, Any]) -> str | None:
    """The minion's grains file, where ``grains.setval`` persists grains: ``grains`` beside the
    config file (``/etc/salt/grains`` for ``/etc/salt/minion``), as Salt keeps it; None with no
    config file."""
    conf_file = opts.get("conf_file") or ""
    conf_dir = opts.get("conf_dir") or (conf_file if os.path.isdir(conf_file) else os.path.dirname(conf_file))
    if not conf_dir:
        return None
    return os.path.join(conf_dir, "grains")


def custom_grains(opts: dict[str, Any], grains: dict[str, Any]) -> dict[str, Any]:
    """Grains from custom grains modules (``_grains`` synced to ``extension_modules/grains``,
    or read in place from a local tree), as Salt runs them.

    The modules come from the loader (:func:`briny.common.loader.grain_funcs`), so
    ``__virtual__`` (False skips a module, a name renames it), ``__virtualname__``,
    ``__func_alias__`` and private sibling files work as in any module. Every public
    function is called, module by module in name order, function by function in
    name order: with the grains so far when it takes a ``grains`` argument; one that
    needs other arguments is skipped. A dict it returns is merged in. The modules'
    ``__grains__`` is the grains found so far. A module or function that fails is
    logged and skipped (Salt logs it as critical): grains never stop a minion.
    """
    import inspect

    from briny.common import modfolders
    from briny.common.loader import grain_funcs

    # grains are (re)loaded rarely (start, saltutil.sync_grains / refresh_grains): a refresh reads
    # the custom folders from disk again, as Salt's does, so a _grains module put there by anything
    # (by hand, briny-call --local with no daemon) is found; a sync in a job process also tells
    # the daemon itself (modules_changed on the job channel)
    modfolders.forget()
    found: dict[str, Any] = {}
    current = dict(grains)  # the modules' __grains__: grows as functions answer
    mods = grain_funcs(opts, current)
    for name in mods.list_modules():
        for fun, func in sorted(mods.functions(name).items()):
            try:
                params = inspect.signature(func).parameters
            except (TypeError, ValueError):
                continue
            if "grains" not in params and any(
                p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params.values()
            ):
                log.debug("custom grains function %s.%s takes arguments; not a grain function", name, fun)
                continue
            try:
                value = func(grains=dict(current)) if "grains" in params else func()
            except Exception:  # a custom grains function must never stop the minion
                log.critical("Failed to load grains defined in grain file %s.%s", name, fun, exc_info=True)
                continue
            if isinstance(value, dict):
                found.update(value)
                current.update(value)
    return found


def load_grains(opts: dict[str, Any]) -> dict[str, Any]:
    """Core grains, then custom grains modules, then the ``grains`` file beside the config,
    then ``grains:`` from the config (Salt's order: configured grains win)."""
    grains = core_grains(opts)
    grains.update(custom_grains(opts, grains))
    path = grains_file(opts)
    if path is not None and os.path.isfile(path):
        import yaml  # only when there is a grains file: keeps start-up lean

        try:
            with open(path, encoding="utf-8") as fh:
                data = yaml.safe_load(fh)
        except (OSError, yaml.YAMLError) as exc:
            log.error("Ignoring the grains file %s: %s", path, exc)
            data = None
        if isinstance(data, dict):
            grains.update(data)
        elif data is not None:
            log.error("Ignoring the grains file %s: it must hold a mapping, not %s", path, type(data).__name__)
    extra = opts.get("grains")
    if isinstance(extra, dict):
        grains.update(extra)
    return grains
