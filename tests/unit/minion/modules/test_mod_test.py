"""``test`` module, against Salt 3007.17's answers."""

from __future__ import annotations

import time

import pytest


def test_ping_echo_true_false(loader):
    assert loader["test.ping"]() is True
    assert loader["test.echo"]("hi") == "hi"
    assert loader["test.true"]() is True
    assert loader["test.false"]() is False
    assert "test.true_" not in loader


def test_echo_needs_text(loader):
    with pytest.raises(TypeError):
        loader["test.echo"]()


def test_version_says_it_is_briny_and_names_the_salt_it_follows(loader):
    import briny

    assert loader["test.version"]() == f"briny {briny.__version__} (Salt {briny.SALT_COMPAT_VERSION})"
    report = loader["test.versions_report"]()
    assert f"          Salt: {briny.SALT_COMPAT_VERSION}\n         briny: {briny.__version__}\n" in report


def test_versions_information_has_salts_sections(loader):
    import briny

    info = loader["test.versions_information"]()
    assert list(info) == ["Salt Version", "Python Version", "Dependency Versions", "System Versions"]
    assert info["Salt Version"] == {"Salt": briny.SALT_COMPAT_VERSION, "briny": briny.__version__}
    import msgpack

    assert info["Dependency Versions"]["msgpack"] == ".".join(map(str, msgpack.version))


def test_arg_kwarg(loader):
    assert loader["test.arg"](1, 2, a="b") == {"args": [1, 2], "kwargs": {"a": "b"}}
    assert loader["test.kwarg"](a="b", __pub_fun="test.kwarg") == {"a": "b", "__pub_fun": "test.kwarg"}
    assert loader["test.arg_type"](1, "x", 2) == {"int": [1, 2], "str": ["x"]}


def test_retcode_sets_context(loader):
    assert loader["test.retcode"](4) is True
    assert loader.pack["__context__"]["retcode"] == 4
    loader["test.retcode"]()
    assert loader.pack["__context__"]["retcode"] == 42


def test_sleep(loader):
    start = time.monotonic()
    assert loader["test.sleep"](0.05) is True
    assert time.monotonic() - start >= 0.05


def test_exception(loader):
    with pytest.raises(Exception, match="hello"):
        loader["test.exception"]("hello")


def test_fib(loader):
    value, seconds = loader["test.fib"](10)
    assert value == 55 and seconds >= 0
    assert loader["test.fib"](0)[0] == 0
    assert loader["test.fib"](1)[0] == 1
    with pytest.raises(ValueError):
        loader["test.fib"](-1)


def test_misc(loader):
    assert loader["test.outputter"]("x") == "x"
    assert loader["test.conf_test"]() == "unconfigured"
    assert len(loader["test.random_hash"]()) == 64
    assert loader["test.provider"]("test") == "test"
    assert loader["test.provider"]("nosuchmod") == ""
    assert loader["test.try"]("test.echo", args=["a"]) == "a"
    assert loader["test.try"]("test.exception") is None
    assert loader["test.attr_call"]() is True
    with pytest.raises(AssertionError):
        loader["test.assertion"](False)
    with pytest.raises(KeyError):
        loader["test.raise_exception"]("KeyError", "k")
    from briny.common.exceptions import CommandExecutionError

    with pytest.raises(CommandExecutionError):
        loader["test.raise_exception"]("salt.exceptions.CommandExecutionError", "boom")
