"""``pkgrepo.managed`` on the RHEL family and SUSE: a repo is a stanza of a ``.repo`` file
(``humanname`` is its ``name=``, ``enabled`` / ``disabled`` its ``enabled=``), compared key by
key with what the file holds, as Salt 3007 compares it (a private part of
:mod:`briny.states.pkgrepo`)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError
from briny.common.truth import says_true

from ._pkgrepo_common import configured, would_configure

if TYPE_CHECKING:
    from briny.common.dunders import __grains__, __opts__, __salt__

__all__: list[str] = []

log = logging.getLogger(__name__)


def _same(key: str, want: Any, have: Any, redhat: bool) -> bool:
    if key == "comments":
        return _comments(want) == _comments(have)
    if isinstance(want, bool) or isinstance(have, bool):
        return says_true(want) == says_true(have)
    return str(want) == str(have)


def _comments(value: Any) -> str:
    items = value if isinstance(value, list) else [value]
    return "".join(f"# {str(c).lstrip('#').lstrip()}\n" for c in items)


def managed_rpm(name: str, ret: dict[str, Any], kwargs: dict[str, Any], enabled: Any, disabled: Any) -> dict[str, Any]:
    """The RedHat / Suse part of ``pkgrepo.managed``, after the arguments common to every
    family were checked."""
    redhat = __grains__.get("os_family") == "RedHat"
    kwargs["name"] = repo = name
    if kwargs.get("copr") is not None:
        ret.update(result=False, comment="COPR repositories are not supported by briny yet")
        return ret
    kwargs.pop("copr", None)
    if "humanname" in kwargs:
        kwargs["name"] = kwargs.pop("humanname")
    kwargs["enabled"] = (not says_true(disabled)) if disabled is not None else says_true(enabled)
    for key in [k for k in kwargs if k.startswith("__")]:
        kwargs.pop(key)
    try:
        pre = __salt__["pkg.get_repo"](repo=repo, **kwargs)
    except (CommandExecutionError, SaltInvocationError) as exc:
        ret.update(result=False, comment=f"Failed to examine repo '{name}': {exc}")
        return ret
    want = kwargs
    if pre:
        pre.pop("file", None)
        want.pop("file", None)
        differs = False
        for key, value in want.items():
            if key not in pre:
                if key == "enabled" and redhat and says_true(value):
                    continue  # dnf takes a repo without enabled= as enabled
                differs = True
                break
            if not _same(key, value, pre[key], redhat):
                differs = True
                break
        if not differs:
            ret.update(result=True, comment=f"Package repo '{name}' already configured")
            return ret
    if __opts__.get("test"):
        return would_configure(ret, name, pre, want)
    try:
        __salt__["pkg.mod_repo"](repo, **kwargs)
    except Exception as exc:
        log.error(
            "pkg.mod_repo failed for %s: %s",
            name,
            exc,
            exc_info=not isinstance(exc, (CommandExecutionError, SaltInvocationError)),
        )
        ret.update(result=False, comment=f"Failed to configure repo '{name}': {exc}")
        return ret
    try:
        post = __salt__["pkg.get_repo"](repo=repo, **kwargs)
    except (CommandExecutionError, SaltInvocationError) as exc:
        ret.update(result=False, comment=f"Failed to confirm config of repo '{name}': {exc}")
        return ret
    return configured(ret, name, repo, pre, want, post)
