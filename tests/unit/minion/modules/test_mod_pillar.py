"""``pillar`` module, against Salt 3007.17's answers."""

from __future__ import annotations

import pytest

from briny.common.exceptions import SaltInvocationError


def test_get(loader):
    get = loader["pillar.get"]
    assert get("foo:bar") == "baz"
    assert get("foo:nope") == ""
    assert get("foo:nope", default="d") == "d"
    assert get("foo:nope", "d") == "d"
    assert get("roles:1") == "db"
    assert get("foo,bar", delimiter=",") == "baz"
    assert get("foo:nested:deep") == 1
    assert loader["pillar.fetch"]("foo:bar") == "baz"


def test_get_merge(loader, caplog):
    get = loader["pillar.get"]
    assert get("foo", merge=True, default={"bar": "x", "extra": 1}) == {
        "bar": "baz",
        "extra": 1,
        "lst": [1, 2],
        "nested": {"deep": 1},
    }
    assert get("roles", merge=True, default=["a", "web"]) == ["a", "web", "db"]
    assert get("foo", merge=True, default={"lst": [3]}, merge_nested_lists=True)["lst"] == [3, 1, 2]
    assert get("foo", merge=True, default={"lst": [3]})["lst"] == [1, 2]
    assert get("nope", merge=True, default={"a": 1}) == {"a": 1}
    assert get("foo:bar", merge=True, default=["a"]) == "baz"
    assert "Merge will be skipped" in caplog.text


def test_get_raise_on_missing(loader):
    loader.pack["__opts__"]["pillar_raise_on_missing"] = True
    with pytest.raises(KeyError, match="Pillar key not found: nope"):
        loader["pillar.get"]("nope")
    assert loader["pillar.get"]("nope", default="x") == "x"


def test_item_items_raw_ls(loader):
    assert loader["pillar.item"]("foo:bar", "roles", "nope") == {"foo:bar": "baz", "roles": ["web", "db"], "nope": ""}
    assert loader["pillar.item"]() == {}
    assert loader["pillar.items"]()["apps"] == {"a": 1}
    assert loader["pillar.items"]("apps") == {"apps": {"a": 1}}
    assert loader["pillar.raw"]("foo") == {"bar": "baz", "lst": [1, 2], "nested": {"deep": 1}}
    assert loader["pillar.raw"]("nope") == {}
    assert set(loader["pillar.raw"]()) == {"foo", "roles", "apps"}
    assert loader["pillar.ls"]() == ["foo", "roles", "apps"]
    assert loader["pillar.obfuscate"]("foo") == {
        "foo": {"bar": "<str>", "lst": ["<int>", "<int>"], "nested": {"deep": "<int>"}}
    }


def test_keys(loader):
    assert loader["pillar.keys"]("foo") == ["bar", "lst", "nested"]
    with pytest.raises(ValueError, match="Pillar value in key roles is not a dict"):
        loader["pillar.keys"]("roles")
    with pytest.raises(KeyError, match="Pillar key not found: nope"):
        loader["pillar.keys"]("nope")


def test_filter_by(loader):
    assert loader["pillar.filter_by"]({"web": 1}, pillar="roles") == 1
    assert loader["pillar.filter_by"]({"x": 1, "default": 2}, pillar="roles") == 2
    with pytest.raises(SaltInvocationError):
        loader["pillar.filter_by"]({"web": {}}, pillar="roles", merge="x")


def test_file_exists(loader, tmp_path):
    (tmp_path / "data.sls").write_text("a: 1\n")
    loader.pack["__opts__"]["pillar_roots"] = {"base": [str(tmp_path)]}
    assert loader["pillar.file_exists"]("data.sls") is True
    assert loader["pillar.file_exists"]("nope.sls") is False
    assert loader["pillar.file_exists"]("../../etc/passwd") is False


def test_items_refuses_what_it_cannot_do(loader):
    with pytest.raises(SaltInvocationError, match="pillar_enc is not supported by briny"):
        loader["pillar.items"](pillar={"a": "-----BEGIN PGP"}, pillar_enc="gpg")
    with pytest.raises(SaltInvocationError, match="Pillar data must be formatted as a dictionary"):
        loader["pillar.items"](pillar="a=1")


def test_items_without_a_fresh_source_reads_the_render_pillar_with_the_override(loader):
    # the master's renders give no __job__.fresh_pillar: the pillar they were given is the fresh one
    out = loader["pillar.items"](pillar={"apps": {"b": 2}, "new": 1})
    assert out["apps"] == {"a": 1, "b": 2} and out["new"] == 1
    assert "new" not in loader["pillar.raw"]()
