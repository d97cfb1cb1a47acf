"""The cron execution module: Salt's crontab layout, read and written through a fake crontab."""

from __future__ import annotations

from typing import Any

import pytest

from briny.common.loader import minion_mods

TAG = "# Lines below here are managed by Salt, do not edit"


@pytest.fixture
def cron():
    """(loader, tables): ``crontab`` replaced by a dict of user -> text."""
    salt = minion_mods({"id": "t"})
    tables: dict[str, str] = {}
    calls: list[list[str]] = []

    def fake(args: list[str], stdin: str | None = None) -> dict[str, Any]:
        calls.append(args)
        user = args[2]
        if user == "ghost":
            return {"retcode": 1, "stdout": "", "stderr": "crontab:  user `ghost' unknown\n"}
        if args[-1] == "-l":
            if user not in tables:
                return {"retcode": 1, "stdout": "", "stderr": f"no crontab for {user}"}
            return {"retcode": 0, "stdout": tables[user], "stderr": ""}
        tables[user] = stdin or ""
        return {"retcode": 0, "stdout": "", "stderr": ""}

    salt["cron.list_tab"]  # load the module
    salt.module("cron")._cmd = fake
    return salt, tables


def test_set_job_new_present_updated(cron) -> None:
    salt, tables = cron
    assert salt["cron.set_job"]("u", 5, "*/2", "*", "*", "*", "/bin/echo hi", identifier="/bin/echo hi") == "new"
    assert tables["u"] == f"{TAG}\n# SALT_CRON_IDENTIFIER:/bin/echo hi\n5 */2 * * * /bin/echo hi\n"
    assert salt["cron.set_job"]("u", 5, "*/2", "*", "*", "*", "/bin/echo hi", identifier="/bin/echo hi") == "present"
    assert salt["cron.set_job"]("u", 6, "*/2", "*", "*", "*", "/bin/echo hi", identifier="/bin/echo hi") == "updated"
    assert "6 */2 * * * /bin/echo hi" in tables["u"] and "5 */2" not in tables["u"]


def test_layout_keeps_foreign_lines_and_orders_sections(cron) -> None:
    salt, tables = cron
    tables["u"] = "# mine\nSHELL=/bin/sh\n0 0 * * * /bin/mine\n"
    assert salt["cron.set_special"]("u", "@reboot", "/bin/boot", comment="c", identifier="b") == "new"
    assert salt["cron.set_env"]("u", "MAILTO", "x@y") == "new"
    assert salt["cron.set_job"]("u", 1, 2, 3, 4, 5, "/bin/j", commented=True, identifier="j") == "new"
    assert tables["u"] == (
        "# mine\nSHELL=/bin/sh\n0 0 * * * /bin/mine\n" + TAG + "\nMAILTO=x@y\n"
        "# SALT_CRON_IDENTIFIER:j\n#DISABLED#1 2 3 4 5 /bin/j\n"
        "# c SALT_CRON_IDENTIFIER:b\n@reboot /bin/boot\n"
    )
    tab = salt["cron.list_tab"]("u")
    assert tab["special"] == [
        {"spec": "@reboot", "cmd": "/bin/boot", "identifier": "b", "comment": "c", "commented": False}
    ]
    assert tab["crons"][0]["commented"] is True and tab["env"] == [{"name": "MAILTO", "value": "x@y"}]
    assert salt["cron.rm_env"]("u", "MAILTO") == "removed" and salt["cron.rm_env"]("u", "MAILTO") == "absent"
    assert salt["cron.rm_special"]("u", "/bin/boot", identifier="b") == "removed"
    assert salt["cron.rm_job"]("u", "/bin/j", identifier="j") == "removed"
    assert salt["cron.rm_job"]("u", "/bin/j", identifier="j") == "absent"


def test_legacy_entry_without_identifier_gets_one(cron) -> None:
    salt, tables = cron
    tables["u"] = f"{TAG}\n5 * * * * /bin/old\n"
    assert salt["cron.set_job"]("u", 5, "*", "*", "*", "*", "/bin/old", identifier="/bin/old") == "updated"
    assert tables["u"] == f"{TAG}\n# SALT_CRON_IDENTIFIER:/bin/old\n5 * * * * /bin/old\n"


def test_random_is_picked_once_and_kept(cron) -> None:
    salt, tables = cron
    assert salt["cron.set_job"]("u", "random", "*", "*", "*", "*", "/bin/r", identifier="r") == "new"
    minute = salt["cron.list_tab"]("u")["crons"][0]["minute"]
    assert minute.isdigit() and 0 <= int(minute) <= 59
    assert salt["cron.set_job"]("u", "random", "*", "*", "*", "*", "/bin/r", identifier="r") == "present"


def test_unknown_user_reports_crontab_error(cron) -> None:
    salt, _ = cron
    assert salt["cron.set_job"]("ghost", "*", "*", "*", "*", "*", "/bin/x") == "crontab:  user `ghost' unknown"
    assert salt["cron.raw_cron"]("ghost") == ""


def test_env_without_value_is_stable(cron) -> None:
    salt, tables = cron
    assert salt["cron.set_env"]("u", "EMPTY") == "new"
    assert 'EMPTY=""' in tables["u"]
    assert salt["cron.set_env"]("u", "EMPTY") == "present"
