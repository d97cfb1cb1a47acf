"""The ``mysql_grants`` state module: MySQL/MariaDB privileges granted or revoked.

Works through the ``mysql`` execution module (the ``mariadb``/``mysql``
client); every other keyword argument is a connection argument (else the
``mysql.*`` config keys). Arguments, comments and changes are Salt 3007's:
``grant`` (``select,insert``, ``all privileges``), ``database``
(``db.*``, ``db.table``, ``*.*``), ``user``, ``host``, ``grant_option``,
``escape`` (quote the database name, ``_`` included), ``revoke_first``,
``ssl_option``. Comments: ``Grant g on d to u@h has been added`` (``{id:
Present}``), ``... is already present``, ``MySQL grant id is set to be
created`` in test mode, ``Failed to execute: "GRANT g ON d TO u@h"`` (an
unknown privilege, a missing user); ``absent``: ``Grant g on d for u@h has
been revoked`` (``{id: Absent}``), ``Grant g on d to u@h is not present, so
it cannot be revoked``. A server error fails the state with its text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._db_state_args import _mysql_error
from ._access import _salt, _testing

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


def __virtual__() -> Any:
    if "mysql.grant_exists" in __salt__:
        return True
    return (False, "mysql module could not be loaded")


def present(
    name: str,
    grant: Any = None,
    database: Any = None,
    user: Any = None,
    host: str = "localhost",
    grant_option: bool = False,
    escape: bool = True,
    revoke_first: bool = False,
    ssl_option: Any = False,
    **connection_args: Any,
) -> dict[str, Any]:
    """Ensure ``user@host`` holds ``grant`` on ``database``."""
    ret: dict[str, Any] = {
        "name": name,
        "changes": {},
        "result": True,
        "comment": f"Grant {grant} on {database} to {user}@{host} is already present",
    }
    if _salt("mysql.grant_exists")(grant, database, user, host, grant_option, escape, **connection_args):
        return ret
    err = _mysql_error()
    if err is not None:
        ret.update(comment=err, result=False)
        return ret
    if revoke_first and not _testing():
        dbname, _, table = str(database).rpartition(".")
        quoted = _salt("mysql.quote_identifier")(dbname, table == "*")
        for line in _salt("mysql.user_grants")(user, host, **connection_args) or []:
            tokens = _salt("mysql.tokenize_grant")(line)
            if tokens["database"] == quoted:
                _salt("mysql.grant_revoke")(
                    grant=",".join(tokens["grant"]).rstrip(","),
                    database=database,
                    user=user,
                    host=host,
                    grant_option=grant_option,
                    escape=escape,
                    **connection_args,
                )
    if _testing():
        ret["result"] = None
        ret["comment"] = f"MySQL grant {name} is set to be created"
        return ret
    if _salt("mysql.grant_add")(grant, database, user, host, grant_option, escape, ssl_option, **connection_args):
        ret["comment"] = f"Grant {grant} on {database} to {user}@{host} has been added"
        ret["changes"][name] = "Present"
    else:
        ret["comment"] = f'Failed to execute: "GRANT {grant} ON {database} TO {user}@{host}"'
        err = _mysql_error()
        if err is not None:
            ret["comment"] += f" ({err})"
        ret["result"] = False
    return ret


def absent(
    name: str,
    grant: Any = None,
    database: Any = None,
    user: Any = None,
    host: str = "localhost",
    grant_option: bool = False,
    escape: bool = True,
    **connection_args: Any,
) -> dict[str, Any]:
    """Ensure ``user@host`` does not hold ``grant`` on ``database``."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    if _salt("mysql.grant_exists")(grant, database, user, host, grant_option, escape, **connection_args):
        if _testing():
            ret["result"] = None
            ret["comment"] = f"MySQL grant {name} is set to be revoked"
            return ret
        if _salt("mysql.grant_revoke")(grant, database, user, host, grant_option, **connection_args):
            ret["comment"] = f"Grant {grant} on {database} for {user}@{host} has been revoked"
            ret["changes"][name] = "Absent"
            return ret
        err = _mysql_error()
        if err is not None:
            ret.update(comment=f"Unable to revoke grant {grant} on {database} for {user}@{host} ({err})", result=False)
            return ret
    else:
        err = _mysql_error()
        if err is not None:
            ret.update(
                comment=f"Unable to determine if grant {grant} on {database} for {user}@{host} exists ({err})",
                result=False,
            )
            return ret
    ret["comment"] = f"Grant {grant} on {database} to {user}@{host} is not present, so it cannot be revoked"
    return ret
