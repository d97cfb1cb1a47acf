"""The lazy loader: naming, virtual names, aliases, dunders, failures."""

import pytest

from briny.common import loader
from briny.common.exceptions import FunctionNotFound


@pytest.fixture
def custom(tmp_path):
    (tmp_path / "mymod.py").write_text(
        "import os\n__func_alias__ = {'list_': 'list'}\n"
        "def hello(name='x'):\n    return f'hi {name} from {__opts__[\"id\"]} on {__grains__[\"os\"]}'\n"
        "def list_():\n    return [1]\ndef _private():\n    pass\n"
        "def uses_salt():\n    return __salt__['mymod.list']()\n"
    )
    (tmp_path / "aptish.py").write_text(
        "__virtualname__ = 'pkgish'\ndef __virtual__():\n    return __virtualname__\ndef version():\n    return '1.0'\n"
    )
    (tmp_path / "never.py").write_text(
        "def __virtual__():\n    return (False, 'no such tool here')\ndef f():\n    pass\n"
    )
    (tmp_path / "broken.py").write_text("import nosuchmodule_xyz\n")
    return tmp_path


def test_functions_dunders_aliases(custom):
    salt = loader.minion_mods({"id": "m1"}, {"os": "Debian"}, {}, extra_dirs=[custom])
    assert salt["mymod.hello"]("bob") == "hi bob from m1 on Debian"
    assert salt.mymod.list() == [1]
    assert salt["mymod.uses_salt"]() == [1]
    assert "mymod._private" not in salt and "mymod.os" not in salt
    assert salt["pkgish.version"]() == "1.0"


def _missing(salt, key):
    with pytest.raises(FunctionNotFound) as info:
        salt[key]
    return str(info.value)


def test_unavailable_modules_say_why_in_salt_s_words(custom):
    """As the reference salt-call says them for a custom module (tests/golden/compiler/
    err_virtual_false records the state modules' side)."""
    (custom / "plain.py").write_text("def __virtual__():\n    return False\ndef f():\n    pass\n")
    (custom / "raiser.py").write_text("def __virtual__():\n    raise ValueError('boom')\ndef f():\n    pass\n")
    salt = loader.minion_mods({"id": "m1"}, {}, {}, extra_dirs=[custom])
    assert _missing(salt, "never.f") == "'never' __virtual__ returned False: no such tool here"
    assert _missing(salt, "plain.f") == "'plain' __virtual__ returned False"
    assert _missing(salt, "broken.x") == "'broken' __virtual__ returned False: No module named 'nosuchmodule_xyz'"
    assert _missing(salt, "raiser.f") == (
        "'raiser' __virtual__ returned False: Exception raised when processing __virtual__ function for "
        "briny.loaded.modules.raiser. Module will not be loaded: boom"
    )
    assert _missing(salt, "nosuch.fun") == "'nosuch.fun' is not available."
    assert _missing(salt, "mymod.nosuch") == "'mymod.nosuch' is not available."  # loaded, no such function


def test_each_loader_has_its_own_module_objects(custom):
    a = loader.minion_mods({"id": "a"}, {"os": "A"}, {}, extra_dirs=[custom])
    b = loader.minion_mods({"id": "b"}, {"os": "B"}, {}, extra_dirs=[custom])
    assert a["mymod.hello"]() == "hi x from a on A" and b["mymod.hello"]() == "hi x from b on B"


def test_custom_module_overrides_builtin(tmp_path):
    (tmp_path / "test.py").write_text("def ping():\n    return 'custom'\n")
    assert loader.minion_mods({}, {}, {}, extra_dirs=[tmp_path])["test.ping"]() == "custom"


def test_reload_forgets_modules(custom):
    salt = loader.minion_mods({"id": "m"}, {"os": "x"}, {}, extra_dirs=[custom])
    first = salt["mymod.list"]
    salt.reload()
    assert salt["mymod.list"] is not first


