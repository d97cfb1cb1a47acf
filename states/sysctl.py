"""The ``sysctl`` state module: kernel parameters, live and persisted (Salt 3007's ``sysctl``).

Runs wherever states run; the work goes through the ``sysctl`` execution
module. ``present`` writes ``name = value`` into ``config`` (default:
``sysctl.default_config``, ``/etc/sysctl.d/99-salt.conf`` under systemd,
else ``/etc/sysctl.conf``) and sets the live value. Results are Salt's,
checked against the reference: ``Updated sysctl value N = V`` (changes
``{N: V}``), ``Sysctl value N = V is already set``, ``Failed to set N to
V: ...`` when the kernel refuses the value (a read-only key, one that does
not exist: the line stays in the config file, as with Salt); in test mode
``Sysctl option N would be changed to V``, ``... set to be changed to V``,
or ``Sysctl value is currently set on the running system but not in a
config file. ...`` (no changes, as Salt reports them).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError
from ._access import _salt

if TYPE_CHECKING:
    from briny.common.dunders import __opts__, __salt__


def present(name: str, value: Any, config: str | None = None) -> dict[str, Any]:
    """Make ``name`` equal ``value`` in the running kernel and in ``config``."""
    ret: dict[str, Any] = {"name": name, "result": True, "changes": {}, "comment": ""}
    if config is None:
        known = "sysctl.default_config" in __salt__
        config = _salt("sysctl.default_config")() if known else "/etc/sysctl.conf"
    if __opts__["test"]:
        ret.update(_would(name, value, config))
        return ret
    try:
        update = _salt("sysctl.persist")(name, value, config)
    except CommandExecutionError as exc:
        ret.update(result=False, comment=f"Failed to set {name} to {value}: {exc}")
        return ret
    if update == "Updated":
        ret["changes"] = {name: value}
        ret["comment"] = f"Updated sysctl value {name} = {value}"
    elif update == "Already set":
        ret["comment"] = f"Sysctl value {name} = {value} is already set"
    return ret


def _would(name: str, value: Any, config: str) -> dict[str, Any]:
    configured = _salt("sysctl.show")(config_file=config)
    if configured is None:
        return {
            "result": None,
            "comment": f"Sysctl option {name} might be changed, we failed to check config file at {config}. "
            "The file is either unreadable, or missing.",
        }
    current = _salt("sysctl.get")(name)
    if current:
        if name in configured:
            if str(value).split() == current.split():
                return {"result": True, "comment": f"Sysctl value {name} = {value} is already set"}
        elif re.sub(" +|\t+", " ", current) != re.sub(" +|\t+", " ", str(value)):
            return {"result": None, "comment": f"Sysctl option {name} set to be changed to {value}"}
        else:
            return {
                "result": None,
                "comment": "Sysctl value is currently set on the running system but not in a config file. "
                f"Sysctl option {name} set to be changed to {value} in config file.",
            }
    elif name in configured:
        return {
            "result": None,
            "comment": f"Sysctl value {name} is present in configuration file but is not present in the running "
            f"config. The value {name} is set to be changed to {value}",
        }
    return {"result": None, "comment": f"Sysctl option {name} would be changed to {value}"}
