"""The ``ssh_known_hosts`` state module: host keys in known_hosts files (Salt 3007's).

Runs wherever states run; the work goes through the ``ssh`` execution
module (``ssh.check_known_host``, ``set_known_host``,
``get_known_host_entries``, ``rm_known_host``). The file is ``config``
under ``user``'s home (default ``.ssh/known_hosts``), or the absolute
``config`` (default ``/etc/ssh/ssh_known_hosts``) without a user. A host
is known by ``key`` (with ``enc``), or by the keys it offers on ``port``
(``ssh-keyscan``, ``timeout`` seconds), checked against ``fingerprint``
(Salt's hex form, hashed with ``fingerprint_hash_type``, default
``sha256``); ``hash_known_hosts`` (default True) hashes the host names.

Results are Salt's, checked against the reference: ``NAME's key saved to
F (key: K)`` / ``(fingerprint: FP)`` / ``NAME's ENC key saved ...`` /
``NAME's key(s) saved to F`` with changes ``{old, new}``, ``NAME already
exists in F``, ``Host is already absent``, ssh-keygen's own report on a
removal; in test mode ``Key for NAME is set to be added to F`` / ``updated
in`` / ``removed from``, ``Host NAME is already in F``. The argument checks
say what Salt says: ``Specify either "key" or "fingerprint", not both.``,
``Required argument "enc" if using "key" argument.``, ``If not specifying
a "user", specify an absolute "config".``, ``argument port can not be used
in conjunction with argument hash_known_hosts``.

Differences from Salt, on purpose: the argument checks hold live as in test
mode (Salt checks "key"/"fingerprint"/"enc" only in test mode and, live,
writes a line with the type ``None``; it checks the port only live); an
``ssh-keygen`` or ``ssh-keyscan`` that is missing fails the state with
Salt's ``... binary was not found in $PATH.`` live too.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError
from ._access import _salt, _testing

if TYPE_CHECKING:
    pass


def _argument_error(key: Any, fingerprint: Any, enc: Any, port: Any, hash_known_hosts: Any) -> str:
    if key and fingerprint:
        return 'Specify either "key" or "fingerprint", not both.'
    if key and not enc:
        return 'Required argument "enc" if using "key" argument.'
    if port is not None and str(port) != "22" and hash_known_hosts:
        return "argument port can not be used in conjunction with argument hash_known_hosts"
    return ""


def present(
    name: str,
    user: str | None = None,
    fingerprint: str | None = None,
    key: str | None = None,
    port: Any = None,
    enc: str | None = None,
    config: str | None = None,
    hash_known_hosts: bool = True,
    timeout: Any = 5,
    fingerprint_hash_type: str | None = None,
) -> dict[str, Any]:
    """Make ``user``'s known_hosts (or ``config``) know the host ``name``."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": None if _testing() else True, "comment": ""}
    config = config or (".ssh/known_hosts" if user else "/etc/ssh/ssh_known_hosts")
    if not user and not os.path.isabs(config):
        return dict(ret, result=False, comment='If not specifying a "user", specify an absolute "config".')
    bad = _argument_error(key, fingerprint, enc, port, hash_known_hosts)
    if bad:
        return dict(ret, result=False, comment=bad)
    common = {
        "key": key,
        "fingerprint": fingerprint,
        "config": config,
        "port": port,
        "fingerprint_hash_type": fingerprint_hash_type,
    }
    if _testing():
        try:
            found = _salt("ssh.check_known_host")(user, name, **common)
        except CommandExecutionError as exc:
            return dict(ret, result=False, comment=f"ssh.check_known_host error: {exc}")
        if isinstance(found, dict) and "error" in found:
            return dict(ret, result=False, comment=found["error"])
        if found == "exists":
            return dict(ret, result=True, comment=f"Host {name} is already in {config}")
        verb = "added to" if found == "add" else "updated in"
        return dict(ret, comment=f"Key for {name} is set to be {verb} {config}")
    try:
        result = _salt("ssh.set_known_host")(
            user=user, hostname=name, enc=enc, hash_known_hosts=hash_known_hosts, timeout=timeout, **common
        )
    except CommandExecutionError as exc:
        return dict(ret, result=False, comment=str(exc))
    if result["status"] == "exists":
        return dict(ret, comment=f"{name} already exists in {config}")
    if result["status"] == "error":
        return dict(ret, result=False, comment=result["error"])
    changes = {"old": result["old"], "new": result["new"]}
    if key:
        comment = f"{name}'s key saved to {config} (key: {result['new'][0]['key']})"
    elif fingerprint:
        comment = f"{name}'s key saved to {config} (fingerprint: {result['new'][0]['fingerprint']})"
    elif enc:
        comment = f"{name}'s {enc} key saved to {config} (key: {result['new'][0]['key']})"
    else:
        comment = f"{name}'s key(s) saved to {config}"
    return dict(ret, changes=changes, comment=comment)


def absent(name: str, user: str | None = None, config: str | None = None) -> dict[str, Any]:
    """Make ``user``'s known_hosts (or ``config``) forget every key of the host ``name``."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    config = config or (".ssh/known_hosts" if user else "/etc/ssh/ssh_known_hosts")
    if not user and not os.path.isabs(config):
        return dict(ret, result=False, comment='If not specifying a "user", specify an absolute "config".')
    try:
        known = _salt("ssh.get_known_host_entries")(user=user, hostname=name, config=config)
        if not known:
            return dict(ret, comment="Host is already absent")
        if _testing():
            return dict(ret, result=None, comment=f"Key for {name} is set to be removed from {config}")
        removed = _salt("ssh.rm_known_host")(user=user, hostname=name, config=config)
    except CommandExecutionError as exc:
        return dict(ret, result=False, comment=str(exc))
    if removed["status"] == "error":
        return dict(ret, result=False, comment=removed["error"])
    return dict(ret, changes={"old": known, "new": None}, result=True, comment=removed["comment"])
