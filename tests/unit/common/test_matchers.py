"""Matchers: expectations recorded from Salt 3007.17 (``match.*`` via salt-call --local)."""

from __future__ import annotations

import re

import pytest

from briny.common import matchers as m
from briny.common.exceptions import SaltInvocationError

MID = "web01.example.com"
GRAINS = {
    "os": "Debian",
    "os_family": "Debian",
    "roles": ["web", "db"],
    "mydict": {"k": "v", "n": {"x": 1}},
    "num": 5,
    "flag": False,
    "nested": [{"a": "b"}],
    "emptyd": {},
    "url": "http://x",
    "ipv4": ["127.0.0.1", "192.0.2.2"],
    "ipv6": ["::1", "fd00::2"],
}
PILLAR = {"foo": {"bar": "baz", "lst": [1, 2], "nested": {"deep": 1}}, "roles": ["web", "db"]}
NODEGROUPS = {
    "g1": "web* and G@os:Debian",
    "g2": [MID, "other"],
    "g3": "N@g1 or foo",
    "g4": "N@g4",
    "g5": "N@nosuch",
    "none": "bar*",
}


@pytest.mark.parametrize(
    "tgt,expected",
    [
        ("web*", True),
        ("WEB*", False),
        ("*.example.com", True),
        ("web0?.example.com", True),
        ("web[0-9]*", True),
        ("db*", False),
        (MID, True),
    ],
)
def test_glob(tgt, expected):
    assert m.glob_match(tgt, MID) is expected
    assert m.match(tgt, "glob", MID) is expected


def test_glob_non_string_never_matches():
    assert m.glob_match(["web*"], MID) is False


@pytest.mark.parametrize(
    "tgt,expected",
    [
        (r"web\d+", True),
        (r"eb\d+", False),
        (r".*example", True),
        (r"web01\.example\.com$", True),
    ],
)
def test_pcre_is_anchored_at_start_only(tgt, expected):
    assert m.pcre_match(tgt, MID) is expected


def test_pcre_bad_regex_raises():
    with pytest.raises(SaltInvocationError, match="Invalid regular expression"):
        m.pcre_match("[unclosed", MID)


@pytest.mark.parametrize(
    "tgt,expected",
    [
        ("a," + MID, True),
        ("web01", False),
        ("web*", False),
        ([MID, "b"], True),
        (["b"], False),
        (" " + MID + ",b", False),
    ],
)
def test_list(tgt, expected):
    assert m.list_match(tgt, MID) is expected


@pytest.mark.parametrize(
    "tgt,expected",
    [
        ("roles:web", True),
        ("roles:w*", True),
        ("roles:mail", False),
        ("mydict:n:x:1", True),
        ("num:5", True),
        ("flag:False", True),
        ("flag:false", True),
        ("os:debian", True),
        ("os:Deb*", True),
        ("os:RedHat", False),
        ("nested:a:b", True),
        ("mydict:k:V", True),
        ("mydict:*", True),
        ("mydict:k", True),
        ("mydict:n", True),
        ("mydict:zz", False),
        ("emptyd:*", False),
        ("url:http://x", True),
        ("nosuch:x", False),
        ("roles", False),
        ("*:web", True),
        ("*:nothing", False),
    ],
)
def test_grain(tgt, expected):
    assert m.grain_match(tgt, GRAINS) is expected
    assert m.match(tgt, "grain", MID, GRAINS) is expected


def test_grain_custom_delimiter():
    assert m.grain_match("mydict,n,x,1", GRAINS, delimiter=",") is True
    assert m.grain_match("mydict:n:x:1", GRAINS, delimiter=",") is False


@pytest.mark.parametrize(
    "tgt,expected",
    [
        ("os:Deb.*", True),
        ("os:eb", False),
        ("os:debian", True),
        ("os:DEB.*", True),
        ("roles:w.b", True),
        ("roles:x.*", False),
    ],
)
def test_grain_pcre(tgt, expected):
    assert m.grain_pcre_match(tgt, GRAINS) is expected


def test_grain_pcre_bad_regex_raises():
    with pytest.raises(SaltInvocationError):
        m.grain_pcre_match("os:[bad", GRAINS)


@pytest.mark.parametrize(
    "tgt,expected",
    [
        ("foo:bar:baz", True),
        ("roles:db", True),
        ("foo:bar:b*", True),
        ("foo:bar:x", False),
        ("foo:nested:deep:1", True),
        ("nope:x", False),
    ],
)
def test_pillar(tgt, expected):
    assert m.pillar_match(tgt, PILLAR) is expected


def test_pillar_pcre_and_exact():
    assert m.pillar_pcre_match("foo:bar:b.z", PILLAR) is True
    assert m.pillar_pcre_match("foo:bar:^a", PILLAR) is False
    assert m.pillar_exact_match("foo:bar:baz", PILLAR) is True
    assert m.pillar_exact_match("foo:bar:b*", PILLAR) is False


def test_missing_data_never_matches():
    assert m.grain_match("os:Debian", None) is False
    assert m.pillar_match("foo:bar:baz", {}) is False


