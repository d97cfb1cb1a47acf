"""``slsutil`` merge strategies, against Salt 3007.17's answers."""

from __future__ import annotations

import copy

import pytest

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

A = {"a": {"b": 1, "l": [1]}}
B = {"a": {"c": 2, "l": [2]}}


@pytest.mark.parametrize(
    "a,b,kwargs,expected",
    [
        (A, B, {}, {"a": {"b": 1, "l": [2], "c": 2}}),
        (A, B, {"merge_lists": True}, {"a": {"b": 1, "l": [1, 2], "c": 2}}),
        ({"a": {"b": 1}}, {"a": {"c": 2}}, {"strategy": "overwrite"}, {"a": {"c": 2}}),
        ({"a": {"b": 1}}, {"a": {"c": 2}}, {"strategy": "list"}, {"a": [{"b": 1}, {"c": 2}]}),
        ({"a": [1]}, {"a": [2]}, {"strategy": "list"}, {"a": [[1], [2]]}),
        ({"a": 1, "x": 5}, {"b": 2, "x": 6}, {"strategy": "list"}, {"a": 1, "x": [5, 6]}),
        ({"a": [1]}, {"a": [2]}, {"strategy": "aggregate"}, {"a": [2]}),
        ({"a": {"b": 1}}, {"a": {"c": 2}}, {"strategy": "aggregate"}, {"a": {"c": 2}}),
        ({"a": {"b": 1}}, {"a": {"c": 2}}, {"strategy": "smart"}, {"a": {"b": 1, "c": 2}}),
        ({"a": {"b": 1}}, {"a": {"c": 2}}, {"strategy": "bogus"}, {"a": {"b": 1, "c": 2}}),
        ({"a": 1}, {"a": {"c": 2}}, {"strategy": "recurse"}, {"a": {"c": 2}}),
        ({"a": {"b": 1}}, {"a": 3}, {"strategy": "recurse"}, {"a": 3}),
        ({"a": [1, 2]}, {"a": [2, 3]}, {"merge_lists": True}, {"a": [1, 2, 3]}),
        ({"a": [1]}, {"a": 5}, {"merge_lists": True}, {"a": 5}),
        ({"a": [1]}, {"a": [2]}, {"strategy": "overwrite", "merge_lists": True}, {"a": [2]}),
    ],
)
def test_merge(loader, a, b, kwargs, expected):
    assert loader["slsutil.merge"](copy.deepcopy(a), copy.deepcopy(b), **kwargs) == expected


def test_merge_recurse_does_not_mutate(loader):
    a = {"a": {"b": 1}}
    loader["slsutil.merge"](a, {"a": {"c": 2}})
    assert a == {"a": {"b": 1}}


def test_merge_overwrite_changes_the_first_dict_as_salt_does(loader):
    # Salt 3007: overwrite replaces obj_a's shared top-level keys in obj_a itself
    a = {"k": {"a": 1}, "j": 2}
    out = loader["slsutil.merge"](a, {"k": {"b": 2}}, strategy="overwrite")
    assert out == {"k": {"b": 2}, "j": 2}
    assert a == {"k": {"b": 2}, "j": 2}
    assert out is not a


def test_update_changes_dest_in_place(loader):
    # {% do salt['slsutil.update'](a, b) %} changes a (Salt's dictupdate.update)
    dest = {"k": {"a": 1}, "l": [1]}
    out = loader["slsutil.update"](dest, {"k": {"b": 2}, "l": [2]})
    assert out is dest
    assert dest == {"k": {"a": 1, "b": 2}, "l": [2]}


def test_merge_bad_types(loader):
    # Salt raises TypeError; the CLI and templates report it as invalid arguments
    with pytest.raises(TypeError, match="non-dict"):
        loader["slsutil.merge"]([1], {"a": 2})
    with pytest.raises(TypeError):
        loader["slsutil.update"]({"a": 1}, "x")
    with pytest.raises(TypeError):
        loader["slsutil.merge_all"]({"a": 1})


