"""``network`` and ``status``: parsers on text recorded from real hosts, and live reads of this host.

The parser expectations are Salt 3007.17's answers for the same ``ip`` /
``netstat`` output (checked with ``dev/saltref.sh ... network.interfaces``
on this machine, whose ``ip addr show`` is ``IP_ADDR`` below).
"""

from __future__ import annotations

import ipaddress
import os
import re

import pytest

from briny.common.exceptions import CommandExecutionError
from briny.common.loader import minion_mods

ANY4 = "0.0.0.0"  # noqa: S104 - the any-address as route tables print it, nothing listens

IP_ADDR = """\
1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default qlen 1000
    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00
    inet 127.0.0.1/8 scope host lo
       valid_lft forever preferred_lft forever
    inet6 ::1/128 scope host
       valid_lft forever preferred_lft forever
2: ifb0: <BROADCAST,NOARP> mtu 1500 qdisc noop state DOWN group default qlen 32
    link/ether 4e:02:c0:53:d7:fd brd ff:ff:ff:ff:ff:ff
4: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1400 qdisc pfifo_fast state UP group default qlen 1000
    link/ether 02:fc:00:00:00:01 brd ff:ff:ff:ff:ff:ff
    inet 192.0.2.2/24 brd 192.0.2.255 scope global eth0
       valid_lft forever preferred_lft forever
    inet 192.0.2.9/24 scope global secondary eth0:1
       valid_lft forever preferred_lft forever
    inet6 fd00::2/64 scope global nodad
       valid_lft forever preferred_lft forever
    inet6 fe80::fc:ff:fe00:1/64 scope link
       valid_lft forever preferred_lft forever
5: eth0.7@eth0: <BROADCAST,MULTICAST> mtu 1500 qdisc noop state DOWN group default qlen 1000
    link/ether 02:fc:00:00:00:01 brd ff:ff:ff:ff:ff:ff
"""


@pytest.fixture
def salt():
    return minion_mods({"id": "m1"}, {"kernel": "Linux", "ps": "ps -efHww"}, {})


@pytest.fixture
def fake_ip(salt, monkeypatch):
    """The network module's ``ip addr show`` answers IP_ADDR."""
    real = salt["cmd.run_all"]

    def run_all(cmd, *args, **kwargs):
        if cmd == ["ip", "addr", "show"]:
            return {"retcode": 0, "stdout": IP_ADDR, "stderr": "", "pid": 0}
        return real(cmd, *args, **kwargs)

    salt._funcs["cmd"] = dict(salt.functions("cmd"), run_all=run_all)
    return salt


def test_parse_ip_addr():
    from briny.minion.host.modules.network import parse_ip_addr

    got = parse_ip_addr(IP_ADDR)
    assert list(got) == ["lo", "ifb0", "eth0", "eth0.7"]
    assert got["lo"] == {
        "up": True,
        "hwaddr": "00:00:00:00:00:00",
        "inet": [{"address": "127.0.0.1", "netmask": "255.0.0.0", "broadcast": None, "label": "lo"}],
        "inet6": [{"address": "::1", "prefixlen": "128", "scope": "host"}],
    }
    assert got["ifb0"] == {"up": False, "hwaddr": "4e:02:c0:53:d7:fd"}
    assert got["eth0"]["inet"] == [
        {"address": "192.0.2.2", "netmask": "255.255.255.0", "broadcast": "192.0.2.255", "label": "eth0"}
    ]
    assert got["eth0"]["secondary"] == [
        {"type": "inet", "address": "192.0.2.9", "netmask": "255.255.255.0", "broadcast": None, "label": "eth0:1"}
    ]
    assert [a["scope"] for a in got["eth0"]["inet6"]] == ["global", "link"]
    assert got["eth0.7"] == {"up": False, "parent": "eth0", "hwaddr": "02:fc:00:00:00:01"}


def test_address_filters(fake_ip):
    salt = fake_ip
    assert salt["network.ip_addrs"]() == ["192.0.2.2", "192.0.2.9"]  # secondary included, loopback not
    assert salt["network.ip_addrs"](include_loopback=True) == ["127.0.0.1", "192.0.2.2", "192.0.2.9"]
    assert salt["network.ip_addrs"](interface="lo") == []
    assert salt["network.ip_addrs"](interface=["l*", "nope"], include_loopback=True) == ["127.0.0.1"]
    assert salt["network.ip_addrs"](cidr="192.0.2.8/29") == ["192.0.2.9"]
    # Python (and so Salt) counts TEST-NET-1 as private
    assert salt["network.ip_addrs"](type="public") == []
    assert salt["network.ipaddrs"](type="private") == ["192.0.2.2", "192.0.2.9"]
    assert salt["network.ip_addrs6"]() == ["fd00::2", "fe80::fc:ff:fe00:1"]
    assert salt["network.ip_addrs6"](include_loopback=True, cidr="::1/128") == ["::1"]
    assert salt["network.hw_addr"]("eth0") == "02:fc:00:00:00:01"
    assert salt["network.interface_ip"]("eth0") == "192.0.2.2"
    assert salt["network.interface_ip"]("ifb0") == ""
    missing = 'Interface "nope" not in available interfaces: "lo", "ifb0", "eth0", "eth0.7"'
    assert salt["network.hw_addr"]("nope") == missing
    assert salt["network.interface"]("nope") == missing
    assert salt["network.subnets"]() == ["192.0.2.0/24"]
    assert salt["network.subnets6"]() == ["fd00::/64", "fe80::/64"]
    assert salt["network.in_subnet"]("192.0.2.0/24") is True
    assert salt["network.in_subnet"]("10.0.0.0/8") is False
    assert salt["network.in_subnet"]("not a cidr") is False
    assert salt["network.ip_networks"](verbose=True) == {
        "192.0.2.0/24": {"address": "192.0.2.0", "netmask": "255.255.255.0", "num_addresses": 256, "prefixlen": 24}
    }
    assert salt["network.ifacestartswith"]("192.0.2.2") == ["eth0"]


