"""The ``grains`` state module: grains set in the minion's grains file (Salt 3007's ``grains``).

``present`` / ``absent`` set a grain (``a:b:c`` for nested keys, another
``delimiter`` allowed) or set it to None (``destructive: True`` deletes it);
a list or dict already there is only replaced with ``force: True``.
``list_present`` / ``list_absent`` add or remove values of a list grain,
``append`` adds one to an existing list grain (``convert: True`` makes a
single value a list), ``exists`` checks that a grain is there. The work is
the ``grains`` execution module's (``grains.set``, ``grains.append``, ...),
which persists the grains in the minion's grains file and makes them
visible to the rest of the run at once. Results, comments and test-mode
answers are Salt's (``tests/golden/functions/tree/grains_states.sls``).

A deliberate difference: Salt's ``list_present`` reports in ``changes`` the
live grain list, so a later state of the same run that changes that list
changes what an earlier state reported; briny reports the list as it was
when the state ran.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from ._access import _testing

if TYPE_CHECKING:
    from briny.common.dunders import __grains__, __salt__

_DELIM = ":"
_MISSING = object()


def _ret(name: str) -> dict[str, Any]:
    return {"name": name, "changes": {}, "result": True, "comment": ""}


def _key(name: str, delimiter: str) -> str:
    return re.sub(delimiter, _DELIM, str(name))


def exists(name: str, delimiter: str = _DELIM, **kwargs: Any) -> dict[str, Any]:
    """The grain ``name`` is there (whatever its value)."""
    name = _key(name, delimiter)
    ret = _ret(name)
    if __salt__["grains.get"](name, _MISSING) is _MISSING:
        ret.update(result=False, comment="Grain does not exist")
    else:
        ret["comment"] = "Grain exists"
    return ret


def present(name: str, value: Any, delimiter: str = _DELIM, force: bool = False, **kwargs: Any) -> dict[str, Any]:
    """The grain ``name`` is set to ``value``."""
    name = _key(name, delimiter)
    ret = _ret(name)
    existing = __salt__["grains.get"](name, _MISSING)
    if existing == value:
        ret["comment"] = "Grain is already set"
        return ret
    if _testing():
        ret["result"] = None
        if existing is _MISSING:
            ret.update(comment=f"Grain {name} is set to be added", changes={"new": name})
        else:
            ret.update(comment=f"Grain {name} is set to be changed", changes={"changed": {name: value}})
        return ret
    done = __salt__["grains.set"](name, value, force=force)
    if done["result"] is True and done["changes"] != {}:
        done["comment"] = f"Set grain {name} to {value}"
    done["name"] = name
    return dict(done)


def absent(
    name: str, destructive: bool = False, delimiter: str = _DELIM, force: bool = False, **kwargs: Any
) -> dict[str, Any]:
    """The grain ``name`` is None (``destructive``: not there at all)."""
    name = _key(name, delimiter)
    ret = _ret(name)
    grain = __salt__["grains.get"](name, _MISSING)
    if grain is _MISSING:
        ret["comment"] = f"Grain {name} does not exist"
        return ret
    destroy = destructive is True
    if _testing():
        ret["result"] = None
        if destroy:
            ret.update(comment=f"Grain {name} is set to be deleted", changes={"deleted": name})
        elif grain is not None:
            ret.update(
                comment=f"Value for grain {name} is set to be deleted (None)", changes={"grain": name, "value": None}
            )
        return ret
    done = dict(__salt__["grains.set"](name, None, destructive=destructive, force=force))
    if done["result"]:
        if destroy:
            done.update(comment=f"Grain {name} was deleted", changes={"deleted": name})
        elif grain is not None:
            done.update(comment=f"Value for grain {name} was set to None", changes={"grain": name, "value": None})
    done["name"] = name
    return done


def list_present(name: str, value: Any, delimiter: str = _DELIM, **kwargs: Any) -> dict[str, Any]:
    """``value`` (each item of a list) is in the list grain ``name`` (made when missing)."""
    name = _key(name, delimiter)
    ret = _ret(name)
    grain = __salt__["grains.get"](name)
    prefix = ""
    if grain:
        if not isinstance(grain, list):
            ret.update(result=False, comment=f"Grain {name} is not a valid list")
            return ret
        if isinstance(value, list):
            there = [v for v in value if v in grain]
            missing = [v for v in value if v not in grain]
            if not missing:
                ret["comment"] = f"Value {value} is already in grain {name}"
                return ret
            value = missing
            if there:
                prefix = f'Removed value {there} from update due to value found in "{name}".\n'
        elif value in grain:
            ret["comment"] = f"Value {value} is already in grain {name}"
            return ret
        if _testing():
            ret.update(
                result=None, comment=f"Value {value} is set to be appended to grain {name}", changes={"new": grain}
            )
            return ret
    elif _testing():
        ret.update(result=None, comment=f"Grain {name} is set to be added", changes={"new": grain})
        return ret
    new = __salt__["grains.append"](name, value)
    after = __salt__["grains.get"](name, [])
    wanted = value if isinstance(value, list) else [value]
    if any(v not in after for v in wanted):
        ret.update(result=False, comment=f"Failed append value {value} to grain {name}")
        return ret
    ret.update(comment=f"{prefix}Append value {value} to grain {name}", changes={"new": new})
    return ret


def list_absent(name: str, value: Any, delimiter: str = _DELIM, **kwargs: Any) -> dict[str, Any]:
    """``value`` (each item of a list) is not in the list grain ``name``."""
    name = _key(name, delimiter)
    ret = _ret(name)
    grain = __salt__["grains.get"](name, None)
    if not grain:
        ret["comment"] = f"Grain {name} does not exist"
        return ret
    if not isinstance(grain, list):
        ret.update(result=False, comment=f"Grain {name} is not a valid list")
        return ret
    comments = []
    for val in value if isinstance(value, list) else [value]:
        if val not in grain:
            comments.append(f"Value {val} is absent from grain {name}")
            continue
        if _testing():
            ret["result"] = None
            comments.append(f"Value {val} in grain {name} is set to be deleted")
        else:
            __salt__["grains.remove"](name, val)
            comments.append(f"Value {val} was deleted from grain {name}")
        ret["changes"].setdefault("deleted", []).append(val)
    ret["comment"] = "\n".join(comments)
    return ret


def append(name: str, value: Any, convert: bool = False, delimiter: str = _DELIM, **kwargs: Any) -> dict[str, Any]:
    """Add ``value`` to the list grain ``name``, which must exist (``convert``: a single value
    becomes a list)."""
    name = _key(name, delimiter)
    ret = _ret(name)
    grain = __salt__["grains.get"](name, None)
    if not grain and name not in __grains__:
        ret.update(result=False, comment=f"Grain {name} does not exist")
        return ret
    if isinstance(grain, list):
        if value in grain:
            ret["comment"] = f"Value {value} is already in the list for grain {name}"
            return ret
        if _testing():
            ret.update(
                result=None, comment=f"Value {value} in grain {name} is set to be added", changes={"added": value}
            )
            return ret
        __salt__["grains.append"](name, value)
    elif convert is True:
        if _testing():
            ret.update(
                result=None,
                comment=f"Grain {name} is set to be converted to list and value {value} will be added",
                changes={"added": value},
            )
            return ret
        __salt__["grains.setval"](name, ([] if grain is None else [grain]) + [value])
    else:
        ret.update(result=False, comment=f"Grain {name} is not a valid list")
        return ret
    ret.update(comment=f"Value {value} was added to grain {name}", changes={"added": value})
    return ret