def test_update_and_merge_all(loader):
    assert loader["slsutil.update"](copy.deepcopy(A), B, merge_lists=True) == {"a": {"b": 1, "l": [1, 2], "c": 2}}
    assert loader["slsutil.update"]({"a": {"x": 1}}, {"a": {"y": 2}}, recursive_update=False) == {"a": {"y": 2}}
    assert loader["slsutil.merge_all"]([{"a": 1}, {"b": 2}, {"a": 3}]) == {"a": 3, "b": 2}
    assert loader["slsutil.merge_all"]([{"a": [1]}, {"a": [2]}], merge_lists=True) == {"a": [1, 2]}


def test_boolstr(loader):
    assert loader["slsutil.boolstr"](True) == "true"
    assert loader["slsutil.boolstr"](False) == "false"
    assert loader["slsutil.boolstr"](0, true="yes", false="no") == "no"


def test_file_server_checks_need_cp(tmp_path):
    from briny.common.loader import minion_mods

    salt = minion_mods({"id": "x"}, {}, {})
    salt._funcs["cp"] = {}  # a host where cp offers nothing
    with pytest.raises(CommandExecutionError, match="cp.list_master"):
        salt["slsutil.file_exists"]("sub/file.txt")


def test_file_server_checks_with_local_roots(tmp_path):
    from briny.common.loader import minion_mods

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "file.txt").write_text("hi\n")
    salt = minion_mods({"id": "x", "file_client": "local", "file_roots": {"base": [str(tmp_path)]}}, {}, {})
    assert salt["slsutil.file_exists"]("sub/file.txt") is True
    assert salt["slsutil.file_exists"]("sub") is False
    assert salt["slsutil.dir_exists"]("sub") is True


def test_file_server_checks_with_fake_cp(tmp_path):
    from briny.common.loader import minion_mods

    (tmp_path / "cp.py").write_text(
        "def list_master(saltenv='base', **kw):\n    return ['sub/file.txt', 'top.sls']\n"
        "def list_master_dirs(saltenv='base', **kw):\n    return ['sub']\n"
    )
    salt = minion_mods({"id": "x"}, {}, {}, extra_dirs=[tmp_path])
    assert salt["slsutil.file_exists"]("sub/file.txt") is True
    assert salt["slsutil.file_exists"]("salt://sub/file.txt") is True
    assert salt["slsutil.file_exists"]("sub") is False
    assert salt["slsutil.dir_exists"]("sub") is True
    assert salt["slsutil.path_exists"]("sub") is True
    assert salt["slsutil.path_exists"]("nope") is False
    assert salt["slsutil.findup"]("sub/file.txt", "file.txt") == "sub/file.txt"
    assert salt["slsutil.findup"]("sub", "top.sls") == "top.sls"
    assert salt["slsutil.findup"]("sub", "nope.sls") is None


# -- serialize / deserialize / renderer / banner: outputs recorded from Salt 3007.17 ---------------


def test_serialize_and_deserialize(loader):
    text = loader["slsutil.serialize"](
        "yaml", {"b": [1, 2], "a": {"é": None}}, default_flow_style=False, allow_unicode=True
    )
    assert text == "a:\n  é: null\nb:\n- 1\n- 2"
    assert loader["slsutil.deserialize"]("json", '{"a": [1]}') == {"a": [1]}
    with pytest.raises(CommandExecutionError, match="Serializer 'toml' not found."):
        loader["slsutil.serialize"]("toml", {"a": 1})


BANNER = (
    "########################################################################\n"
    "#                                                                      #\n"
    "#              THIS FILE IS MANAGED BY SALT - DO NOT EDIT              #\n"
    "#                                                                      #\n"
    "# The contents of this file are managed by Salt. Any changes to this   #\n"
    "# file may be overwritten automatically and without warning.           #\n"
    "########################################################################"
)