def test_route_parsers():
    from briny.minion.host.modules.network import parse_ip_routes, parse_netstat_routes

    v4 = "default via 192.0.2.1 dev eth0 \n192.0.2.0/24 dev eth0 proto kernel scope link src 192.0.2.2 \n"
    v6 = (
        "fd00::/64 dev eth0 proto kernel metric 256 pref medium\n"
        "default via fd00::1 dev eth0 metric 1024 pref medium\n"
        "local ::1 dev lo table local proto kernel metric 0 pref medium\n"
        "multicast ff00::/8 dev eth0 table local proto kernel metric 256 pref medium\n"
    )
    got = parse_ip_routes(v4, v6)
    assert got[0] == {
        "addr_family": "inet",
        "destination": ANY4,
        "gateway": "192.0.2.1",
        "netmask": ANY4,
        "flags": "UG",
        "interface": "eth0",
    }
    assert got[1]["netmask"] == "255.255.255.0" and got[1]["flags"] == "U"
    assert [(r["destination"], r["gateway"]) for r in got[2:]] == [
        ("fd00::/64", "::"),
        ("::/0", "fd00::1"),
        ("::1/128", "::"),
    ]
    ns4 = "0.0.0.0         192.0.2.1       0.0.0.0         UG        0 0          0 eth0\n"
    ns6 = "fd00::/64                      ::                         U    256 2     0 eth0\n"
    assert parse_netstat_routes(ns4, ns6) == [
        {
            "addr_family": "inet",
            "destination": ANY4,
            "gateway": "192.0.2.1",
            "netmask": ANY4,
            "flags": "UG",
            "interface": "eth0",
        },
        {
            "addr_family": "inet6",
            "destination": "fd00::/64",
            "gateway": "::",
            "netmask": "",
            "flags": "U",
            "interface": "eth0",
        },
    ]


def test_live_interfaces_match_the_kernel(salt):
    """This host: every address the kernel lists for an interface is in network.interfaces."""
    ifaces = salt["network.interfaces"]()
    assert set(ifaces) >= {name for _i, name in __import__("socket").if_nameindex()}
    with open("/proc/net/if_inet6") as fh:
        for line in fh:
            parts = line.split()
            addr = str(ipaddress.IPv6Address(bytes.fromhex(parts[0])))
            assert addr in [a["address"] for a in ifaces[parts[5]].get("inet6", [])]
    assert "127.0.0.1" in salt["network.ip_addrs"](include_loopback=True)
    for route in salt["network.default_route"]():
        assert route["destination"] in (ANY4, "::/0", "default")
    with pytest.raises(CommandExecutionError, match="Invalid address family bogus"):
        salt["network.routes"]("bogus")


def test_status_reads_proc(salt):
    mem = salt["status.meminfo"]()
    assert mem["MemTotal"]["unit"] == "kB" and mem["MemTotal"]["value"].isdigit()
    assert salt["status.cpustats"]()["cpu"]["user"] >= 0
    assert salt["status.vmstats"]()["nr_free_pages"] >= 0
    assert isinstance(salt["status.cpuinfo"]()["flags"], list)
    assert "lo" in salt["status.netdev"]() and salt["status.netdev"]()["lo"]["iface"] == "lo"
    assert "TcpExt" in salt["status.netstats"]()
    with open("/proc/version") as fh:
        assert salt["status.version"]() == fh.read().strip()
    st = os.statvfs("/")
    assert salt["status.diskusage"]("/") == {
        "/": {"available": pytest.approx(st.f_bavail * st.f_bsize, rel=0.01), "total": st.f_blocks * st.f_bsize}
    }
    assert "/" in salt["status.diskusage"]()
    up = salt["status.uptime"]()
    with open("/proc/uptime") as fh:
        assert abs(up["seconds"] - int(float(fh.read().split()[0]))) <= 2
    assert re.fullmatch(r"\d+:\d{1,2}", up["time"])
    assert set(salt["status.loadavg"]()) == {"1-min", "5-min", "15-min"}
    assert salt["status.nproc"]() == os.cpu_count()
    assert str(os.getppid()) in salt["status.procs"]()


def test_status_time_and_pid(salt):
    import datetime

    assert salt["status.time"]("%Y") == str(datetime.datetime.now().year)
    assert re.fullmatch(r"\w+, \d\d\. \w+ \d{4} \d\d:\d\d[AP]M", salt["status.time"]())
    # the test process itself runs python: its parent's ps line names pytest
    assert salt["status.pid"]("no-process-has-this-name-zz9") == ""


def test_status_other_kernel_is_salts_message():
    salt = minion_mods({"id": "m1"}, {"kernel": "FreeBSD"}, {})
    assert salt["status.meminfo"]() == "This method is unsupported on the current operating system!"
    with pytest.raises(CommandExecutionError, match="not yet supported on this platform"):
        salt["status.diskusage"]("ufs")
