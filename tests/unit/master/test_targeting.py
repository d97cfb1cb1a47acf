"""Which accepted minions a target names (master/targeting.py)."""

from __future__ import annotations

import pytest

from briny.common.exceptions import SaltInvocationError
from briny.master.targeting import check_minions

ACCEPTED = ["web1", "web2", "web10", "db1", "db2", "cache"]
GRAINS = {
    "web1": {"os": "Debian", "roles": ["web", "edge"], "ipv4": ["10.0.0.1"], "env": {"tier": "prod"}},
    "web2": {"os": "RedHat", "roles": ["web"], "ipv4": ["10.0.0.2"], "env": {"tier": "dev"}},
    "web10": {"os": "Debian", "roles": ["web"], "ipv4": ["10.0.1.10"]},
    "db1": {"os": "Debian", "roles": ["db"], "ipv4": ["10.0.2.1"]},
    "db2": {"os": "Ubuntu", "roles": ["db"], "ipv4": ["10.0.2.2"]},
    # "cache" never sent grains
}


def tgt(expr, kind="glob", accepted=ACCEPTED, **opts):
    return check_minions(expr, kind, accepted, GRAINS.get, opts)


@pytest.mark.parametrize(
    "expr,kind,expected",
    [
        ("*", "glob", ["cache", "db1", "db2", "web1", "web10", "web2"]),
        ("web?", "glob", ["web1", "web2"]),
        ("web[12]", "glob", ["web1", "web2"]),
        ("WEB1", "glob", []),
        ("nothere", "glob", []),
        ("web1,db2,ghost", "list", ["db2", "web1"]),
        (["web1", "cache"], "list", ["cache", "web1"]),
        ("web1", "pcre", ["web1", "web10"]),
        ("^db[0-9]$", "pcre", ["db1", "db2"]),
        ("os:Debian", "grain", ["db1", "web1", "web10"]),
        ("os:debian", "grain", ["db1", "web1", "web10"]),
        ("roles:edge", "grain", ["web1"]),
        ("env:tier:prod", "grain", ["web1"]),
        ("os:(Red|Ubu).*", "grain_pcre", ["db2", "web2"]),
        ("10.0.2.0/24", "ipcidr", ["db1", "db2"]),
        ("G@os:Debian and web*", "compound", ["web1", "web10"]),
        ("G@roles:db or L@cache", "compound", ["cache", "db1", "db2"]),
        ("web* not G@os:Debian", "compound", ["web2"]),
        ("web* and not ( G@os:Debian or E@web2 )", "compound", []),
        ("E@^web\\d$ and G@roles:web", "compound", ["web1", "web2"]),
        ("I@role:x", "compound", []),
        ("webs", "nodegroup", ["web1", "web10", "web2"]),
    ],
)
def test_target_forms(expr, kind, expected):
    assert tgt(expr, kind, nodegroups={"webs": "web*"}) == expected


def test_only_accepted_minions_are_named():
    assert tgt("*", accepted=["web1"]) == ["web1"]
    assert tgt("os:Debian", "grain", accepted=["db2"]) == []


@pytest.mark.parametrize(
    "expr,kind,words",
    [
        ("G@os:Debian and", "compound", "Invalid compound target"),
        ("( web1", "compound", "missing"),
        ("web(", "pcre", "Invalid regular expression"),
        ("os", "grain", "KEY:VALUE"),
        ("", "glob", "non-empty"),
        ("x", "range", "Range matcher unavailable"),
        ("x", "rangex", "Unknown target type"),
        (5, "list", "comma-separated"),
        ("N@nope", "compound", "unknown nodegroup"),
    ],
)
def test_bad_targets_say_what_is_wrong(expr, kind, words):
    with pytest.raises(SaltInvocationError, match=words):
        tgt(expr, kind)
    with pytest.raises(SaltInvocationError):  # even with no minion to match against
        tgt(expr, kind, accepted=[])
