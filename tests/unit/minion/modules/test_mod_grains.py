"""``grains`` module, against Salt 3007.17's answers."""

from __future__ import annotations

import pytest

from briny.common.exceptions import SaltInvocationError


def test_get(loader):
    get = loader["grains.get"]
    assert get("roles") == ["web", "db"]
    assert get("mydict:n:x") == 1
    assert get("mydict,n", delimiter=",") == {"x": 1}
    assert get("nope", default="dflt") == "dflt"
    assert get("nope") == ""
    assert get("roles:0") == "web"
    assert get("roles:7") == ""
    assert get("nested:a") == "b"
    assert get("os:x") == ""


def test_item_items_ls(loader):
    assert loader["grains.item"]("os", "roles", "nope") == {"os": "Debian", "roles": ["web", "db"], "nope": ""}
    assert loader["grains.item"]("nope", default=None) == {"nope": None}
    assert loader["grains.item"]("id", "fqdn", "host", "os", "serialnumber", sanitize=True) == {
        "id": "MINION.DOMAINNAME",
        "fqdn": "MINION.DOMAINNAME",
        "host": "MINION",
        "os": "Debian",
        "serialnumber": "ABCDEFXX",
    }
    items = loader["grains.items"]()
    assert items["os"] == "Debian" and items["num"] == 5
    assert loader["grains.items"](sanitize=True)["domain"] == "DOMAINNAME"
    ls = loader["grains.ls"]()
    assert ls == sorted(ls) and "roles" in ls


def test_has_value_means_exists(loader):
    hv = loader["grains.has_value"]
    assert hv("roles") is True
    assert hv("emptyl") is True  # Salt 3007: existence, not truthiness
    assert hv("flag") is True
    assert hv("nonestr") is True
    assert hv("nope") is False
    assert hv("mydict:n:x") is True
    assert hv("mydict:n:y") is False


@pytest.mark.parametrize(
    "kwargs,expected",
    [
        ({"lookup_dict": {"Debian": {"a": 1}, "RedHat": {"a": 2}}}, {"a": 1}),
        (
            {"lookup_dict": {"Debian": {"a": 1, "b": {"c": 1}}, "default": {"a": 0}}, "merge": {"b": {"d": 2}}},
            {"a": 1, "b": {"c": 1, "d": 2}},
        ),
        ({"lookup_dict": {"Deb*": {"a": 1}}}, {"a": 1}),
        ({"lookup_dict": {"web": {"a": 1}, "db": {"a": 2}}, "grain": "roles"}, {"a": 1}),
        ({"lookup_dict": {"db": {"a": 2}, "web": {"a": 1}}, "grain": "roles"}, {"a": 1}),  # grain order wins
        ({"lookup_dict": {"x": {"a": 1}, "default": {"a": 0}}, "grain": "nope"}, {"a": 0}),
        ({"lookup_dict": {"x": {"a": 1}}, "grain": "nope"}, None),
        ({"lookup_dict": {"x": {"a": 1}, "foo": {"b": 2}}, "grain": "nope", "default": "foo"}, {"b": 2}),
        ({"lookup_dict": {"Debian": {"a": 1}, "common": {"a": 0, "c": 3}}, "base": "common"}, {"a": 1, "c": 3}),
        ({"lookup_dict": {"RedHat": {"a": 1}, "common": {"a": 0, "c": 3}}, "base": "common"}, {"a": 0, "c": 3}),
        ({"lookup_dict": {5: {"a": 1}}, "grain": "num"}, {"a": 1}),
        ({"lookup_dict": {False: {"a": 1}}, "grain": "flag"}, {"a": 1}),
        ({"lookup_dict": {"Debian": "str"}}, "str"),
        ({"lookup_dict": {"Debian": {"a": 1}, "default": {"a": 2}}, "grain": "nonestr"}, {"a": 2}),
        ({"lookup_dict": {"x": 1}, "grain": "nope", "merge": {"m": 1}}, {"m": 1}),
        ({"lookup_dict": {"debian": {"a": 1}, "default": {"a": 0}}}, {"a": 0}),  # case-sensitive
    ],
)
def test_filter_by(loader, kwargs, expected):
    assert loader["grains.filter_by"](**kwargs) == expected


def test_filter_by_does_not_mutate_lookup(loader):
    lookup = {"Debian": {"b": {"c": 1}}}
    loader["grains.filter_by"](lookup, merge={"b": {"d": 2}})
    assert lookup == {"Debian": {"b": {"c": 1}}}


def test_filter_by_bad_input(loader):
    with pytest.raises(SaltInvocationError, match="merge argument must be a dictionary"):
        loader["grains.filter_by"]({"Debian": {"a": 1}}, merge=[1])
    with pytest.raises(SaltInvocationError, match="must both be dictionaries"):
        loader["grains.filter_by"]({"Debian": "x", "common": {"a": 1}}, base="common")
    with pytest.raises(SaltInvocationError, match="lookup_dict must be a dictionary"):
        loader["grains.filter_by"](["Debian"])


# ---------------------------------------------------------------- writes


def _writer(tmp_path, grains=None, refresh=None):
    from briny.common.jobcontext import JobContext
    from briny.common.loader import minion_mods

    (tmp_path / "minion").write_text("id: m1\n")
    opts = {"id": "m1", "conf_file": str(tmp_path / "minion")}
    grains = {"os": "Debian"} if grains is None else grains
    return minion_mods(opts, grains, {}, job=JobContext(refresh_grains=refresh)), grains


def test_setval_persists_beside_the_config_and_asks_the_daemon_to_reread(tmp_path):
    import yaml

    asked = []
    salt, grains = _writer(tmp_path, refresh=lambda: asked.append(1) or True)
    assert salt["grains.setval"]("color", "blue") == {"color": "blue"}
    assert grains["color"] == "blue" and salt["grains.get"]("color") == "blue"  # this job sees it at once
    assert yaml.safe_load((tmp_path / "grains").read_text()) == {"color": "blue"}
    assert asked == [1]
    assert salt["grains.setvals"]({"size": 3}) == {"size": 3}
    assert salt["grains.delkey"]("color")["changes"] == {"color": None}
    assert yaml.safe_load((tmp_path / "grains").read_text()) == {"size": 3}
    assert "color" not in grains


def test_a_later_start_reads_what_setval_wrote(tmp_path):
    from briny.minion.host.grains import load_grains

    salt, _ = _writer(tmp_path)
    salt["grains.append"]("roles", "web")
    assert load_grains({"id": "m1", "conf_file": str(tmp_path / "minion")})["roles"] == ["web"]


def test_grains_writes_refuse_bad_input_with_a_clear_error(tmp_path):
    from briny.common.exceptions import CommandExecutionError

    salt, _ = _writer(tmp_path)
    with pytest.raises(SaltInvocationError, match="setvals grains must be a dictionary."):
        salt["grains.setvals"]("not-a-dict")
    (tmp_path / "grains").write_text("a: [unclosed\n")
    with pytest.raises(CommandExecutionError, match="Unable to read existing grains file"):
        salt["grains.setval"]("k", "v")
    (tmp_path / "grains").unlink()
    (tmp_path / "grains").mkdir()  # a folder in the way: the write fails, and says so
    with pytest.raises(CommandExecutionError, match="grains file"):
        salt["grains.setval"]("k", "v")
