"""briny.minion.host.pgsql: quoting, password verifiers, role options, ACLs and privilege statements."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from briny.common.exceptions import SaltInvocationError
from briny.minion.host import pgsql


def test_quoting_cannot_be_escaped():
    assert pgsql.ident('a"b') == '"a""b"'
    assert pgsql.literal("it's") == "'it''s'"
    assert pgsql.qualified("s", "My Table") == '"s"."My Table"'


def test_md5_verifier_is_postgres_format():
    assert pgsql.md5_verifier("bob", "pw") == "md5" + hashlib.md5(b"pwbob").hexdigest()
    assert pgsql.encrypt_password("bob", "pw") == pgsql.md5_verifier("bob", "pw")
    assert pgsql.encrypt_password("bob", "md5abc") == "md5abc"  # a verifier given stays as it is
    assert pgsql.encrypt_password("bob", "pw", False) == "pw"
    assert pgsql.encrypt_password("bob", None) is None


def test_scram_verifier_checks_against_rfc7677():
    salt = b"0123456789abcdef"
    ver = pgsql.scram_verifier("pencil", salt, 4096)
    head, keys = ver.rsplit("$", 1)
    assert head == "SCRAM-SHA-256$4096:" + base64.b64encode(salt).decode()
    salted = hashlib.pbkdf2_hmac("sha256", b"pencil", salt, 4096)
    stored = hashlib.sha256(hmac.new(salted, b"Client Key", "sha256").digest()).digest()
    assert keys.split(":")[0] == base64.b64encode(stored).decode()
    # matching reuses the stored salt and iterations
    assert pgsql.password_matches("bob", "pencil", ver, "scram-sha-256")
    assert not pgsql.password_matches("bob", "other", ver, "scram-sha-256")
    assert not pgsql.password_matches("bob", "pencil", "md5xyz", "scram-sha-256")


def test_saslprep_maps_spaces_and_keeps_unprepable_passwords():
    assert pgsql._saslprep("a\u00a0b") == b"a b"  # non-ASCII space -> space
    assert pgsql._saslprep("a\u00adb") == b"ab"  # soft hyphen: mapped to nothing
    assert pgsql._saslprep("a\x07b") == b"a\x07b"  # prohibited: the raw bytes, as PostgreSQL does


def test_unknown_algorithm():
    with pytest.raises(SaltInvocationError, match="Unknown password algorithm: sha1"):
        pgsql.encrypt_password("bob", "pw", "sha1")
    assert not pgsql.password_matches("bob", "pw", "x", "sha1")


def test_role_options_like_salt():
    opts = pgsql.role_options("u", "user", createdb=True, rolepassword="pw", valid_until="2030-01-01", connlimit=5)
    assert opts == (
        "INHERIT CREATEDB LOGIN CONNECTION LIMIT 5 PASSWORD 'md5"
        + hashlib.md5(b"pwu").hexdigest()
        + "' VALID UNTIL '2030-01-01'"
    )
    assert pgsql.role_options("g", "group") == "INHERIT NOLOGIN"
    assert pgsql.role_options("r", superuser=True, current={"superuser": True}) == ""
    assert pgsql.role_options("r", superuser=False, current={"superuser": True}) == "NOSUPERUSER"
    assert pgsql.role_options("r", rolepassword=False) == "PASSWORD NULL"


def test_arrays_and_acls():
    assert pgsql.parse_array('{a,"b c","d\\"e"}') == ["a", "b c", 'd"e']
    assert pgsql.parse_array(None) == []
    acl = pgsql.parse_acl('{=c/postgres,postgres=CTc/postgres,"my role"=r*w/postgres}')
    assert acl == {
        "public": {"CONNECT": False},
        "postgres": {"CREATE": False, "TEMPORARY": False, "CONNECT": False},
        "my role": {"SELECT": True, "UPDATE": False},
    }


def test_privilege_validation_is_salts():
    text, names = pgsql.privilege_list(["select", "Insert"])
    assert (text, names) == ("select,Insert", ["SELECT", "INSERT"])
    pgsql.check_privileges("table", names, text)
    with pytest.raises(SaltInvocationError, match=r"Invalid privilege\(s\): SELEKT provided for object table"):
        pgsql.check_privileges("table", ["SELEKT"], "SELEKT")
    with pytest.raises(SaltInvocationError, match="Invalid object_type: cluster provided"):
        pgsql.check_privileges("cluster", ["ALL"], "ALL")
    with pytest.raises(SaltInvocationError, match="should not be set for object_type group"):
        pgsql.check_privileges("group", ["SELECT"], "SELECT")
    assert "MAINTAIN" not in pgsql.all_privileges("table", 150000)
    assert "MAINTAIN" in pgsql.all_privileges("table", 170000)


def test_grant_and_revoke_statements():
    assert (
        pgsql.grant_sql("r", "t", "table", ["SELECT"], True, "s")
        == 'GRANT SELECT ON TABLE "s"."t" TO "r" WITH GRANT OPTION'
    )
    assert (
        pgsql.grant_sql("r", "ALL", "sequence", ["USAGE"], None, "s")
        == 'GRANT USAGE ON ALL SEQUENCES IN SCHEMA "s" TO "r"'
    )
    assert pgsql.grant_sql("r", "f(integer)", "function", ["EXECUTE"], None, "public") == (
        'GRANT EXECUTE ON FUNCTION "public"."f"(integer) TO "r"'
    )
    assert pgsql.grant_sql("r", "g", "group", [""], True, "public") == 'GRANT "g" TO "r" WITH ADMIN OPTION'
    assert pgsql.revoke_sql("r", "d", "database", ["CONNECT"], "public") == 'REVOKE CONNECT ON DATABASE "d" FROM "r"'