def _siblings(tmp_path):
    """``big.py`` keeps functions in private files beside it and imports them."""
    (tmp_path / "big.py").write_text(
        "from ._big_more import two\n"
        "from ._big_util import _helper\n"
        "from . import _big_util\n"
        "__all__ = ['one', 'two']\n"
        "def one():\n    return _helper()\n"
        "def util_module():\n    return _big_util\n"
    )
    (tmp_path / "_big_more.py").write_text(
        "from ._big_util import _helper, visible\n"
        "def two():\n    return _helper() + '!' + str(globals().get('__env__'))\n"
    )
    (tmp_path / "_big_util.py").write_text(
        "def _helper():\n    return __opts__['id'] + ':' + __salt__['big.one'].__name__\n"
        "def visible():\n    return 'a public helper the module does not import'\n"
    )
    return loader.minion_mods({"id": "m"}, {}, {}, extra_dirs=[tmp_path])


def test_private_sibling_files_are_the_modules_own(tmp_path):
    salt = _siblings(tmp_path)
    assert salt["big.one"]() == "m:one"
    assert salt["big.two"]() == "m:one!None"  # a function defined in a sibling, with the dunders
    assert sorted(salt.functions("big")) == ["one", "two", "util_module"]  # "visible" is not imported
    assert "_big_more.two" not in salt and "_big_util.visible" not in salt  # siblings are not modules
    # one copy of a sibling per load, shared by the module and its other siblings
    assert salt["big.util_module"]()._helper is salt["big.two"].__globals__["_helper"]
    import sys

    assert not [m for m in sys.modules if m.startswith("briny.loaded.")]  # nothing left in sys.modules


def test_per_call_dunders_reach_the_siblings(tmp_path):
    salt = _siblings(tmp_path)
    assert salt.inject("big", {"__env__": "prod", "__low__": {"x": 1}}) is True
    assert salt["big.two"]() == "m:one!prod"
    assert salt.inject("nosuch", {"__env__": "x"}) is False


def test_two_loaders_never_share_a_sibling(tmp_path):
    a = _siblings(tmp_path)
    b = loader.minion_mods({"id": "other"}, {}, {}, extra_dirs=[tmp_path])
    assert a["big.two"]() == "m:one!None" and b["big.two"]() == "other:one!None"
    assert a["big.util_module"]() is not b["big.util_module"]()
    a.reload()
    assert a["big.util_module"]() is not b["big.util_module"]()


def test_only_private_siblings_may_be_imported(tmp_path):
    (tmp_path / "greedy.py").write_text("from . import other\ndef f():\n    pass\n")
    (tmp_path / "other.py").write_text("def g():\n    pass\n")
    (tmp_path / "lost.py").write_text("from ._nowhere import x\ndef f():\n    pass\n")
    salt = loader.minion_mods({"id": "m"}, {}, {}, extra_dirs=[tmp_path])
    with pytest.raises(FunctionNotFound, match="imports only its private sibling files"):
        salt["greedy.f"]
    with pytest.raises(FunctionNotFound, match="no private sibling file .*_nowhere.py"):
        salt["lost.f"]
    assert salt["other.g"]() is None  # the module itself is fine


def test_file_state_functions_from_private_files(tmp_path):
    """file.serialize, file.line, file.symlink, ... live in private files of states/file.py."""
    opts = {"id": "m", "test": False}
    salt = loader.minion_mods(opts, {}, {"app": {"conf": {"a": 1}}})
    states = loader.states(opts, salt)
    funcs = states.functions("file")
    for fun in ("managed", "serialize", "line", "symlink", "append", "blockreplace", "copy", "rename", "keyvalue"):
        assert fun in funcs, fun
    target = tmp_path / "out.json"
    ret = states["file.serialize"](name=str(target), dataset_pillar="app:conf", serializer="json")
    assert ret["result"] is True and target.read_text() == '{\n  "a": 1\n}\n'
    ret = states["file.line"](name=str(target), content='  "z": 0,', mode="insert", before='"a": 1')
    assert ret["result"] is True and target.read_text() == '{\n  "z": 0,\n  "a": 1\n}\n'
    link = tmp_path / "link"
    assert states["file.symlink"](name=str(link), target=str(target))["result"] is True
    assert link.is_symlink() and link.resolve() == target


