"""The ``locale`` state module: compiled locales and the system's default locale.

``locale.present`` compiles a locale when it is missing (``en_US.UTF-8``;
it must be listed in ``/usr/share/i18n/SUPPORTED``); ``locale.system`` makes
it the system's ``LANG``. The work goes through the ``locale`` execution
module.

Results follow Salt 3007 (checked against the reference on Debian 12, live,
test mode and second runs): ``Locale x is already present``, ``Generated
locale x`` (changes ``{"locale": x}``), ``Failed to generate locale x``, test
mode ``Locale x needs to be generated``; ``System locale x already set``,
``Set system locale x`` (changes ``{"locale": x}``), test mode ``System
locale x needs to be set``, ``Failed to set system locale: ...`` when the
locale cannot be read or written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError
from ._access import _testing

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


def _salt(fun: str) -> Any:
    return __salt__[f"locale.{fun}"]


def system(name: str) -> dict[str, Any]:
    """Make ``name`` the system's default locale (``LANG``)."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": None, "comment": ""}
    try:
        if _salt("get_locale")() == name:
            ret.update(result=True, comment=f"System locale {name} already set")
        elif _testing():
            ret["comment"] = f"System locale {name} needs to be set"
        elif _salt("set_locale")(name):
            ret.update(changes={"locale": name}, result=True, comment=f"Set system locale {name}")
        else:
            ret.update(result=False, comment=f"Failed to set system locale to {name}")
    except CommandExecutionError as err:
        ret.update(result=False, comment=f"Failed to set system locale: {err}")
    return ret


def present(name: str) -> dict[str, Any]:
    """Make sure the locale ``name`` is compiled (generate it when it is not)."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": None, "comment": ""}
    if _salt("avail")(name):
        ret.update(result=True, comment=f"Locale {name} is already present")
    elif _testing():
        ret["comment"] = f"Locale {name} needs to be generated"
    else:
        try:
            done = _salt("gen_locale")(name)
        except CommandExecutionError as err:
            done = False
            ret["comment"] = f"Failed to generate locale {name}: {err}"
        if done:
            ret.update(changes={"locale": name}, result=True, comment=f"Generated locale {name}")
        else:
            ret["result"] = False
            ret["comment"] = ret["comment"] or f"Failed to generate locale {name}"
    return ret
