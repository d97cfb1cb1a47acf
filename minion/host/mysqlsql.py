"""MySQL/MariaDB text, pure: quoting, client option files, the client's XML output and
errors, and GRANT statements as Salt 3007's ``mysql`` module reads and writes them.

Used by the ``mysql`` execution module (``minion/host/modules/mysql.py``), which
runs the SQL through the ``mariadb``/``mysql`` client. Nothing here touches
a server, a file or a process: data in, data out.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from briny.common.exceptions import GrantError as GrantError  # re-exported: mysqlsql.GrantError
from briny.common.truth import is_true

# The privileges a GRANT may name (Salt 3007's list; "ALL" means ALL PRIVILEGES).
GRANTS = frozenset(
    [
        "ALL PRIVILEGES",
        "ALTER",
        "ALTER ROUTINE",
        "BACKUP_ADMIN",
        "BINLOG_ADMIN",
        "CONNECTION_ADMIN",
        "CREATE",
        "CREATE ROLE",
        "CREATE ROUTINE",
        "CREATE TABLESPACE",
        "CREATE TEMPORARY TABLES",
        "CREATE USER",
        "CREATE VIEW",
        "DELETE",
        "DROP",
        "DROP ROLE",
        "ENCRYPTION_KEY_ADMIN",
        "EVENT",
        "EXECUTE",
        "FILE",
        "GRANT OPTION",
        "GROUP_REPLICATION_ADMIN",
        "INDEX",
        "INSERT",
        "LOCK TABLES",
        "PERSIST_RO_VARIABLES_ADMIN",
        "PROCESS",
        "REFERENCES",
        "RELOAD",
        "REPLICATION CLIENT",
        "REPLICATION SLAVE",
        "REPLICATION_SLAVE_ADMIN",
        "RESOURCE_GROUP_ADMIN",
        "RESOURCE_GROUP_USER",
        "ROLE_ADMIN",
        "SELECT",
        "SET_USER_ID",
        "SHOW DATABASES",
        "SHOW VIEW",
        "SHUTDOWN",
        "SLAVE MONITOR",
        "SUPER",
        "SYSTEM_VARIABLES_ADMIN",
        "TRIGGER",
        "UPDATE",
        "USAGE",
        "XA_RECOVER_ADMIN",
        "BINLOG MONITOR",
        "BINLOG ADMIN",
        "BINLOG REPLAY",
        "CONNECTION ADMIN",
        "FEDERATED ADMIN",
        "READ_ONLY ADMIN",
        "REPLICATION MASTER ADMIN",
        "REPLICATION SLAVE ADMIN",
        "SET USER",
        "DELETE HISTORY",
        "REPLICA MONITOR",
        "REPLICATION REPLICA",
    ]
)
SSL_PARAMETERIZED = ("CIPHER", "ISSUER", "SUBJECT")
SSL_OPTIONS = SSL_PARAMETERIZED + ("SSL", "X509")

_NIL = "{http://www.w3.org/2001/XMLSchema-instance}nil"
_ERROR = re.compile(r"^ERROR (\d+)(?: \(([0-9A-Z]+)\))?(?: at line \d+)?: (.*)$", re.M)


def quote_identifier(identifier: Any, for_grants: bool = False) -> str:
    """```name``` with backticks doubled (Salt's rule: ``%`` doubled too, and ``_`` escaped in a GRANT's database)."""
    text = str(identifier).replace("`", "``")
    if for_grants:
        text = text.replace("_", r"\_")
    return "`" + text.replace("%", "%%") + "`"


def ident(identifier: Any) -> str:
    """```name``` for a statement sent as it is (backticks doubled, nothing else)."""
    return "`" + str(identifier).replace("`", "``") + "`"


def literal(value: Any) -> str:
    """A quoted string literal, with backslashes and quotes escaped."""
    text = str(value).replace("\\", "\\\\").replace("'", "\\'").replace("\0", "\\0")
    return "'" + text.replace("\n", "\\n").replace("\r", "\\r").replace("\x1a", "\\Z") + "'"


def account(user: Any, host: Any) -> str:
    return f"{literal(user)}@{literal(host)}"


def option_file(args: dict[str, Any], include: str | None = None) -> str:
    """A client option file (``[client]`` group) holding the connection; ``include`` a file read first."""
    lines = [f"!include {include}"] if include else []
    lines.append("[client]")
    for key, val in args.items():
        if val in (None, ""):
            continue
        text = str(val)
        if any(c in text for c in "\n\r"):
            raise ValueError(f"the connection argument {key} holds a line break")
        if key == "password":
            text = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
        lines.append(f"{key}={text}")
    return "\n".join(lines) + "\n"


def parse_error(stderr: str) -> str:
    """The client's error as Salt words a driver's: ``MySQL Error 1045: Access denied ...``."""
    m = _ERROR.search(stderr or "")
    if m:
        return f"MySQL Error {m.group(1)}: {m.group(3).strip()}"
    text = (stderr or "").strip().splitlines()
    return f"MySQL Error: {text[-1] if text else 'the client failed without a message'}"


def parse_xml(out: str) -> list[tuple[list[str], list[list[str | None]]]]:
    """The client's ``--xml`` output: for each result set, (column names, rows); NULL as None."""
    sets = []
    for doc in re.split(r"<\?xml version=\"1\.0\"\?>", out or ""):
        if not doc.strip():
            continue
        root = ET.fromstring(doc.strip())  # noqa: S314 - the local mysql client's --xml output, no DTD
        columns: list[str] = []
        rows: list[list[str | None]] = []
        for row in root.iter("row"):
            fields = list(row.iter("field"))
            if not columns:
                columns = [f.get("name", "") for f in fields]
            rows.append([None if f.get(_NIL) == "true" else (f.text or "") for f in fields])
        sets.append((columns, rows))
    return sets


