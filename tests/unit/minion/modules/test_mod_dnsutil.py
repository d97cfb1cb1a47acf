"""``dnsutil``: the bad inputs Salt answers with a traceback fail with a clear error; the lookups
without ``dig`` (Salt's fallbacks). Salt's answers for the rest: tests/golden/functions."""

from __future__ import annotations

import pytest

from briny.common.exceptions import CommandExecutionError, SaltInvocationError
from briny.common.loader import minion_mods


@pytest.fixture
def salt():
    return minion_mods({"id": "m1"}, {"kernel": "Linux"}, {})


def test_hosts_edits_need_their_entries(salt, tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 localhost\n")
    with pytest.raises(SaltInvocationError, match="dnsutil.hosts_append needs entries"):
        salt["dnsutil.hosts_append"](str(hosts), "10.0.0.1")
    with pytest.raises(SaltInvocationError, match="dnsutil.hosts_remove needs entries"):
        salt["dnsutil.hosts_remove"](str(hosts))
    with pytest.raises(CommandExecutionError, match=f"Unable to read {tmp_path}/missing"):
        salt["dnsutil.hosts_remove"](str(tmp_path / "missing"), "a.example")
    assert hosts.read_text() == "127.0.0.1 localhost\n"


def test_parse_zone_names_what_it_cannot_read(salt):
    with pytest.raises(CommandExecutionError, match="The SOA record is incomplete"):
        salt["dnsutil.parse_zone"](zone="@ IN SOA ns1. admin. ( 1 2 )\n")
    assert salt["dnsutil.parse_zone"](zone="$TTL 60\n") == {"TTL": "60"}
    assert salt["dnsutil.parse_zone"](zone="$ORIGIN e.\n@ IN SOA ns. a.b. 1 1H 2D 3W x\n") == {
        "ORIGIN": "e.",
        "NETWORK": "IN",
        "SOURCE": "ns.",
        "CONTACT": "a@b.",
        "SERIAL": "1",
        "REFRESH": 3600,
        "RETRY": 172800,
        "EXPIRE": 604800,
        "MINTTL": 604800,
    }


def test_lookups_without_dig_use_the_resolver_or_say_dig_is_missing(salt, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no dig here
    assert salt["dnsutil.A"]("localhost") == ["127.0.0.1"]  # /etc/hosts, through the resolver
    assert salt["dnsutil.A"]("name.invalid") == "Unable to resolve name.invalid"
    missing = "This function requires dig, which is not currently available"
    assert salt["dnsutil.A"]("localhost", nameserver="127.0.0.1") == missing
    for fun in ("dnsutil.MX", "dnsutil.NS", "dnsutil.SPF"):
        assert salt[fun]("example.invalid") == missing, fun
    assert salt["dnsutil.check_ip"]("10.0.0.1") == missing


def test_serial_refuses_a_grain_that_is_no_serial(salt):
    salt.pack["__grains__"]["dnsserial_x.example"] = "99999999zz"
    with pytest.raises(CommandExecutionError, match="holds '99999999zz', not a serial number"):
        salt["dnsutil.serial"]("x.example", update=True)
