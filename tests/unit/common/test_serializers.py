"""``briny.common.serializers`` against the outputs of Salt 3007.17's serializers.

Each expected value below was recorded by running the same call through the
reference Salt's ``salt.serializers.<name>`` (``/tmp/saltref``).
"""

from __future__ import annotations

import collections
import datetime

import pytest

from briny.common.exceptions import CommandExecutionError, DeserializationError, SerializationError
from briny.common.serializers import deserialize, serialize

MIXED = {
    "b": [1, {"z": 1, "a": "é"}],
    "a": None,
    "c": (1, 2),
    "d": collections.OrderedDict([("z", 1), ("a", 2)]),
    "e": {1, 2},
    "f": 1.5,
    "g": True,
    "h": "multi\nline",
    "i": datetime.date(2020, 1, 2),
}


@pytest.mark.parametrize(
    "name,obj,options,expected",
    [
        (
            "yaml",
            MIXED,
            {},
            'a: null\nb:\n- 1\n- {a: "\\xE9", z: 1}\nc: [1, 2]\nd: {a: 2, z: 1}\ne: !!set {1: null, 2: null}\n'
            "f: 1.5\ng: true\nh: 'multi\n\n  line'\ni: 2020-01-02",
        ),
        (
            "yaml",
            {"b": [1, {"z": 1, "a": "é"}], "a": None, "k": "  '"},
            {"default_flow_style": False, "allow_unicode": True},
            "a: null\nb:\n- 1\n- a: é\n  z: 1\nk: '  '''",
        ),
        ("yaml", "scalar", {}, "scalar"),
        ("yaml", [], {}, "[]"),
        (
            "json",
            {"b": [1, {"z": 1, "a": "é"}], "a": None, "c": (1, 2)},
            {},
            '{"b": [1, {"z": 1, "a": "é"}], "a": null, "c": [1, 2]}',
        ),
        ("json", {"b": 1, "a": 2}, {"sort_keys": True, "indent": 2}, '{\n  "a": 2,\n  "b": 1\n}'),
        (
            "python",
            {"b": [1, {"z": 1, "a": "é"}], "a": None, "c": (1, 2)},
            {},
            "{'a': None, 'b': [1, {'a': 'é', 'z': 1}], 'c': [1, 2]}",
        ),
        (
            "configparser",
            {"s": {"a": 1, "B": "x"}, "DEFAULT": {"q": "w"}},
            {},
            "[DEFAULT]\nq = w\n\n[s]\na = 1\nb = x\n\n",
        ),
        ("msgpack", {"a": [1, "x", b"y"]}, {}, b"\x81\xa1a\x93\x01\xa1x\xc4\x01y"),
        (
            "plist",
            {"a": 1, "b": [True, "x"]},
            {},
            b'<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
            b'"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n<plist version="1.0">\n<dict>\n\t<key>a</key>\n'
            b"\t<integer>1</integer>\n\t<key>b</key>\n\t<array>\n\t\t<true/>\n\t\t<string>x</string>\n\t</array>\n"
            b"</dict>\n</plist>\n",
        ),
        ("keyvalue", {"a": "x y", "b": "z"}, {"quoting": True}, "a='x y'\nb=z"),
        ("keyvalue", [("a", "1")], {"separator": ":"}, "a:1"),
    ],
)
def test_serialize_as_salt(name, obj, options, expected):
    assert serialize(name, obj, **options) == expected


@pytest.mark.parametrize(
    "name,data,expected",
    [
        ("yaml", "a: 1\nb: [x, y]\nc: !encrypted abc\n", {"a": 1, "b": ["x", "y"], "c": "abc"}),
        ("json", '{"a": [1, 2]}', {"a": [1, 2]}),
        ("json", b'{"a": 1}', {"a": 1}),
        ("msgpack", b"\x81\xa1a\x01", {"a": 1}),
        ("configparser", "[DEFAULT]\nq=w\n[s]\na = 1\n", {"s": {"q": "w", "a": "1"}}),
        ("keyvalue", 'a="x"\nb=y', {"a": '"x"', "b": "y"}),
        (
            "plist",
            '<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>a</key>'
            "<integer>1</integer></dict></plist>",
            {"a": 1},
        ),
    ],
)
def test_deserialize_as_salt(name, data, expected):
    assert deserialize(name, data) == expected


def test_keyvalue_dequotes_when_quoting_is_false():
    assert deserialize("keyvalue", "a='x y'\nb=\"z\"", quoting=False) == {"a": "x y", "b": "z"}


def test_round_trips():
    data = {"a": [1, "x", None], "b": {"c": True}}
    for name in ("yaml", "json", "msgpack"):
        assert deserialize(name, serialize(name, data)) == data


def test_unknown_serializer_and_direction_are_salts_errors():
    # toml needs the 'toml' package, which Salt 3007 does not install: not found there either
    with pytest.raises(CommandExecutionError, match="Serializer 'toml' not found."):
        serialize("toml", {"a": 1})
    with pytest.raises(CommandExecutionError, match="Serializer 'python' does not implement deserialize."):
        deserialize("python", "{}")


def test_bad_data_and_bad_input():
    with pytest.raises(SerializationError, match="cannot represent an object"):
        serialize("yaml", {"a": object()})
    with pytest.raises(SerializationError, match="configparser can only serialize dictionaries"):
        serialize("configparser", [1])
    with pytest.raises(SerializationError, match="Iterable required"):
        serialize("keyvalue", 5)
    with pytest.raises(DeserializationError):
        deserialize("json", "{not json")
    with pytest.raises(DeserializationError):
        deserialize("yaml", "a: [1")
    with pytest.raises(DeserializationError):
        deserialize("keyvalue", "no separator here")


def test_dunder_options_are_dropped():
    # the loader's __pub_* keyword arguments never reach the library
    assert serialize("json", [1], __pub_fun="x") == "[1]"
