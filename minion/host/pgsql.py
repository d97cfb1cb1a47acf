"""PostgreSQL text, pure: quoting, password verifiers, role options, ACLs and privileges.

Used by the ``postgres`` execution module (``minion/host/modules/postgres.py``),
which runs the SQL built here through ``psql``. Nothing here touches a
server, a file or a process: data in, data out.

- Identifiers are always double-quoted with embedded quotes doubled
  (:func:`ident`) and literals single-quoted with quotes doubled
  (:func:`literal`), so a name with a dash, a capital or a quote works and
  cannot inject SQL.
- Password verifiers are computed on the minion as Salt 3007 does
  (``encrypted``: ``None``/``True``/``"md5"`` -> md5, ``"scram-sha-256"``,
  ``False`` -> the clear text), so the server never sees the clear password.
- Privilege names, object types and their allowed privileges are Salt's.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import stringprep
import unicodedata
from dataclasses import dataclass
from typing import Any

from briny.common.exceptions import SaltInvocationError

DEFAULT_ENCRYPTION = "md5"

# ACL letters (aclitem text) -> privilege names; "*" marks a grant option.
ACL_LETTERS = {
    "a": "INSERT",
    "C": "CREATE",
    "D": "TRUNCATE",
    "c": "CONNECT",
    "t": "TRIGGER",
    "r": "SELECT",
    "U": "USAGE",
    "T": "TEMPORARY",
    "w": "UPDATE",
    "X": "EXECUTE",
    "x": "REFERENCES",
    "d": "DELETE",
    "m": "MAINTAIN",
}
# The privileges each object type takes, as ACL letters (what "ALL" means).
OBJECT_PRIVILEGES = {
    "table": "arwdDxtm",
    "tablespace": "C",
    "language": "U",
    "sequence": "rwU",
    "schema": "UC",
    "database": "CTc",
    "function": "X",
}
OBJECT_TYPES = frozenset(OBJECT_PRIVILEGES) | {"group"}


@dataclass(frozen=True)
class Conn:
    """Where and as whom ``psql`` connects (the execution module applies the config fallbacks)."""

    user: str | None
    host: str | None
    port: str | None
    db: str
    password: str | None
    runas: str | None


def ident(name: Any) -> str:
    """A quoted SQL identifier: ``"name"`` with embedded quotes doubled."""
    return '"' + str(name).replace('"', '""') + '"'


def literal(value: Any) -> str:
    """A quoted SQL string literal: ``'value'`` with embedded quotes doubled."""
    return "'" + str(value).replace("'", "''") + "'"


def qualified(schema: Any, name: Any) -> str:
    return f"{ident(schema)}.{ident(name)}"


# ---------------------------------------------------------------- passwords


def _saslprep(password: str) -> bytes:
    """RFC 4013 SASLprep, as PostgreSQL applies it; the raw UTF-8 bytes when it does not apply."""
    raw = password.encode("utf-8")
    mapped = "".join(" " if stringprep.in_table_c12(c) else c for c in password if not stringprep.in_table_b1(c))
    text = unicodedata.normalize("NFKC", mapped)
    prohibited = (
        stringprep.in_table_c12,
        stringprep.in_table_c21_c22,
        stringprep.in_table_c3,
        stringprep.in_table_c4,
        stringprep.in_table_c5,
        stringprep.in_table_c6,
        stringprep.in_table_c7,
        stringprep.in_table_c8,
        stringprep.in_table_c9,
        stringprep.in_table_a1,
    )
    if not text or any(check(c) for c in text for check in prohibited):
        return raw
    rand_al = [stringprep.in_table_d1(c) for c in text]
    if any(rand_al):
        if any(stringprep.in_table_d2(c) for c in text) or not (rand_al[0] and rand_al[-1]):
            return raw
    return text.encode("utf-8")


def md5_verifier(role: str, password: str) -> str:
    return "md5" + hashlib.md5(f"{password}{role}".encode()).hexdigest()  # noqa: S324 - PostgreSQL's format


def scram_verifier(password: str, salt: bytes | None = None, iterations: int = 4096) -> str:
    """A SCRAM-SHA-256 verifier as PostgreSQL stores it (RFC 7677)."""
    salt = secrets.token_bytes(16) if salt is None else salt
    salted = hashlib.pbkdf2_hmac("sha256", _saslprep(password), salt, iterations)
    stored = hashlib.sha256(hmac.new(salted, b"Client Key", "sha256").digest()).digest()
    server = hmac.new(salted, b"Server Key", "sha256").digest()
    b64 = base64.b64encode
    return f"SCRAM-SHA-256${iterations}:{b64(salt).decode()}${b64(stored).decode()}:{b64(server).decode()}"


def _method(encrypted: Any) -> Any:
    if encrypted is None or encrypted is True:
        return "md5"
    if encrypted not in (False, "md5", "scram-sha-256"):
        raise SaltInvocationError(f"Unknown password algorithm: {encrypted}")
    return encrypted


def encrypt_password(role: str, password: Any, encrypted: Any = DEFAULT_ENCRYPTION) -> str | None:
    """The verifier to store for ``password`` (a verifier given already is kept as it is)."""
    if password is None:
        return None
    text = str(password)
    method = _method(encrypted)
    if method == "scram-sha-256" and not text.startswith("SCRAM-SHA-256"):
        return scram_verifier(text)
    if method == "md5" and not text.startswith("md5"):
        return md5_verifier(role, text)
    return text


def password_matches(role: str, password: Any, verifier: Any, encrypted: Any) -> bool:
    """Whether the stored ``verifier`` already holds ``password`` (for ``encrypted``)."""
    password = str(password)
    try:
        method = _method(encrypted)
    except SaltInvocationError:
        return False
    if method == "md5":
        return bool(verifier == (password if password.startswith("md5") else md5_verifier(role, password)))
    if method == "scram-sha-256":
        if password.startswith("SCRAM-SHA-256"):
            return bool(verifier == password)
        m = re.match(r"^SCRAM-SHA-256\$(\d+):([^$]+?)\$", str(verifier or ""))
        if not m:
            return False
        return bool(verifier == scram_verifier(password, base64.b64decode(m.group(2)), int(m.group(1))))
    return bool(verifier == password)


# ---------------------------------------------------------------- roles


def role_options(
    role: str,
    typ: str = "role",
    encrypted: Any = None,
    login: Any = None,
    connlimit: Any = None,
    inherit: Any = None,
    createdb: Any = None,
    createroles: Any = None,
    superuser: Any = None,
    replication: Any = None,
    rolepassword: Any = None,
    valid_until: Any = None,
    current: dict[str, Any] | None = None,
) -> str:
    """The option list of ``CREATE ROLE``/``ALTER ROLE ... WITH`` as Salt 3007 writes it.

    ``typ`` "user" defaults to LOGIN INHERIT, "group" to NOLOGIN INHERIT; a
    flag given as None is left out; ``rolepassword`` False removes the
    password, True or "" leaves it alone; ``current`` (the role as it is)
    skips a SUPERUSER flag that already holds.
    """
    if inherit is None and typ in ("user", "group"):
        inherit = True
    if login is None and typ in ("user", "group"):
        login = typ == "user"
    if encrypted is None:
        encrypted = DEFAULT_ENCRYPTION
    parts: list[str] = []

    def flag(name: str, value: Any) -> None:
        if value is not None:
            parts.append(name if value else f"NO{name}")

    flag("INHERIT", inherit)
    flag("CREATEDB", createdb)
    flag("CREATEROLE", createroles)
    if not (current and bool(superuser) == bool(current.get("superuser"))):
        flag("SUPERUSER", superuser)
    flag("REPLICATION", replication)
    flag("LOGIN", login)
    if connlimit is not None:
        parts.append(f"CONNECTION LIMIT {int(connlimit) if str(connlimit).lstrip('-').isdigit() else -1}")
    if isinstance(rolepassword, str) and rolepassword:
        # the verifier is computed here; with encrypted=False the server hashes the clear text
        # (PostgreSQL 10 refuses UNENCRYPTED PASSWORD)
        parts.append(f"PASSWORD {literal(encrypt_password(role, rolepassword, encrypted))}")
    elif rolepassword is False:
        parts.append("PASSWORD NULL")
    if valid_until is not None:
        parts.append(f"VALID UNTIL {literal(valid_until)}" if valid_until else "VALID UNTIL 'infinity'")
    return " ".join(parts)


def group_list(groups: Any) -> list[str]:
    """``groups`` as Salt takes it: a comma-separated string or a list."""
    if not groups:
        return []
    if isinstance(groups, str):
        return [g.strip() for g in groups.split(",") if g.strip()]
    return [str(g) for g in groups]


def parse_array(text: str | None) -> list[str]:
    """A one-dimensional PostgreSQL array literal (``{a,"b c"}``) as a list of strings."""
    if not text or text in ("{}", "NULL"):
        return []
    body = text.strip()[1:-1]
    out: list[str] = []
    cur: list[str] = []
    quoted = escaped = False
    for ch in body:
        if escaped:
            cur.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"':
            quoted = not quoted
        elif ch == "," and not quoted:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


# ---------------------------------------------------------------- privileges


def parse_acl(acl: str | None) -> dict[str, dict[str, bool]]:
    """An ACL array (``{role=arw*/grantor,=c/owner}``) as ``{role: {PRIVILEGE: grant_option}}``.

    The empty role name is ``public``, as in Salt's ``privileges_list``.
    """
    ret: dict[str, dict[str, bool]] = {}
    for item in parse_array(acl):
        grantee_perms, _, _grantor = item.rpartition("/")
        if "=" not in grantee_perms:
            continue
        role, _, letters = grantee_perms.rpartition("=")
        privs: dict[str, bool] = {}
        last = None
        for ch in letters:
            if ch == "*" and last:
                privs[last] = True
            elif ch in ACL_LETTERS:
                last = ACL_LETTERS[ch]
                privs[last] = False
        ret[role or "public"] = privs
    return ret


def privilege_list(privileges: Any) -> tuple[str, list[str]]:
    """``privileges`` (a list or a comma-separated string) as (Salt's comma-joined text, upper-cased names)."""
    if isinstance(privileges, (list, tuple)):
        privileges = ",".join(str(p) for p in privileges)
    text = "" if privileges is None else str(privileges)
    return text, [p for p in re.split(r"\s?,\s?", text.upper())]


def check_privileges(object_type: str, names: list[str], text: str) -> None:
    """Salt's validation: the object type is known, the privileges fit it (none for a group)."""
    if object_type not in OBJECT_TYPES:
        raise SaltInvocationError(f"Invalid object_type: {object_type} provided")
    if object_type == "group":
        if text:
            raise SaltInvocationError("The privileges option should not be set for object_type group")
        return
    allowed = {ACL_LETTERS[ch] for ch in OBJECT_PRIVILEGES[object_type]} | {"ALL"}
    if not set(names) <= allowed:
        raise SaltInvocationError(f"Invalid privilege(s): {text} provided for object {object_type}")


def all_privileges(object_type: str, server_version_num: int = 0) -> list[str]:
    """What ALL means for the type; MAINTAIN only from PostgreSQL 17 on (``server_version_num`` 170000)."""
    letters = OBJECT_PRIVILEGES[object_type]
    if server_version_num and server_version_num < 170000:
        letters = letters.replace("m", "")
    return [ACL_LETTERS[ch] for ch in letters]


def on_clause(object_type: str, object_name: str, prepend: str) -> str:
    """``TABLE "s"."t"``, ``ALL TABLES IN SCHEMA "s"``, ``FUNCTION f(int)``, ``DATABASE "d"`` ..."""
    if object_type in ("table", "sequence"):
        if object_name.upper() == "ALL":
            return f"ALL {object_type.upper()}S IN SCHEMA {ident(prepend)}"
        return f"{object_type.upper()} {qualified(prepend, object_name)}"
    if object_type == "function":
        # a signature such as myfunc(integer): the name part quoted, the argument types as given
        name, paren, args = object_name.partition("(")
        return f"FUNCTION {qualified(prepend, name.strip())}{paren}{args}"
    return f"{object_type.upper()} {ident(object_name)}"


def grant_sql(role: str, object_name: str, object_type: str, names: list[str], grant_option: Any, prepend: str) -> str:
    if object_type == "group":
        sql = f"GRANT {ident(object_name)} TO {ident(role)}"
        return sql + (" WITH ADMIN OPTION" if grant_option else "")
    sql = f"GRANT {', '.join(names)} ON {on_clause(object_type, object_name, prepend)} TO {ident(role)}"
    return sql + (" WITH GRANT OPTION" if grant_option else "")


def revoke_sql(role: str, object_name: str, object_type: str, names: list[str], prepend: str) -> str:
    if object_type == "group":
        return f"REVOKE {ident(object_name)} FROM {ident(role)}"
    return f"REVOKE {', '.join(names)} ON {on_clause(object_type, object_name, prepend)} FROM {ident(role)}"
