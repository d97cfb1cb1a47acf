"""Salt-style CLI arguments."""

import pytest

from briny.common.args import call_function, parse_input, yamlify_arg
from briny.common.exceptions import InvalidArguments, SaltInvocationError


@pytest.mark.parametrize(
    "raw,value",
    [
        ("1", 1),
        ("1.5", 1.5),
        ("True", True),
        ("None", None),
        ("a b", "a b"),
        ("{a: 1}", {"a": 1}),
        ("[1, 2]", [1, 2]),
        ("a: 1", "a: 1"),
        ("- x", "- x"),
        ("1_000", "1_000"),
        ("#", "#"),
        ("|", "|"),
        ("!", "!"),
        ("multi\nline", "multi\nline"),
        ("a #c", "a #c"),
        ("", ""),
    ],
)
def test_yamlify(raw, value):
    assert yamlify_arg(raw) == value


def test_parse_input_splits_kwargs():
    args, kwargs = parse_input(["web", "x=2", "pillar={a: {b: 1}}", "test=True", "a==b", "9x=1"])
    assert args == ["web", "a==b", "9x=1"]
    assert kwargs == {"x": 2, "pillar": {"a": {"b": 1}}, "test": True}


def test_call_function_passes_pub_only_to_kwargs_functions():
    def strict(a, b=1):
        return a, b

    def loose(a, **kw):
        return a, kw

    assert call_function(strict, "m.strict", [1], {"b": 2}, {"__pub_jid": "1"}) == (1, 2)
    assert call_function(loose, "m.loose", [1], {}, {"__pub_jid": "1"}) == (1, {"__pub_jid": "1"})
    with pytest.raises(SaltInvocationError, match="not valid: c=3"):
        call_function(strict, "m.strict", [1], {"c": 3})
    with pytest.raises(InvalidArguments, match=r"strict\(\) missing 1 required positional argument: 'a'$"):
        call_function(strict, "m.strict", [], {})  # Python's words, as Salt reports them
