"""``config`` module: Salt 3007's lookup order (opts, grains, pillar, master, defaults)."""

from __future__ import annotations


def test_get_order(loader):
    get = loader["config.get"]
    assert get("foo:bar") == "fromopts"  # opts before pillar
    assert get("foo") == {"bar": "fromopts"}
    assert get("myopt:o") == 1
    assert get("mydict:n:x") == 1  # grains
    assert get("apps:a") == 1  # pillar
    assert get("roles") == ["web", "db"]  # grains before pillar (same value here)
    assert get("id") == "web01.example.com"
    assert get("nope", default=7) == 7
    assert get("nope") == ""
    assert get("hosts.file") == "/etc/hosts"  # built-in default
    assert get("mongo.port") == 27017


def test_get_master_from_pillar(loader):
    loader.pack["__pillar__"]["master"] = {"mkey": "m"}
    assert loader["config.get"]("mkey") == "m"
    assert loader["config.get"]("mkey", omit_master=True) == ""


def test_get_omit(loader):
    assert loader["config.get"]("foo:bar", omit_opts=True) == "baz"
    assert loader["config.get"]("mydict:k", omit_grains=True) == ""


def test_get_merge(loader):
    assert loader["config.get"]("foo", merge="recurse") == {"bar": "fromopts", "lst": [1, 2], "nested": {"deep": 1}}
    assert loader["config.get"]("foo", merge="overwrite") == {"bar": "fromopts"}
    # unknown strategies fall back to recurse
    assert loader["config.get"]("foo", merge="bogus")["lst"] == [1, 2]


def test_option(loader):
    opt = loader["config.option"]
    assert opt("myopt") == {"o": 1}
    assert opt("foo:bar") == ""  # no nesting
    assert opt("nope", default="z") == "z"
    assert opt("apps") == {"a": 1}
    assert opt("apps", omit_pillar=True) == ""
    assert opt("my*", wildcard=True) == {"myopt": {"o": 1}, "mydict": {"k": "v", "n": {"x": 1}}}
    assert opt("zz*", wildcard=True, default={}) == {}