# ---------------------------------------------------------------- grants


def grant_split(grant: str) -> list[tuple[str, str]]:
    return re.findall(r"([\w\s]+)(\([^)(]*\))?\s*,?", grant)


def grant_normalize(grant: str) -> str:
    """``ALL`` as ``ALL PRIVILEGES``; every privilege must be known (GrantError)."""
    if grant.strip().upper() == "ALL":
        grant = "ALL PRIVILEGES"
    for name, _cols in grant_split(grant):
        if name.strip().upper() not in GRANTS:
            raise GrantError(f"Invalid grant : '{name}'")
    return grant


def ssl_clause(ssl_option: list[dict[str, Any]]) -> str:
    parts = []
    for opt in ssl_option:
        key = next(iter(opt))
        name = str(key).strip().upper()
        if name not in SSL_OPTIONS:
            raise GrantError(f"Invalid SSL option : '{key}'")
        if name in SSL_PARAMETERIZED:
            parts.append(f"{name} '{str(opt[key]).replace(chr(39), '')}'")
        elif opt[key]:
            parts.append(name)
    return " REQUIRE " + " AND ".join(parts)


def grant_target(database: str, escape: bool = True) -> str:
    """``db.table`` as a GRANT names it (``*`` kept, names quoted when ``escape``)."""
    dbname, _, table = str(database).rpartition(".")
    if escape:
        if dbname != "*":
            dbname = quote_identifier(dbname, for_grants=table == "*")
        if table != "*":
            table = quote_identifier(table)
    return f"{dbname}.{table}".replace("%%", "%")


def grant_statement(
    grant: str,
    database: str,
    user: str,
    host: str = "localhost",
    grant_option: Any = False,
    escape: bool = True,
    ssl_option: Any = False,
) -> str:
    """The GRANT Salt's ``grant_add`` runs (GrantError for an unknown privilege)."""
    grant = grant_normalize(re.sub(r"\s*,\s*", ", ", grant).upper())
    sql = f"GRANT {grant} ON {grant_target(database, escape)} TO {account(user, host)}"
    if ssl_option and isinstance(ssl_option, list):
        sql += ssl_clause(ssl_option)
    if is_true(grant_option):
        sql += " WITH GRANT OPTION"
    return sql


def revoke_statement(grant: str, database: str, user: str, host: str = "localhost", grant_option: Any = False) -> str:
    grant = grant_normalize(grant)
    if is_true(grant_option):
        grant += ", GRANT OPTION"
    return f"REVOKE {grant} ON {grant_target(database, True)} FROM {account(user, host)}"


def _split_top(text: str) -> list[str]:
    """Split on commas outside parentheses and quotes."""
    out, cur, depth, quote = [], [], 0, ""
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
        elif ch in "`'\"":
            quote = ch
            cur.append(ch)
        elif ch == "(":
            depth += 1
            cur.append(ch)
        elif ch == ")":
            depth -= 1
            cur.append(ch)
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


_GRANT_RE = re.compile(r"^\s*GRANT\s+(?P<privs>.*?)\s+ON\s+(?P<on>(?:`(?:[^`]|``)*`|[^\s`])+)\s+TO\s+(?P<to>.*)$", re.S)
_ACCOUNT_RE = re.compile(r"^((?:`(?:[^`]|``)*`|'(?:[^']|'')*'|[^@\s]+))@((?:`(?:[^`]|``)*`|'(?:[^']|'')*'|[^\s;]+))")


def tokenize_grant(grant: str) -> dict[str, Any]:
    """``{user, host, grant: [privileges], database}`` of one GRANT line (SHOW GRANTS' or ours).

    Column privileges (``SELECT (a, b)``) become ``SELECT.a``, ``SELECT.b``;
    names keep their quotes, as Salt's tokenizer leaves them.
    """
    m = _GRANT_RE.match(grant)
    if not m:
        return {"user": "", "host": "", "grant": [], "database": ""}
    privs: list[str] = []
    for part in _split_top(m.group("privs")):
        name, paren, cols = part.partition("(")
        name = " ".join(name.split())
        if paren:
            privs += [f"{name}.{c.strip()}" for c in cols.rstrip(")").split(",") if c.strip()]
        else:
            privs.append(name)
    user = host = ""
    acc = _ACCOUNT_RE.match(m.group("to").strip())
    if acc:
        user, host = acc.group(1).strip("'"), acc.group(2).strip("'")
    return {"user": user, "host": host, "grant": privs, "database": m.group("on")}


def strip_quotes(text: str) -> str:
    return text.replace('"', "").replace("\\", "").replace("`", "")


def resolve_aliases(grants: list[str], server_version: str) -> list[str]:
    """MariaDB's newer names for old privileges (10.5.1 REPLICATION SLAVE, 10.5.2 BINLOG MONITOR, ...)."""
    if "MariaDB" not in server_version:
        return grants
    ver = version_tuple(server_version)
    out = []
    for grant in grants:
        if grant == "REPLICATION REPLICA" and ver >= (10, 5, 1):
            out.append("REPLICATION SLAVE")
        elif grant == "REPLICATION CLIENT" and ver >= (10, 5, 2):
            out.append("BINLOG MONITOR")
        elif grant == "REPLICA MONITOR" and ver >= (10, 5, 9):
            out.append("SLAVE MONITOR")
        else:
            out.append(grant)
    return out


def version_tuple(version: str) -> tuple[int, ...]:
    m = re.match(r"(\d+(?:\.\d+)*)", str(version or ""))
    return tuple(int(p) for p in m.group(1).split(".")) if m else ()
