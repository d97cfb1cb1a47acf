"""The compiler: SLS → high data → low chunks, and its error strings (Salt 3007's)."""

from __future__ import annotations

import pytest

from briny.common.state.compiler import StateCompiler, compile_high_data, order_chunks

YAML = {"renderer": "yaml"}


def low(env, mods="a"):
    return StateCompiler(env).show_low_sls(mods.split(","), "base")


def test_dot_notation_names_and_overrides(make_env):
    env = make_env(
        {
            "a.sls": """
        web:
          pkg.installed:
            - names:
              - nginx
              - php:
                - version: 8
            - refresh: true
        """
        },
        **YAML,
    )
    chunks = low(env)
    assert [(c["name"], c["order"], c.get("version")) for c in chunks] == [
        ("nginx", 10000.0001, None),
        ("php", 10000.0002, 8),
    ]
    assert list(chunks[1]) == ["state", "name", "__sls__", "__env__", "__id__", "refresh", "order", "version", "fun"]
    assert all(c["state"] == "pkg" and c["fun"] == "installed" and c["__id__"] == "web" for c in chunks)


def test_short_forms_and_multiple_states_per_id(make_env):
    env = make_env(
        {
            "a.sls": """
        vim: pkg.installed
        httpd:
          pkg.installed: []
          service.running:
            - enable: true
        """
        },
        **YAML,
    )
    assert [(c["__id__"], c["state"], c["fun"], c["order"]) for c in low(env)] == [
        ("vim", "pkg", "installed", 10000),
        ("httpd", "pkg", "installed", 10001),
        ("httpd", "service", "running", 10002),
    ]


@pytest.mark.parametrize(
    "orders,expected",
    [
        (
            {"a": 5, "b": "last", "c": "first", "d": -1, "e": "junk"},
            [("c", 0), ("a", 5), ("e", 105), ("d", 1000104), ("b", 1000105)],
        ),
        ({"a": 1, "b": 1}, [("a", 1), ("b", 1)]),
    ],
)
def test_order_keyword(orders, expected):
    chunks = [{"state": "test", "name": k, "fun": "nop", "order": v} for k, v in orders.items()]
    assert [(c["name"], c["order"]) for c in order_chunks(chunks)] == expected


def test_chunks_without_order_go_after_numbered_ones():
    chunks = [{"state": "t", "name": "x", "fun": "f"}, {"state": "t", "name": "y", "fun": "f", "order": 7}]
    assert [(c["name"], c["order"]) for c in order_chunks(chunks)] == [("y", 7), ("x", 107)]


def test_includes_render_first_and_are_marked(make_env):
    env = make_env(
        {
            "app/init.sls": "include:\n  - .conf\n  - ..common\nmain:\n  test.nop: []\n",
            "app/conf.sls": "conf:\n  test.nop: []\n",
            "common.sls": "common:\n  test.nop: []\n",
        },
        **YAML,
    )
    chunks = low(env, "app")
    assert [(c["__id__"], c["__sls__"], c.get("__sls_included_from__")) for c in chunks] == [
        ("conf", "app.conf", ["app"]),
        ("common", "common", ["app"]),
        ("main", "app", None),
    ]


def test_relative_include_beyond_top_is_an_error(make_env):
    env = make_env({"a.sls": "include:\n  - ..x\nid:\n  test.nop: []\n"}, **YAML)
    assert low(env) == ["Attempted relative include of '..x' within SLS 'base:a' goes beyond top level package "]


def test_include_cycle_renders_each_file_once(make_env):
    env = make_env(
        {"a.sls": "include: [b]\nx:\n  test.nop: []\n", "b.sls": "include: [a]\ny:\n  test.nop: []\n"}, **YAML
    )
    assert [c["__id__"] for c in low(env)] == ["y", "x"]


@pytest.mark.parametrize(
    "files,errors",
    [
        (
            {"a.sls": "include:\n  - missing\n"},
            [
                "Specified SLS missing in saltenv base is not available on the salt master or through a configured fileserver"
            ],
        ),
        ({"b.sls": "x: 1\n"}, ["No matching sls found for 'a' in env 'base'"]),
        (
            {"a.sls": "x:\n  test.nop: []\nx:\n  test.nop: []\n"},
            [
                "Rendering SLS 'base:a' failed: while constructing a mapping\n  in \"<unicode string>\", line 1, column 1\n"
                "found conflicting ID 'x'\n  in \"<unicode string>\", line 3, column 1"
            ],
        ),
        (
            {"a.sls": "x:\n  test.nop:\n"},
            [
                "ID 'x' in SLS 'a' contains a short declaration (test.nop) with a trailing colon. When not passing "
                "any arguments to a state, the colon must be omitted."
            ],
        ),
        (
            {"a.sls": "x:\n  test.nop: []\n  test.fail: []\n"},
            ["ID 'x' in SLS 'a' contains multiple state declarations of the same type"],
        ),
        (
            {"a.sls": "x: 5\n"},
            ["ID x in SLS a is not a dictionary", "The type x in 5 is not formatted as a dictionary"],
        ),
        (
            {"a.sls": "x:\n  test:\n    - nop\n    - fail\n"},
            ["Too many functions declared in state 'x' in SLS 'a'. Please choose one of the following: nop, fail"],
        ),
        ({"a.sls": "x:\n  test:\n    - foo: 1\n"}, ["No function declared in state 'x' in SLS 'a'"]),
        (
            {"a.sls": "x:\n  test.nop:\n    - require: foo\n"},
            ["The require statement in state 'x' in SLS 'a' needs to be formed as a list"],
        ),
        (
            {"a.sls": "x:\n  test.nop:\n    - names: foo\n"},
            ["The 'names' argument in state 'x' in SLS 'a' needs to be formed as a list"],
        ),
        ({"a.sls": "- x\n- y\n"}, ["SLS a does not render to a dictionary"]),
        (
            {"a.sls": "x:\n  test.nop:\n   - foo: [1,\n"},
            [
                "Rendering SLS 'base:a' failed: while parsing a flow node\ndid not find expected node content\n"
                '  in "<unicode string>", line 4, column 1'
            ],
        ),
    ],
)
def test_bad_input_is_reported_as_salt_does_and_nothing_compiles(make_env, files, errors):
    env = make_env(files, **YAML)
    assert low(env) == errors