def test_loaded_files_keep_one_name_and_one_logger_however_often_they_load(tmp_path):
    """Each load runs the file afresh, but under the same __name__ (Salt's salt.loaded.int.module.x):
    its logger is made once (a name per load made a new logger per job, kept by logging for
    ever), and salt.modules in log_granular_levels (briny.loaded.modules) reaches it."""
    import logging

    from briny.common import logsetup

    (tmp_path / "logs.py").write_text(
        "import logging\nlog = logging.getLogger(__name__)\ndef name():\n    return log\n"
    )
    salt = _siblings(tmp_path)
    assert salt.module("big").__name__ == "briny.loaded.modules.big"
    helper = salt["big.util_module"]()
    assert helper.__name__ == "briny.loaded.modules._big_util"
    first = loader.minion_mods({"id": "m"}, {}, {}, extra_dirs=[tmp_path])["logs.name"]()
    before = len(logging.Logger.manager.loggerDict)
    for _ in range(20):
        again = loader.minion_mods({"id": "m"}, {}, {}, extra_dirs=[tmp_path])
        assert again["logs.name"]() is first and again["big.two"]() == "m:one!None"
    assert len(logging.Logger.manager.loggerDict) == before
    parent = logging.getLogger(logsetup.SALT_LOGGERS["salt.modules"])
    parent.setLevel(logging.ERROR)
    try:
        assert first.getEffectiveLevel() == logging.ERROR  # what log_granular_levels sets reaches it
    finally:
        parent.setLevel(logging.NOTSET)


DATACLASS = """
from __future__ import annotations
import dataclasses
import typing

@dataclasses.dataclass
class Thing:
    x: int = 1
    kept: typing.ClassVar[int] = 5

def make():
    return dataclasses.asdict(Thing())
"""


def test_a_dataclass_with_string_annotations_loads_in_a_module_and_in_a_sibling(tmp_path):
    """dataclasses looks a class's module up in sys.modules by its __module__ (string
    annotations): while a loaded file runs, it is there under its name, and gone after."""
    import sys

    (tmp_path / "_dcsib.py").write_text(DATACLASS)
    (tmp_path / "dc.py").write_text("from ._dcsib import make\n\ndef run():\n    return make()\n")
    (tmp_path / "dcmain.py").write_text(DATACLASS.replace("def make", "def run"))
    salt = loader.minion_mods({"id": "m"}, {}, {}, extra_dirs=[tmp_path])
    assert salt["dc.run"]() == {"x": 1}, salt.missing_message("dc.run")  # ClassVar is not a field
    assert salt["dcmain.run"]() == {"x": 1}, salt.missing_message("dcmain.run")
    assert not [m for m in sys.modules if m.startswith("briny.loaded.")]


def test_a_released_loader_refuses_to_load_again(tmp_path):
    """After its job ended (release), a loader says so instead of running modules without
    their dunders."""
    from briny.common.exceptions import LoaderError

    salt = loader.minion_mods({"id": "m"}, {}, {})
    assert salt["test.ping"]() is True
    salt.release()
    with pytest.raises(LoaderError, match="after its job ended"):
        salt["test.ping"]


def test_testing_shows_the_modules_a_copy_of_the_opts_with_test_set(tmp_path):
    """A prereq check's view (``LazyLoader.testing``): the modules loaded before and during it, and
    their private files, read ``__opts__["test"]`` as asked, the opts dict is never written, and
    afterwards they see the opts themselves again."""
    (tmp_path / "flagmod.py").write_text("from ._flag_util import seen\ndef early():\n    return __opts__['test']\n")
    (tmp_path / "_flag_util.py").write_text("def seen():\n    return __opts__['test']\n")
    (tmp_path / "late.py").write_text("def f():\n    return __opts__['test']\n")
    opts = {"id": "m", "test": False}
    salt = loader.minion_mods(opts, extra_dirs=[tmp_path])
    assert salt["flagmod.early"]() is False
    with salt.testing(True):
        assert (salt["flagmod.early"](), salt["flagmod.seen"](), salt["late.f"]()) == (True, True, True)
        assert salt.sibling()["late.f"]() is False  # a sibling made meanwhile has the opts themselves
        assert opts == {"id": "m", "test": False}
    assert (salt["flagmod.early"](), salt["flagmod.seen"](), salt["late.f"]()) == (False, False, False)
    assert salt["late.f"].__globals__["__opts__"] is opts and salt.pack["__opts__"] is opts
    with salt.testing(False):  # what the opts say already: nothing to show
        assert salt["late.f"].__globals__["__opts__"] is opts
