"""briny.minion.host.mysqlsql: quoting, option files, the client's output and errors, GRANT text."""

from __future__ import annotations

import pytest

from briny.minion.host import mysqlsql


def test_quoting():
    assert mysqlsql.quote_identifier("my_db%") == "`my_db%%`"
    assert mysqlsql.quote_identifier("my_db", for_grants=True) == "`my\\_db`"
    assert mysqlsql.ident("a`b") == "`a``b`"
    assert mysqlsql.literal("it's \\ \n") == "'it\\'s \\\\ \\n'"
    assert mysqlsql.account("u", "%") == "'u'@'%'"


def test_option_file_quotes_the_password_and_refuses_line_breaks():
    text = mysqlsql.option_file({"host": "h", "password": 'p"w\\', "port": None}, include="/etc/x.cnf")
    assert text == '!include /etc/x.cnf\n[client]\nhost=h\npassword="p\\"w\\\\"\n'
    with pytest.raises(ValueError, match="line break"):
        mysqlsql.option_file({"user": "a\nb"})


def test_errors_in_salts_words():
    err = "ERROR 1045 (28000): Access denied for user 'root'@'localhost' (using password: YES)"
    assert (
        mysqlsql.parse_error(err) == "MySQL Error 1045: Access denied for user 'root'@'localhost' (using password: YES)"
    )
    assert (
        mysqlsql.parse_error("ERROR 1064 (42000) at line 1: You have an error") == "MySQL Error 1064: You have an error"
    )
    assert mysqlsql.parse_error("mariadb: unknown option") == "MySQL Error: mariadb: unknown option"


def test_xml_result_sets_keep_nulls_and_tabs():
    out = (
        '<?xml version="1.0"?>\n<resultset statement="x" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
        '<row><field name="a" xsi:nil="true" /><field name="b">x\ty</field><field name="c"></field></row>\n'
        '</resultset>\n<?xml version="1.0"?>\n<resultset statement="y" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n</resultset>\n'
    )
    assert mysqlsql.parse_xml(out) == [(["a", "b", "c"], [[None, "x\ty", ""]]), ([], [])]
    assert mysqlsql.parse_xml("") == []


def test_grant_statements_like_salt():
    assert mysqlsql.grant_statement("select,insert", "my_db.*", "u", "%", True) == (
        "GRANT SELECT, INSERT ON `my\\_db`.* TO 'u'@'%' WITH GRANT OPTION"
    )
    assert mysqlsql.grant_statement("all", "db.t", "u") == "GRANT ALL PRIVILEGES ON `db`.`t` TO 'u'@'localhost'"
    assert mysqlsql.grant_statement("select", "*.*", "u", escape=False) == "GRANT SELECT ON *.* TO 'u'@'localhost'"
    ssl = mysqlsql.grant_statement("usage", "*.*", "u", ssl_option=[{"SSL": True}, {"CIPHER": "a'b"}])
    assert ssl.endswith(" REQUIRE SSL AND CIPHER 'ab'")
    with pytest.raises(mysqlsql.GrantError, match="Invalid grant : 'SELEKT'"):
        mysqlsql.grant_statement("selekt", "db.*", "u")
    assert mysqlsql.revoke_statement("insert", "my_db.*", "u", "h", True) == (
        "REVOKE insert, GRANT OPTION ON `my\\_db`.* FROM 'u'@'h'"
    )


def test_tokenize_show_grants_lines():
    tok = mysqlsql.tokenize_grant(
        "GRANT SELECT, INSERT (a, b), REPLICATION CLIENT ON `my\\_db`.* TO `u`@`%` WITH GRANT OPTION"
    )
    assert tok == {
        "user": "`u`",
        "host": "`%`",
        "grant": ["SELECT", "INSERT.a", "INSERT.b", "REPLICATION CLIENT"],
        "database": "`my\\_db`.*",
    }
    assert mysqlsql.strip_quotes(tok["database"]) == "my_db.*"
    assert mysqlsql.tokenize_grant("nonsense") == {"user": "", "host": "", "grant": [], "database": ""}


def test_mariadb_aliases_and_versions():
    assert mysqlsql.resolve_aliases(["REPLICATION CLIENT"], "10.11.19-MariaDB") == ["BINLOG MONITOR"]
    assert mysqlsql.resolve_aliases(["REPLICATION CLIENT"], "8.0.36") == ["REPLICATION CLIENT"]
    assert mysqlsql.version_tuple("10.11.19-MariaDB-0+deb12u1") == (10, 11, 19)
