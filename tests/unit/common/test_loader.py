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


def test_unavailable_modules_say_why(custom):
    salt = loader.minion_mods({"id": "m1"}, {}, {}, extra_dirs=[custom])
    with pytest.raises(FunctionNotFound, match="no such tool here"):
        salt["never.f"]
    with pytest.raises(FunctionNotFound, match="failed to import broken.py"):
        salt["broken.x"]
    with pytest.raises(FunctionNotFound, match="'nosuch.fun' is not available"):
        salt["nosuch.fun"]


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


def test_module_parts_share_the_namespace(tmp_path):
    (tmp_path / "big.py").write_text(
        "__parts__ = ('_big_more',)\ndef _helper():\n    return __opts__['id']\ndef one():\n    return 1\n"
    )
    (tmp_path / "_big_more.py").write_text("def two():\n    return _helper() + '!'\n")
    (tmp_path / "bad.py").write_text("__parts__ = ('../evil',)\ndef f():\n    pass\n")
    salt = loader.minion_mods({"id": "m"}, {}, {}, extra_dirs=[tmp_path])
    assert salt["big.one"]() == 1 and salt["big.two"]() == "m!"
    assert "_big_more.two" not in salt  # parts are not modules of their own
    with pytest.raises(FunctionNotFound, match="private module names"):
        salt["bad.f"]