@pytest.mark.parametrize(
    "tgt,expected",
    [
        ("192.0.2.0/24", True),
        ("10.0.0.0/8", False),
        ("192.0.2.2", True),
        ("192.0.2.3", False),
        ("fd00::/8", True),
        ("::1", True),
        ("2001:db8::/32", False),
    ],
)
def test_ipcidr(tgt, expected):
    assert m.ipcidr_match(tgt, GRAINS) is expected


def test_ipcidr_bad_target_raises():
    with pytest.raises(SaltInvocationError, match="Invalid IP/CIDR target: notanip"):
        m.ipcidr_match("notanip", GRAINS)


@pytest.mark.parametrize(
    "tgt,expected",
    [
        ("web* and G@os:Debian", True),
        ("web* and not G@os:Debian", False),
        ("not G@os:Debian or L@" + MID, True),
        ("( web* or foo ) and G@roles:db", True),
        ("(web* or foo) and G@roles:db", False),  # parentheses must be separate words
        (r"E@web\d+ and P@os:Deb.*", True),
        ("I@foo:bar:baz and J@foo:bar:^b.z$", True),
        ("S@192.0.2.0/24", True),
        ("S@10.0.0.0/8 or G@num:5", True),
        ("L@a,b," + MID, True),
        ("web* not foo", True),  # implicit "and"
        ("web* not web*", False),
        ("( web* )", True),
        ("not ( foo or bar )", True),
        ("foo or web* and G@os:Debian", True),  # and binds tighter than or
        ("foo and web* or G@os:Debian", True),
        ("foo and ( web* or G@os:Debian )", False),
        ("G|@roles|web", True),
        ("L@web*", False),
        ("X@foo", False),  # not an engine: a glob
        ("web* and ( foo )", False),
        ("( ( web* ) ) and not foo", True),
        ("( not foo )", True),
        ("I@roles:web", True),
        ("web* and ()", False),  # "()" is a glob word
        ("N@g1", True),
        ("N@g2", True),
        ("N@g3", True),
        ("N@none", False),
    ],
)
def test_compound(tgt, expected):
    assert m.compound_match(tgt, MID, GRAINS, PILLAR, NODEGROUPS) is expected
    assert m.match(tgt, "compound", MID, GRAINS, PILLAR, nodegroups=NODEGROUPS) is expected


@pytest.mark.parametrize(
    "tgt,message",
    [
        ("web* and", "ends where a target was expected"),
        ("and web*", "begins with 'and'"),
        ("( web*", "missing"),
        ("web* )", "unexpected"),
        ("web* foo*", "unexpected"),
        ("not", "ends where a target"),
        ("", "empty"),
        ("   ", "empty"),
        ("not not web*", "not not"),
        ("web* and not not foo", "not not"),
        ("web* or or foo", "'or' where a target was expected"),
        ("web* ( foo )", "unexpected"),
        ("( and web* )", "right after '('"),
        ("( )", "empty parentheses"),
        ("N@g4", "illegal nested nodegroup"),
        ("N@g5", "unknown nodegroup 'nosuch'"),
        ("N@nope", "unknown nodegroup 'nope'"),
        ("S@notanip", "Invalid IP/CIDR"),
        ("E@[unclosed", "Invalid regular expression"),
        ("R@foo", "Range matcher unavailable"),
    ],
)
def test_compound_malformed_raises(tgt, message):
    with pytest.raises(SaltInvocationError, match=re.escape(message)):
        m.compound_match(tgt, MID, GRAINS, PILLAR, NODEGROUPS)


def test_compound_non_string_raises():
    with pytest.raises(SaltInvocationError):
        m.compound_match(["web*"], MID)


def test_grain_only_word_in_compound_is_false():
    # Salt logs "insufficient arguments" and evaluates the word as False
    assert m.compound_match("G@os or web*", MID, GRAINS) is True
    assert m.compound_match("G@os", MID, GRAINS) is False


def test_match_dispatch_and_unknown_type():
    assert m.match(r"web\d", "pcre", MID) is True
    assert m.match("a," + MID, "list", MID) is True
    assert m.match("os:D.*", "grain_pcre", MID, GRAINS) is True
    assert m.match("foo:bar:baz", "pillar", MID, GRAINS, PILLAR) is True
    assert m.match("foo:bar:ba.", "pillar_pcre", MID, GRAINS, PILLAR) is True
    assert m.match("192.0.2.0/24", "ipcidr", MID, GRAINS) is True
    assert m.match("g1", "nodegroup", MID, GRAINS, nodegroups=NODEGROUPS) is True
    with pytest.raises(SaltInvocationError, match="Unknown target type"):
        m.match("x", "bogus", MID)


def test_parse_target():
    assert m.parse_target("G@os:Debian") == ("G", None, "os:Debian")
    assert m.parse_target("G|@os|Debian") == ("G", "|", "os|Debian")
    assert m.parse_target("web*") == (None, None, "web*")
    assert m.parse_target("L|@a,b") == (None, None, "L|@a,b")  # no delimiter for L