def test_banner(loader):
    assert loader["slsutil.banner"]() == BANNER
    javadoc = loader["slsutil.banner"](
        width=40,
        commentchar=" *",
        borderchar="*",
        blockstart="/**",
        blockend=" */",
        title="T",
        text="some long text that wraps around the box here",
        newline=True,
    )
    assert javadoc == (
        "/**\n ***************************************\n *                                     *\n"
        " *                  T                  *\n *                                     *\n"
        " * some long text that wraps around    *\n * the box here                        *\n"
        " ***************************************\n */\n"
    )
    with pytest.raises(CommandExecutionError, match="Width is too small to render banner"):
        loader["slsutil.banner"](width=3)


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "rend").mkdir()
    (tmp_path / "rend" / "map.sls").write_text("#!jinja|yaml\nvalue: {{ grains['id'] }}\nx: {{ saltenv }}\n")
    (tmp_path / "rend" / "plain.txt").write_text("Hello {{ who }}\n")
    (tmp_path / "rend" / "code.sls").write_text("#!py\ndef run():\n    return {'py': True}\n")
    (tmp_path / "rend" / "empty.sls").write_text("  \n")
    return tmp_path


def test_renderer(tree):
    from briny.common.loader import minion_mods

    salt = minion_mods({"id": "m1", "file_client": "local", "file_roots": {"base": [str(tree)]}}, {"id": "m1"}, {})
    assert salt["slsutil.renderer"]("salt://rend/map.sls") == {"value": "m1", "x": "base"}
    assert salt["slsutil.renderer"]("salt://rend/plain.txt", default_renderer="jinja", who="me") == "Hello me\n"
    assert salt["slsutil.renderer"](string="a: {{ 1 + 1 }}") == {"a": 2}
    assert (
        salt["slsutil.renderer"](string="#!jinja\n{{ 'x' | upper }}", default_renderer="yaml") == "#!jinja\nX"
    )  # as Salt: the shebang stays
    assert salt["slsutil.renderer"]("salt://rend/code.sls") == {"py": True}
    assert (
        salt["slsutil.renderer"](str(tree / "rend" / "plain.txt"), default_renderer="jinja", who="local")
        == "Hello local\n"
    )
    # as Salt: a missing or empty template and an unknown renderer log an error and give {}
    assert salt["slsutil.renderer"]("salt://rend/nope.sls") == {}
    assert salt["slsutil.renderer"]("salt://rend/empty.sls") == {}
    assert salt["slsutil.renderer"](str(tree / "nope")) == {}
    assert salt["slsutil.renderer"](string="x", default_renderer="bogus") == {}
    with pytest.raises(SaltInvocationError, match="Must pass either path or string"):
        salt["slsutil.renderer"]()
    with pytest.raises(SaltInvocationError, match="Must not pass both path and string"):
        salt["slsutil.renderer"]("salt://rend/map.sls", string="x")


def test_renderer_on_the_master_stays_behind_the_boundary(tree):
    from briny.common.exceptions import HostAccessError, TemplateError
    from briny.common.fileclient import LocalFileClient
    from briny.common.state.hostview import HostBoundary, OptsView
    from briny.master.pillar import ALLOWED, is_pure, master_side_mods

    boundary = HostBoundary("web1", "the states", is_pure, ALLOWED)
    salt = master_side_mods(
        OptsView({"id": "web1"}), {"id": "web1"}, {}, boundary, LocalFileClient({"base": [str(tree)]})
    )
    # a salt:// file renders on the master, with the minion's grains
    assert salt["slsutil.renderer"]("salt://rend/map.sls") == {"value": "web1", "x": "base"}
    assert boundary.needs == []
    # what the rendered template calls is still checked
    with pytest.raises(TemplateError, match="'cmd.run' needs the minion's host"):
        salt["slsutil.renderer"](string="{{ salt['cmd.run']('id') }}")
    # a local file is on the minion's host, and #!py would run Python in the master
    with pytest.raises(HostAccessError, match="local file"):
        salt["slsutil.renderer"](str(tree / "rend" / "plain.txt"))
    with pytest.raises(Exception, match="'py' renderer runs Python"):
        salt["slsutil.renderer"]("salt://rend/code.sls")
    assert boundary.needs == ["cmd.run", "slsutil.renderer", "#!py"]
