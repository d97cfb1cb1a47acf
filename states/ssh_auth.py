"""The ``ssh_auth`` state module: keys in users' ``authorized_keys``.

Runs wherever states run; the file work goes through the ``ssh`` execution
module, key files named by ``source`` through ``cp.cache_file``.

``name`` is the key itself, or a whole line (``[options ]enc key
[comment]``) whose parts then override ``enc``, ``comment`` and
``options``. With ``source`` every key of that file is managed and ``name``
is only a label.

Results follow Salt 3007 (checked against the reference): ``The authorized
host key K for user U was added`` (changes ``{K: "New"}``), ``... was
updated`` (``"Updated"``), ``The authorized host key K is already present
for user U``; ``absent`` comments ``Key removed`` / ``Key not present``;
test mode ``Key K for user U is set to be added / updated / set for
removal``, and for a source one ``Set to add: K`` line per key.

Test mode is Salt's: a user that does not exist yet (an earlier state of
the run may create it) has every key ``set to be added``, and a ``source``
that cannot be fetched has none to add or remove (``All host keys in file S
are already present`` / ``absent``, result True).

Differences from Salt, on purpose, in a real run: an unknown user fails with
``Failed to add the ssh key. User U does not exist`` (Salt blames the home
directory); ``absent`` with a ``source`` that cannot be fetched fails (Salt
succeeds with an empty comment); a bad ``enc`` fails the state instead of
raising.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError
from ._access import _env, _salt, _testing

if TYPE_CHECKING:
    from briny.common.dunders import __context__


_FULL = re.compile(r"^(.*?)\s?((?:sk-)?(?:ssh-|ecds)[\w@.-]+\s.+)$")


def _pop_error() -> str | None:
    return __context__.pop("ssh_auth.error", None)


def _split(name: str, enc: str, comment: str, options: Any, max_split: int | None) -> tuple[str, str, str, Any]:
    """(key, enc, comment, options) from a ``name`` that may be a whole key line."""
    found = _FULL.search(name)
    if not found:
        parts = name.split(None, 1)
        key = parts[0] if parts else name
        if len(parts) == 2:
            comment = parts[1]
        return key, enc, comment, options
    if found.group(1):
        options = found.group(1).split(",")
    parts = found.group(2).split(None, max_split) if max_split else found.group(2).split()
    enc, key = parts[0], parts[1]
    if len(parts) == 3:
        comment = parts[2]
    return key, enc, comment, options


def _source_missing(source: str) -> bool:
    return not _salt("cp.cache_file")(source, _env())


def present(
    name: str,
    user: str,
    enc: str = "ssh-rsa",
    comment: str = "",
    source: str = "",
    options: Any = None,
    config: str = ".ssh/authorized_keys",
    fingerprint_hash_type: str | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Ensure the key ``name`` (or every key of ``source``) is authorized for ``user``."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    if not source:
        name, enc, comment, options = _split(str(name), enc, comment, options, 2)
    try:
        if _testing():
            ret["result"], ret["comment"] = _present_test(
                user, name, enc, comment, options or [], source, config, fingerprint_hash_type
            )
            return ret
        if source:
            if _source_missing(source):
                data = "no key"
            else:
                data = _salt("ssh.set_auth_key_from_file")(
                    user,
                    source,
                    config=config,
                    saltenv=_env(),
                    fingerprint_hash_type=fingerprint_hash_type,
                    options=options,
                )
        else:
            data = _salt("ssh.set_auth_key")(
                user,
                name,
                enc=enc,
                comment=comment,
                options=options or [],
                config=config,
                fingerprint_hash_type=fingerprint_hash_type,
            )
    except CommandExecutionError as exc:
        ret.update(result=False, comment=str(exc))
        return ret
    if data == "replace":
        ret["changes"][name] = "Updated"
        ret["comment"] = f"The authorized host key {name} for user {user} was updated"
    elif data == "no change":
        ret["comment"] = f"The authorized host key {name} is already present for user {user}"
    elif data == "new":
        ret["changes"][name] = "New"
        ret["comment"] = f"The authorized host key {name} for user {user} was added"
    elif data == "no key":
        ret.update(result=False, comment=f"Failed to add the ssh key. Source file {source} is missing")
    elif data == "fail":
        ret.update(
            result=False,
            comment=_pop_error()
            or "Failed to add the ssh key. Is the home directory available, and/or does the key file exist?",
        )
    elif data in ("invalid", "Invalid public key"):
        ret.update(result=False, comment="Invalid public ssh key, most likely has spaces or invalid syntax")
    return ret


def _present_test(
    user: str, name: str, enc: str, comment: str, options: list[str], source: str, config: str, hash_type: str | None
) -> tuple[bool | None, str]:
    if source:  # a source that cannot be fetched has no keys to add: "already present", as Salt
        keys = _salt("ssh.check_key_file")(user, source, config, saltenv=_env(), fingerprint_hash_type=hash_type)
        lines = "".join(f"Set to {status}: {key}\n" for key, status in keys.items() if status != "exists")
        if lines:
            return None, lines
        err = _pop_error()
        if err:
            return False, err
        return True, f"All host keys in file {source} are already present"
    # a user that does not exist yet (an earlier state may create it) has every key to add
    check = _salt("ssh.check_key")(user, name, enc, comment, options, config=config, fingerprint_hash_type=hash_type)
    if check == "update":
        return None, f"Key {name} for user {user} is set to be updated"
    if check == "add":
        return None, f"Key {name} for user {user} is set to be added"
    return True, f"The authorized host key {name} is already present for user {user}"


def absent(
    name: str,
    user: str,
    enc: str = "ssh-rsa",
    comment: str = "",
    source: str = "",
    options: Any = None,
    config: str = ".ssh/authorized_keys",
    fingerprint_hash_type: str | None = None,
) -> dict[str, Any]:
    """Ensure the key ``name`` (or every key of ``source``) is not authorized for ``user``."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    try:
        if _testing():
            ret["result"], ret["comment"] = _absent_test(
                user, str(name), enc, comment, options or [], source, config, fingerprint_hash_type
            )
            return ret
        if source:
            if _source_missing(source):
                ret.update(result=False, comment=f"Failed to remove the ssh keys. Source file {source} is missing")
                return ret
            ret["comment"] = _salt("ssh.rm_auth_key_from_file")(
                user, source, config, saltenv=_env(), fingerprint_hash_type=fingerprint_hash_type
            )
        else:
            name, enc, comment, options = _split(str(name), enc, comment, options, None)
            ret["comment"] = _salt("ssh.rm_auth_key")(
                user, name, config=config, fingerprint_hash_type=fingerprint_hash_type
            )
    except CommandExecutionError as exc:
        ret.update(result=False, comment=str(exc))
        return ret
    if ret["comment"] == "Key removed":
        ret["changes"][name] = "Removed"
    elif ret["comment"] in ("Key not removed", "fail"):
        ret["result"] = False
        if ret["comment"] == "fail":
            ret["comment"] = _pop_error() or "Failed to remove the ssh keys"
    return ret


def _absent_test(
    user: str, name: str, enc: str, comment: str, options: list[str], source: str, config: str, hash_type: str | None
) -> tuple[bool | None, str]:
    if source:  # a source that cannot be fetched has no keys to remove: "already absent", as Salt
        keys = _salt("ssh.check_key_file")(user, source, config, saltenv=_env(), fingerprint_hash_type=hash_type)
        lines = "".join(f"Set to remove: {key}\n" for key, status in keys.items() if status != "add")
        if lines:
            return None, lines
        err = _pop_error()
        if err:
            return False, err
        return True, f"All host keys in file {source} are already absent"
    name, enc, comment, options = _split(name, enc, comment, options, None)
    check = _salt("ssh.check_key")(user, name, enc, comment, options, config=config, fingerprint_hash_type=hash_type)
    if check in ("update", "exists"):
        return None, f"Key {name} for user {user} is set for removal"
    return True, "Key is already absent"
