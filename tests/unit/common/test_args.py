"""Salt-style CLI arguments."""

import pytest

from briny.common.args import call_function, parse_input, publish_args, split_input, yamlify_arg
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


def test_signatures_are_kept_per_shape_and_a_new_default_or_wrapper_is_its_own():
    import functools

    from briny.common.args import signature

    source = "def f(a, b=1, *, c=2):\n    return a, b, c\n"
    first, second = {}, {}
    code = compile(source, "mod.py", "exec")
    exec(code, first)  # noqa: S102 - two loads of one module: one code object, two functions
    exec(code, second)  # noqa: S102
    assert first["f"] is not second["f"] and signature(first["f"]) is signature(second["f"])
    assert call_function(second["f"], "m.f", [5], {"c": 3}) == (5, 1, 3)

    def g(a, b=1):
        return a, b

    no_default = type(g)(g.__code__, {}, "g")  # the same code without its default: b is required
    assert signature(no_default) is not signature(g)
    with pytest.raises(InvalidArguments, match="missing 1 required positional argument: 'b'"):
        call_function(no_default, "m.g", [1], {})
    assert call_function(g, "m.g", [1], {}) == (1, 1)

    @functools.wraps(g)
    def wrapper(*args, **kwargs):
        return g(*args, **kwargs)

    assert list(signature(wrapper).parameters) == ["a", "b"]  # through __wrapped__, never kept

    class Host:
        def both(self, x, y, z=0):
            return x, y, z

        one = functools.partialmethod(both, 1)
        two = functools.partialmethod(both, 1, 2)

    # every partialmethod shares one code object: each is read afresh, never from the cache
    assert list(signature(Host.one).parameters) == ["self", "y", "z"]
    assert list(signature(Host.two).parameters) == ["self", "z"]
    with pytest.raises(SaltInvocationError, match="not valid: z=1"):
        call_function(wrapper, "m.w", [1], {"z": 1})


@pytest.mark.parametrize(
    ("value", "mapper", "expected"),
    [
        (None, None, []),
        ("a,b", None, ["a", "b"]),
        (" a , b ", None, ["a", "b"]),
        ("a,", None, ["a", ""]),
        ("", None, [""]),
        (["a ", {"id": "x"}], None, ["a ", {"id": "x"}]),
        (("a", "b"), None, ["a", "b"]),
        (5, None, ["5"]),
        ([1, "b"], str, ["1", "b"]),
    ],
)
def test_split_input_as_salt(value, mapper, expected):
    assert split_input(value, mapper) == expected


def test_publish_args_the_minion_way():
    args, kwargs = publish_args(
        [1, "k=v", "plain text", "x={a: 1}", "multi\nline=1", {"__kwarg__": True, "a": 2}, {"b": 9}],
        {"b": 3},
    )
    assert args == [1, "plain text", "multi\nline=1", {"b": 9}]
    assert kwargs == {"k": "v", "x": {"a": 1}, "a": 2, "b": 3}
    assert publish_args([], {}) == ([], {})
