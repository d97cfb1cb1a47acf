"""``match`` module: this minion's id, grains and pillar; errors answer False, as in Salt."""

from __future__ import annotations

import logging

import pytest

from briny.common.exceptions import SaltInvocationError


def test_id_matchers(loader):
    assert loader["match.glob"]("web*") is True
    assert loader["match.glob"]("WEB*") is False
    assert loader["match.glob"]("db*", minion_id="db1") is True
    assert loader["match.pcre"](r"web\d+") is True
    assert loader["match.pcre"](r"eb\d+") is False
    assert loader["match.list"]("a,web01.example.com") is True
    assert loader["match.list"]("web01") is False


def test_data_matchers(loader):
    assert loader["match.grain"]("roles:web") is True
    assert loader["match.grain"]("os:debian") is True
    assert loader["match.grain"]("mydict|n|x|1", delimiter="|") is True
    assert loader["match.grain_pcre"]("os:Deb.*") is True
    assert loader["match.grain_pcre"]("os:eb") is False
    assert loader["match.pillar"]("foo:bar:b*") is True
    assert loader["match.pillar_pcre"]("foo:bar:b.z") is True
    assert loader["match.ipcidr"]("192.0.2.0/24") is True
    assert loader["match.ipcidr"]("10.0.0.0/8") is False


def test_compound_and_nodegroups(loader):
    assert loader["match.compound"]("web* and G@os:Debian and I@foo:bar:baz") is True
    assert loader["match.compound"]("web* and not G@os:Debian") is False
    assert loader["match.compound"]("N@webs") is True
    assert loader["match.compound"]("N@others") is False
    assert loader["match.nodegroup"]("webs") is True
    assert loader["match.compound"]("G@os:Debian", minion_id="other") is True


@pytest.mark.parametrize(
    "fun,tgt",
    [
        ("match.compound", "web* and"),
        ("match.compound", "and web*"),
        ("match.compound", ""),
        ("match.compound", "N@nosuch"),
        ("match.pcre", "[unclosed"),
        ("match.ipcidr", "notanip"),
        ("match.grain", "roles"),
        ("match.grain_pcre", "os:[bad"),
    ],
)
def test_bad_targets_answer_false_and_log(loader, caplog, fun, tgt):
    with caplog.at_level(logging.ERROR):
        assert loader[fun](tgt) is False
    assert caplog.records, "the error must be logged"


def test_filter_by(loader):
    fb = loader["match.filter_by"]
    lookup = {"db*": {"a": 1}, "web*": {"a": 2, "n": {"x": 1}}, "default": {"a": 0}}
    assert fb(lookup) == {"a": 2, "n": {"x": 1}}
    assert fb(lookup, minion_id="db7") == {"a": 1}
    assert fb(lookup, minion_id="zzz") == {"a": 0}
    assert fb({"x*": 1}, minion_id="zzz") == {}
    assert fb(lookup, merge={"n": {"y": 2}}) == {"a": 2, "n": {"x": 1, "y": 2}}
    assert lookup["web*"] == {"a": 2, "n": {"x": 1}}  # not mutated
    assert fb({"G@os:Debian": "deb", "default": "other"}) == "deb"
    assert fb({"os:Debian": "deb"}, tgt_type="grain") == "deb"
    with pytest.raises(SaltInvocationError, match="merge argument must be a dictionary"):
        fb(lookup, merge=[1])
    with pytest.raises(SaltInvocationError, match="Unknown target type"):
        fb(lookup, tgt_type="bogus")


def test_search_by_and_ifelse(loader):
    lookup = {"webservers": ["web*", "www*"], "dbs": ["db*"], "debian": "G@os:Debian"}
    assert loader["match.search_by"](lookup) == ["webservers", "debian"]
    assert loader["match.ifelse"]("db*", "a", "web*", "b", default="c") == "b"
    assert loader["match.ifelse"]("db*", "a", default="c") == "c"
