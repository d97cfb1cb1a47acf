"""The ``postgres_privileges`` state module: privileges on PostgreSQL objects granted or revoked.

Works through the ``postgres`` execution module (``psql``). Arguments,
comments and changes are Salt 3007's. ``name`` is the role; ``object_name``
and ``object_type`` (table, sequence, schema, tablespace, language,
database, group, function) the object; ``privileges`` a list (``ALL`` means
every privilege of that type; none for a group, whose "privilege" is
membership); ``grant_option`` (for a group: the admin option); ``prepend``
the schema of a table, sequence or function (``public``); ``object_name:
ALL`` with a table or sequence means all of them in that schema.
Comments: ``The requested privilege(s) are already set``, ``The
privilege(s): SELECT,INSERT have been granted to r`` (``{r: Present}``),
``... are set to be granted to r`` in test mode, ``Failed to grant
privilege(s): ...``; absent: ``... have been revoked from r`` (``{r:
Absent}``), ``The requested privilege(s) are not set so cannot be
revoked``. An unknown privilege or object type fails the state with the
words of Salt's exception, ``Invalid privilege(s): ... provided for object
table`` (Salt shows the whole traceback). Connection: user
(runas), maintenance_db (the object's database), db_user, db_password,
db_host, db_port.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from briny.common.exceptions import SaltInvocationError


from ._db_state_args import _pg_args
from ._access import _salt, _testing

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


def __virtual__() -> Any:
    if "postgres.privileges_grant" not in __salt__:
        return (False, "Unable to load postgres module.  Make sure `postgres.bins_dir` is set.")
    return True


def _apply(name: str, object_name: str, object_type: str, privileges: Any, grant: bool, kwargs: dict) -> dict:
    ret: dict[str, Any] = {
        "name": name,
        "changes": {},
        "result": True,
        "comment": "The requested privilege(s) are already set"
        if grant
        else "The requested privilege(s) are not set so cannot be revoked",
    }
    if isinstance(privileges, (list, tuple)):
        privileges = ",".join(str(p) for p in privileges) if privileges else None
    kwargs["privileges"] = privileges or None
    try:
        held = _salt("postgres.has_privileges")(name, object_name, object_type, **kwargs)
    except SaltInvocationError as exc:  # an unknown privilege or object type: Salt shows a traceback
        ret.update(result=False, comment=str(exc))
        return ret
    if held == grant:
        return ret
    what = object_name if object_type == "group" else privileges
    if grant:
        verbs = ("are set to be granted to", "have been granted to", "Failed to grant privilege(s): {} to {}")
    else:
        verbs = ("are set to be revoked from", "have been revoked from", "Failed to revoke privilege(s): {} from {}")
    if _testing():
        ret["result"] = None
        ret["comment"] = f"The privilege(s): {what} {verbs[0]} {name}"
        return ret
    fun = "postgres.privileges_grant" if grant else "postgres.privileges_revoke"
    if _salt(fun)(name, object_name, object_type, **kwargs):
        ret["comment"] = f"The privilege(s): {what} {verbs[1]} {name}"
        ret["changes"][name] = "Present" if grant else "Absent"
    else:
        ret["comment"] = verbs[2].format(what, name)
        ret["result"] = False
    return ret


def present(
    name: str,
    object_name: str,
    object_type: str,
    privileges: Any = None,
    grant_option: Any = None,
    prepend: str = "public",
    **kwargs: Any,
) -> dict[str, Any]:
    """Ensure role ``name`` holds ``privileges`` on the object (or is a member of the group)."""
    db_args, bad = _pg_args(name, "postgres_privileges.present", kwargs)
    if bad:
        return bad
    args = dict(db_args)
    args.update(grant_option=grant_option, prepend=prepend)
    return _apply(name, object_name, object_type, privileges, True, args)


def absent(
    name: str,
    object_name: str,
    object_type: str,
    privileges: Any = None,
    prepend: str = "public",
    **kwargs: Any,
) -> dict[str, Any]:
    """Ensure role ``name`` does not hold ``privileges`` on the object (or is not in the group)."""
    db_args, bad = _pg_args(name, "postgres_privileges.absent", kwargs)
    if bad:
        return bad
    args = dict(db_args)
    args["prepend"] = prepend
    return _apply(name, object_name, object_type, privileges, False, args)
