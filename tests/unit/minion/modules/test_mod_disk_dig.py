"""``disk`` and ``dig``: parsing of recorded command output (Salt 3007.17's answers for the same
output), and live reads of this host (``df``; ``dig`` against a loopback address where no
resolver listens, which is what Salt returns offline)."""

from __future__ import annotations

import os
import shutil

import pytest

from briny.common.exceptions import CommandExecutionError
from briny.common.loader import minion_mods

DF = """\
Filesystem     1024-blocks      Used Available Capacity Mounted on
/dev/sda1        264212084 179640704  71085352      72% /
tmpfs             24684084         0  24684084       0% /dev/shm
/dev/mapper/a-very-long-volume-name
                  10000000   5000000   5000000      50% /srv/data
"""
DF_I = """\
Filesystem       Inodes  IUsed    IFree IUse% Mounted on
/dev/sda1      16777216 559118 16218098    4% /
"""
BLKID = (
    '/dev/sda1: UUID="1234-abcd" BLOCK_SIZE="4096" TYPE="ext4" PARTUUID="x-01"\n/dev/sdb: LABEL="my disk" TYPE="vfat"\n'
)
DIG = {
    ("A",): "93.184.215.14\n;; some warning\n",
    ("AAAA",): "2606:2800:21f:cb07:6820:80da:af6b:8b2c\n",
    ("MX",): "10 mail.example.com.\n20 mx2.example.com.\n",
    ("SPF",): "",
    ("TXT",): '"v=spf1 ip4:192.0.2.0/24 include:_spf.example.net -all"\n',
    ("NS",): "a.iana-servers.net.\nb.iana-servers.net.\n",
}


def fake(salt, answers):
    """Replace cmd.run / cmd.run_all with recorded outputs: ``answers(cmd) -> (retcode, stdout)``."""

    def run_all(cmd, *args, **kwargs):
        code, out = answers(cmd)
        return {"retcode": code, "stdout": out.rstrip(), "stderr": "", "pid": 0}  # cmd.run* rstrip

    def run(cmd, *args, **kwargs):
        return answers(cmd)[1].rstrip()

    salt._funcs["cmd"] = dict(salt.functions("cmd"), run_all=run_all, run=run)
    return salt


@pytest.fixture
def salt():
    return minion_mods({"id": "m1"}, {"kernel": "Linux"}, {})


def test_disk_parsing(salt):
    fake(salt, lambda cmd: (0, DF_I if cmd.startswith("df -iP") else DF))
    usage = salt["disk.usage"]()
    assert usage["/"] == {
        "filesystem": "/dev/sda1",
        "1K-blocks": "264212084",
        "used": "179640704",
        "available": "71085352",
        "capacity": "72%",
    }
    assert usage["/srv/data"]["filesystem"] == "/dev/mapper/a-very-long-volume-name"  # wrapped line joined
    assert salt["disk.percent"]() == {"/": "72%", "/dev/shm": "0%", "/srv/data": "50%"}
    assert salt["disk.percent"]("/dev/shm") == "0%"
    assert salt["disk.percent"]("/nope") == {}
    assert salt["disk.inodeusage"]() == {
        "/": {"inodes": "16777216", "used": "559118", "free": "16218098", "use": "4%", "filesystem": "/dev/sda1"}
    }
    with pytest.raises(CommandExecutionError, match="Invalid flag passed to disk.usage"):
        salt["disk.usage"](args="z")


def test_blkid_parsing(salt):
    if not shutil.which("blkid"):
        pytest.skip("no blkid on this host")
    fake(salt, lambda cmd: (0, BLKID))
    assert salt["disk.blkid"]() == {
        "/dev/sda1": {"UUID": "1234-abcd", "BLOCK_SIZE": "4096", "TYPE": "ext4", "PARTUUID": "x-01"},
        "/dev/sdb": {"LABEL": "my disk", "TYPE": "vfat"},
    }
    fake(salt, lambda cmd: (2, ""))
    assert salt["disk.blkid"]("/dev/nope") == {}


def test_disk_live(salt):
    usage = salt["disk.usage"]()
    st = os.statvfs("/")
    assert int(usage["/"]["1K-blocks"]) == st.f_blocks * st.f_frsize // 1024
    assert salt["disk.percent"]("/").endswith("%")
    assert "/" in salt["disk.inodeusage"]()


def dig_answers(cmd):
    assert cmd[:2] == ["dig", "+short"]
    rtype = cmd[3] if len(cmd) > 3 and not cmd[3].startswith("@") else None
    if cmd[2] == "_spf.example.net":
        return 0, '"v=spf1 ip6:2001:db8::/32 ~all"\n'
    if rtype == "A" and cmd[2].endswith("iana-servers.net."):
        return 0, "199.43.135.53\n"
    return 0, DIG.get((rtype,), "")


def test_dig_parsing(salt):
    if not shutil.which("dig"):
        pytest.skip("no dig on this host (bind9-dnsutils)")
    fake(salt, dig_answers)
    assert salt["dig.A"]("example.com") == ["93.184.215.14"]  # only the lines that are addresses
    assert salt["dig.a"]("example.com") == ["93.184.215.14"]
    assert salt["dig.AAAA"]("example.com") == ["2606:2800:21f:cb07:6820:80da:af6b:8b2c"]
    assert salt["dig.MX"]("example.com") == [["10", "mail.example.com."], ["20", "mx2.example.com."]]
    assert salt["dig.NS"]("example.com") == ["199.43.135.53", "199.43.135.53"]
    assert salt["dig.NS"]("example.com", resolve=False) == ["a.iana-servers.net.", "b.iana-servers.net."]
    # no SPF record: the TXT one, with its include: followed
    assert salt["dig.SPF"]("example.com") == ["192.0.2.0/24", "2001:db8::/32"]
    assert salt["dig.check_ip"]("10.0.0.1/33") is False
    assert salt["dig.check_ip"]("::1/64") is True


def test_dig_without_a_resolver_returns_salts_empty_list(salt):
    if not shutil.which("dig"):
        pytest.skip("no dig on this host (bind9-dnsutils)")
    # a loopback address where no resolver listens: dig fails (exit 9), Salt returns []
    for fun in ("dig.A", "dig.AAAA", "dig.MX", "dig.TXT", "dig.NS", "dig.SPF", "dig.PTR"):
        assert salt[fun]("example.invalid", nameserver="127.0.0.254") == [], fun


def test_dig_is_not_available_without_the_binary(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    salt = minion_mods({"id": "m1"}, {"kernel": "Linux"}, {})
    assert "dig.A" not in salt