def test_an_argument_dict_with_several_keys_gives_each_key(make_env):
    """``- context:`` followed by a sibling key at the same indent is one dict with two keys:
    legal in Salt, each key an argument; only a requisite list is refused that way."""
    env = make_env({"a.sls": "x:\n  test.nop:\n    - context:\n      who: world\n    - a: 1\n      b: 2\n"}, **YAML)
    (chunk,) = low(env)
    assert {k: chunk[k] for k in ("context", "who", "a", "b")} == {"context": None, "who": "world", "a": 1, "b": 2}
    env = make_env(
        {"a.sls": "x:\n  test.nop:\n    - require:\n      - test: y\n      foo: 1\ny:\n  test.nop: []\n"}, **YAML
    )
    assert low(env) == ["Multiple dictionaries defined in argument of state 'x' in SLS 'a'"]


def test_a_requisite_in_with_a_dotted_key_is_refused(make_env):
    env = make_env({"a.sls": "b:\n  test.nop: []\nc:\n  test.nop:\n    - watch_in:\n        test.nop: b\n"}, **YAML)
    assert StateCompiler(env).for_sls(["a"], "base").errors == [
        "Invalid requisite in watch: test.nop for b, in SLS 'a'. Requisites must not contain dots, did you mean 'test'?"
    ]


def test_conflicting_ids_across_files(make_env):
    env = make_env({"a.sls": "include: [b]\nx:\n  test.nop: []\n", "b.sls": "x:\n  test.fail: []\n"}, **YAML)
    assert low(env) == [
        "Detected conflicting IDs, SLS IDs need to be globally unique.\n    The conflicting "
        "ID is 'x' and is found in SLS 'base:a' and SLS 'base:b'"
    ]


def test_lowstate_applies_extend_in_requisites_and_use(make_env):
    env = make_env(
        {
            "top.sls": "base:\n  '*':\n    - a\n",
            "a.sls": """
            include: [b]
            extend:
              svc:
                test:
                  - foo: new
                  - require:
                    - test: conf
            conf:
              test.nop:
                - require_in:
                  - test: svc
                - user: root
            user2:
              test.nop:
                - use:
                  - test: conf
            """,
            "b.sls": "svc:\n  test.nop:\n    - foo: old\n    - require:\n      - test: x\nx:\n  test.nop: []\n",
        },
        **YAML,
    )
    chunks = {c["__id__"]: c for c in StateCompiler(env).show_lowstate()}
    assert chunks["svc"]["foo"] == "new"
    assert chunks["svc"]["require"] == [{"test": "x"}, {"test": "conf"}, {"test": "conf"}]
    assert chunks["user2"]["user"] == "root" and "require_in" not in chunks["user2"]


def test_extend_of_missing_id(make_env):
    env = make_env(
        {
            "top.sls": "base:\n  '*':\n    - a\n",
            "a.sls": "extend:\n  nope:\n    test:\n      - foo: 1\nx:\n  test.nop: []\n",
        },
        **YAML,
    )
    errors = StateCompiler(env).show_lowstate()
    assert errors == [
        "Cannot extend ID 'nope' in 'base:a'. It is not part of the high state.\nThis is likely due "
        "to a missing include statement or an incorrectly typed ID.\nEnsure that a state with an "
        "ID of 'nope' is available\nin environment 'base' and to SLS 'a'"
    ]


def test_exclude_by_id_and_sls(make_env):
    env = make_env(
        {
            "top.sls": "base:\n  '*':\n    - a\n",
            "a.sls": "include: [b, c]\nexclude:\n  - id: y\n  - sls: c\nx:\n  test.nop: []\n",
            "b.sls": "y:\n  test.nop: []\nw:\n  test.nop: []\n",
            "c.sls": "z:\n  test.nop: []\n",
        },
        **YAML,
    )
    assert [c["__id__"] for c in StateCompiler(env).show_lowstate()] == ["w", "x"]


def test_top_matching_forms(make_env):
    env = make_env(
        {
            "top.sls": """
            base:
              '*':
                - all
              'minion1':
                - byid
              'os:Debian':
                - match: grain
                - bygrain
              'other,minion1':
                - match: list
                - bylist
              'G@os:Debian and not nope*':
                - match: compound
                - bycompound
              'nomatch':
                - never
            """
        },
        grains={"os": "Debian"},
        **YAML,
    )
    assert StateCompiler(env).show_top() == {"base": ["all", "byid", "bygrain", "bylist", "bycompound"]}


def test_highstate_with_no_matches_says_so(make_env):
    env = make_env({"top.sls": "base:\n  nomatch:\n    - a\n"}, **YAML)
    compiled = StateCompiler(env).for_highstate()
    assert compiled.no_states == "No Top file or master_tops data matches found. Please see master log for details."


def test_compile_is_linear_enough():
    high = {f"id{i}": {"__sls__": "s", "__env__": "base", "test": ["nop", {"order": 10000 + i}]} for i in range(2000)}
    chunks = compile_high_data(high)
    assert len(chunks) == 2000 and chunks[0]["name"] == "id0" and chunks[-1]["name"] == "id1999"
