"""cron states over a fake crontab (the module's crontab call replaced), results as Salt 3007's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from briny.common import loader

TAG = "# Lines below here are managed by Salt, do not edit"


@pytest.fixture
def world(tmp_path: Path):
    """make(test) -> states; ``tables`` holds each user's crontab text."""
    tables: dict[str, str] = {}

    def fake(args: list[str], stdin: str | None = None) -> dict[str, Any]:
        user = args[2]
        if user == "ghost":
            return {"retcode": 1, "stdout": "", "stderr": "crontab:  user `ghost' unknown\n"}
        if args[-1] == "-l":
            return {"retcode": 0 if user in tables else 1, "stdout": tables.get(user, ""), "stderr": ""}
        tables[user] = stdin or ""
        return {"retcode": 0, "stdout": "", "stderr": ""}

    def make(test: bool = False) -> Any:
        opts = {"test": test, "id": "t", "file_client": "local", "file_roots": {"base": [str(tmp_path)]}}
        salt = loader.minion_mods(opts)
        salt["cron.raw_cron"]
        salt.module("cron")._cmd = fake
        return loader.states(opts, salt)

    return make, tables


def test_present_cycle(world) -> None:
    make, tables = world
    dry = make(True)["cron.present"]("/bin/echo hi", user="u", minute=5)
    assert dry == {
        "changes": {},
        "comment": "Cron /bin/echo hi is set to be added",
        "name": "/bin/echo hi",
        "result": None,
    }
    st = make()
    ret = st["cron.present"]("/bin/echo hi", user="u", minute=5)
    assert (ret["result"], ret["changes"], ret["comment"]) == (
        True,
        {"u": "/bin/echo hi"},
        "Cron /bin/echo hi added to u's crontab",
    )
    assert tables["u"] == f"{TAG}\n# SALT_CRON_IDENTIFIER:/bin/echo hi\n5 * * * * /bin/echo hi\n"
    assert st["cron.present"]("/bin/echo hi", user="u", minute=5)["comment"] == "Cron /bin/echo hi already present"
    assert make(True)["cron.present"]("/bin/echo hi", user="u", minute=5)["result"] is True
    assert (
        make(True)["cron.present"]("/bin/echo hi", user="u", minute=6)["comment"]
        == "Cron /bin/echo hi is set to be updated"
    )
    ret = st["cron.present"]("/bin/echo hi", user="u", minute=6)
    assert (ret["comment"], ret["changes"]) == ("Cron /bin/echo hi updated", {"u": "/bin/echo hi"})
    assert make(True)["cron.absent"]("/bin/echo hi", user="u")["comment"] == "Cron /bin/echo hi is set to be removed"
    ret = st["cron.absent"]("/bin/echo hi", user="u")
    assert (ret["comment"], ret["changes"]) == ("Cron /bin/echo hi removed from u's crontab", {"u": "/bin/echo hi"})
    assert st["cron.absent"]("/bin/echo hi", user="u")["comment"] == "Cron /bin/echo hi already absent"
    assert make(True)["cron.absent"]("/bin/echo hi", user="u")["comment"] == "Cron /bin/echo hi is absent"


def test_special_identifier_env_and_unknown_user(world) -> None:
    make, tables = world
    st = make()
    st["cron.present"]("/bin/a", user="u", special="@reboot", identifier="job", comment="note")
    ret = st["cron.present"]("/bin/b", user="u", special="@daily", identifier="job")
    assert ret["comment"] == "Cron /bin/b updated"
    assert tables["u"] == f"{TAG}\n# note SALT_CRON_IDENTIFIER:job\n@daily /bin/b\n"
    assert st["cron.env_present"]("MAILTO", value="a@b", user="u")["comment"] == "Cron env MAILTO added to u's crontab"
    assert st["cron.env_present"]("MAILTO", value="a@b", user="u")["comment"] == "Cron env MAILTO already present"
    assert st["cron.env_present"]("MAILTO", value="c@d", user="u")["comment"] == "Cron env MAILTO updated"
    assert make(True)["cron.env_absent"]("MAILTO", user="u")["comment"] == "Cron env MAILTO is set to be removed"
    assert st["cron.env_absent"]("MAILTO", user="u")["changes"] == {"u": "MAILTO"}
    ret = st["cron.present"]("/bin/true", user="ghost")
    assert ret["result"] is False
    assert (
        ret["comment"] == "Cron /bin/true for user ghost failed to commit with error \ncrontab:  user `ghost' unknown"
    )


def test_file(world, tmp_path: Path) -> None:
    import os
    import pwd

    make, tables = world
    me = pwd.getpwuid(os.geteuid()).pw_name
    (tmp_path / "tab").write_text("0 1 * * * /bin/true\n")
    tables[me] = "5 * * * * /bin/old\n"
    dry = make(True)["cron.file"]("salt://tab", user=me)
    assert dry["result"] is None and dry["comment"].startswith(
        "The following values are set to be changed:\ndiff: --- \n+++ \n"
    )
    ret = make()["cron.file"]("salt://tab", user=me)
    assert ret["comment"] == f"Crontab for user {me} was updated"
    assert ret["changes"]["diff"] == "--- \n+++ \n@@ -1 +1 @@\n-5 * * * * /bin/old\n+0 1 * * * /bin/true\n"
    assert tables[me] == "0 1 * * * /bin/true\n"
    assert make()["cron.file"]("salt://tab", user=me)["comment"] == f"Crontab for user {me} is in the correct state"
    assert make()["cron.file"]("salt://nope", user=me)["result"] is False
    assert (
        make()["cron.file"]("salt://tab", user="nosuchuser-briny")["comment"]
        == "Could not identify group for user nosuchuser-briny"
    )
