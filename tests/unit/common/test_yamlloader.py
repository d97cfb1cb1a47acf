"""Salt's YAML rules: conflicting IDs, leading-zero ints, timestamps, merge keys."""

import pytest
import yaml

from briny.common import yamlloader


def test_octal_looking_ints_drop_their_zeros():
    assert yamlloader.load("mode: 0644\nzero: 0\nhex: 0x1f\n") == {"mode": 644, "zero": 0, "hex": 31}


def test_timestamps_stay_strings():
    assert yamlloader.load("d: 2024-01-02\n") == {"d": "2024-01-02"}


def test_merge_keys_own_keys_win():
    data = yamlloader.load("base: &b {a: 1, b: 2}\nother: &o {b: 9, c: 3}\nx:\n  <<: [*b, *o]\n  a: 0\n")
    assert data["x"] == {"a": 0, "b": 2, "c": 3}


def test_duplicate_key_is_an_error_naming_both_lines():
    with pytest.raises(yaml.YAMLError) as err:
        yamlloader.load("a: 1\nb: 2\na: 3\n")
    assert "found conflicting ID 'a'" in str(err.value) and "line 3, column 1" in str(err.value)


def test_duplicate_nested_key_is_an_error():
    with pytest.raises(yaml.YAMLError, match="conflicting ID 'x'"):
        yamlloader.load("top:\n  x: 1\n  x: 2\n")


def test_unhashable_key():
    with pytest.raises(yaml.YAMLError, match="unacceptable key"):
        yamlloader.load("? [a, b]\n: 1\n")
