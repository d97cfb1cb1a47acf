"""The ``mysql_user`` state module: MySQL/MariaDB accounts present or absent.

Works through the ``mysql`` execution module (the ``mariadb``/``mysql``
client); every other keyword argument is a connection argument
(``connection_host``, ``connection_user``, ``connection_pass`` ..., else the
``mysql.*`` config keys). Arguments, comments and changes are Salt 3007's:
``present`` wants ``password`` or ``password_hash`` unless
``allow_passwordless`` (or ``unix_socket``); ``The user u@h has been
added`` (``{u: Present}``), ``User u@h is already present with the desired
password``, ``Password for user u@h has been changed`` (``{u: Updated}``),
``User u@h is set to be added`` / ``Password for user u@h is set to be
changed`` in test mode; ``absent``: ``User u@h has been removed`` (``{u:
Absent}``), ``User u@h is not present, so it cannot be removed``. A server
error fails the state with its text (``MySQL Error 1045: ...``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._db_state_args import _mysql_error
from ._access import _salt, _testing
from briny.common.truth import is_true as _true

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


def __virtual__() -> Any:
    if "mysql.user_create" in __salt__:
        return True
    return (False, "mysql module could not be loaded")


def present(
    name: str,
    host: str = "localhost",
    password: Any = None,
    password_hash: Any = None,
    allow_passwordless: bool = False,
    unix_socket: bool = False,
    password_column: Any = None,
    auth_plugin: str = "mysql_native_password",
    **connection_args: Any,
) -> dict[str, Any]:
    """Ensure ``name@host`` exists with this password (or hash, or none, or unix_socket auth)."""
    ret: dict[str, Any] = {
        "name": name,
        "changes": {},
        "result": True,
        "comment": f"User {name}@{host} is already present",
    }
    passwordless = not any((password, password_hash))
    if passwordless:
        if not _true(allow_passwordless) and not unix_socket:
            ret["comment"] = "Either password or password_hash must be specified, unless allow_passwordless is True"
            ret["result"] = False
            return ret
        if _salt("mysql.user_exists")(
            name, host, passwordless=True, unix_socket=unix_socket, password_column=password_column, **connection_args
        ):
            if allow_passwordless:
                ret["comment"] += " with passwordless login"
            return ret
    elif _salt("mysql.user_exists")(
        name, host, password, password_hash, unix_socket=unix_socket, password_column=password_column, **connection_args
    ):
        if auth_plugin == "mysql_native_password":
            ret["comment"] += " with the desired password"
            if password_hash and not password:
                ret["comment"] += " hash"
        else:
            ret["comment"] += ". Unable to verify password."
        return ret
    err = _mysql_error()
    if err is not None:
        ret.update(comment=err, result=False)
        return ret
    if _salt("mysql.user_exists")(name, host, unix_socket=unix_socket, **connection_args):
        if _testing():
            ret["comment"] = f"Password for user {name}@{host} is set to be "
            ret["result"] = None
            if passwordless:
                ret["comment"] += "cleared"
                if not _true(allow_passwordless):
                    ret["comment"] += ", but allow_passwordless != True"
                    ret["result"] = False
            else:
                ret["comment"] += "changed"
            return ret
        if _salt("mysql.user_chpass")(
            name, host, password, password_hash, allow_passwordless, unix_socket, **connection_args
        ):
            ret["comment"] = f"Password for user {name}@{host} has been {'cleared' if passwordless else 'changed'}"
            ret["changes"][name] = "Updated"
        else:
            ret["comment"] = f"Failed to {'clear' if passwordless else 'change'} password for user {name}@{host}"
            err = _mysql_error()
            if err is not None:
                ret["comment"] += f" ({err})"
            if passwordless and not _true(allow_passwordless):
                ret["comment"] += ". Note: allow_passwordless must be True to permit passwordless login."
            ret["result"] = False
        return ret
    err = _mysql_error()
    if err is not None:
        ret.update(comment=err, result=False)
        return ret
    if _testing():
        ret["comment"] = f"User {name}@{host} is set to be added"
        ret["result"] = None
        if allow_passwordless:
            ret["comment"] += " with passwordless login"
            if not _true(allow_passwordless):
                ret["comment"] += ", but allow_passwordless != True"
                ret["result"] = False
        if unix_socket:
            ret["comment"] += " using unix_socket"
        return ret
    if _salt("mysql.user_create")(
        name,
        host,
        password,
        password_hash,
        allow_passwordless,
        unix_socket=unix_socket,
        password_column=password_column,
        auth_plugin=auth_plugin,
        **connection_args,
    ):
        ret["comment"] = f"The user {name}@{host} has been added"
        if allow_passwordless:
            ret["comment"] += " with passwordless login"
        if unix_socket:
            ret["comment"] += " using unix_socket"
        ret["changes"][name] = "Present"
    else:
        ret["comment"] = f"Failed to create user {name}@{host}"
        err = _mysql_error()
        if err is not None:
            ret["comment"] += f" ({err})"
        ret["result"] = False
    return ret


def absent(name: str, host: str = "localhost", **connection_args: Any) -> dict[str, Any]:
    """Ensure ``name@host`` does not exist."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    if _salt("mysql.user_exists")(name, host, **connection_args):
        if _testing():
            ret["result"] = None
            ret["comment"] = f"User {name}@{host} is set to be removed"
            return ret
        if _salt("mysql.user_remove")(name, host, **connection_args):
            ret["comment"] = f"User {name}@{host} has been removed"
            ret["changes"][name] = "Absent"
            return ret
    err = _mysql_error()
    if err is not None:
        ret.update(comment=err, result=False)
        return ret
    ret["comment"] = f"User {name}@{host} is not present, so it cannot be removed"
    return ret
