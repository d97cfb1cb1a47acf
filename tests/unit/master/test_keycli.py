"""briny-key (master/keycli.py): salt-key's texts, prompts and exit codes.

The expected texts were observed with salt-key 3007.17 on the same key set.
"""

from __future__ import annotations

import io
import json

import pytest

from briny.common import crypto
from briny.master import keycli
from briny.master.keys.store import KeyStore


@pytest.fixture
def keyset(master_opts, pubkeys):
    """Accepted m1 m2, pending p1 p2, rejected r1, denied d1 and m1 (a changed key)."""
    store = KeyStore(master_opts, fire_events=False)
    for i, name in enumerate(["m1", "m2"]):
        store.authorize(name, pubkeys[i], auto_accept=True)
    store.authorize("p1", pubkeys[2])
    store.authorize("p2", pubkeys[3])
    store.authorize("r1", pubkeys[4])
    store.reject("r1")
    store.authorize("d1", pubkeys[0])
    store.authorize("d1", pubkeys[1])  # a second key for pending d1: denied
    store.delete({"minions_pre": ["d1"]})
    store.authorize("m1", pubkeys[4])  # changed key for accepted m1: denied
    return store


def run(master_dir, *args, stdin: str | None = None):
    out, err = io.StringIO(), io.StringIO()
    code = keycli.run(
        ["-c", str(master_dir), *args], out=out, err=err, stdin=io.StringIO(stdin if stdin is not None else "")
    )
    return code, out.getvalue(), err.getvalue()


LISTING = """Accepted Keys:
m1
m2
Denied Keys:
d1
m1
Unaccepted Keys:
p1
p2
Rejected Keys:
r1
"""


def test_list_all_text(master_dir, keyset):
    assert run(master_dir, "-L") == (0, LISTING, "")
    assert run(master_dir) == (0, LISTING, "")  # the default command
    assert run(master_dir, "-L", "-A")[1] == LISTING  # salt-key's precedence: list wins


def test_empty_store_lists_headings(master_dir):
    assert run(master_dir, "-L")[1] == "Accepted Keys:\nDenied Keys:\nUnaccepted Keys:\nRejected Keys:\n"


def test_list_json_and_other_outputters(master_dir, keyset):
    code, out, _ = run(master_dir, "-L", "--out", "json")
    assert code == 0
    assert out.startswith('{\n    "minions": [\n        "m1",')
    assert list(json.loads(out)) == ["minions", "minions_pre", "minions_rejected", "minions_denied"]
    assert json.loads(out)["minions_denied"] == ["d1", "m1"]
    assert run(master_dir, "-L", "--out", "txt")[1] == (
        "minions: ['m1', 'm2']\nminions_pre: ['p1', 'p2']\nminions_rejected: ['r1']\nminions_denied: ['d1', 'm1']\n"
    )
    assert run(master_dir, "-L", "--out", "yaml")[1].startswith("minions:\n- m1\n- m2\nminions_denied:\n")


@pytest.mark.parametrize(
    "arg,text",
    [
        ("acc", "Accepted Keys:\nm1\nm2\n"),
        ("pre", "Unaccepted Keys:\np1\np2\n"),
        ("un", "Unaccepted Keys:\np1\np2\n"),
        ("rej", "Rejected Keys:\nr1\n"),
        ("den", "Denied Keys:\nd1\nm1\n"),
        ("all", LISTING),
    ],
)
def test_list_status(master_dir, keyset, arg, text):
    assert run(master_dir, "-l", arg) == (0, text, "")


def test_list_bad_status_is_usage_error(master_dir, keyset):
    code, out, err = run(master_dir, "-l", "bogus")
    assert code == 64 and out == ""
    assert "'bogus' is not a valid argument to '--list'" in err


def test_unknown_option_exits_64(master_dir, capsys):
    with pytest.raises(SystemExit) as exc:
        keycli.run(["-c", str(master_dir), "--bogus"])
    assert exc.value.code == 64


def test_accept_with_yes(master_dir, keyset):
    code, out, err = run(master_dir, "-a", "p1", "-y")
    assert code == 0 and err == ""
    assert out == ("The following keys are going to be accepted:\nUnaccepted Keys:\np1\nKey for minion p1 accepted.\n")
    assert keyset.status("p1") == "accepted"


def test_accept_all(master_dir, keyset):
    code, out, _ = run(master_dir, "-A", "-y")
    assert out.endswith("Key for minion p1 accepted.\nKey for minion p2 accepted.\n")
    assert run(master_dir, "-A", "-y")[1] == "The key glob '*' does not match any unaccepted keys.\n"


def test_accept_json_preview(master_dir, keyset):
    out = run(master_dir, "-a", "p1", "-y", "--out", "json")[1]
    assert out == (
        'The following keys are going to be accepted:\n{\n    "minions_pre": [\n        "p1"\n'
        "    ]\n}\nKey for minion p1 accepted.\n"
    )


@pytest.mark.parametrize(
    "args,message",
    [
        (["-a", "nope"], "The key glob 'nope' does not match any unaccepted keys.\n"),
        (["-a", "m1"], "The key glob 'm1' does not match any unaccepted keys.\n"),
        (["-r", "m1"], "The key glob 'm1' does not match any unaccepted keys.\n"),
        (["-d", "nope"], "The key glob 'nope' does not match any unaccepted keys.\n"),
        (["-r", "r1", "--include-accepted"], "The key glob 'r1' does not match any unaccepted or accepted keys.\n"),
        (
            ["-a", "nope", "--include-rejected", "--include-denied"],
            "The key glob 'nope' does not match any unaccepted, rejected or denied keys.\n",
        ),
    ],
)
def test_no_match_messages(master_dir, keyset, args, message):
    assert run(master_dir, *args, "-y") == (0, message, "")


def test_reject_accepted_reports_each_folder_as_salt_does(master_dir, keyset):
    code, out, _ = run(master_dir, "-r", "m1", "--include-accepted", "-y")
    # m1 now has a rejected and a denied key: salt-key names it twice
    assert out == (
        "The following keys are going to be rejected:\nAccepted Keys:\nm1\n"
        "Key for minion m1 rejected.\nKey for minion m1 rejected.\n"
    )
    assert keyset.status("m1") == "rejected"


def test_include_rejected_and_denied(master_dir, keyset, pubkeys):
    assert run(master_dir, "-a", "r1", "--include-rejected", "-y")[1].endswith("Key for minion r1 accepted.\n")
    assert (
        run(master_dir, "-a", "d1", "--include-all", "-y")[1]
        == "The key glob 'd1' does not match any unaccepted or rejected keys.\n"
    )
    assert run(master_dir, "-a", "d1", "--include-denied", "-y")[1].endswith("Key for minion d1 accepted.\n")
    assert keyset.public_key("d1") == pubkeys[1]


def test_delete_shows_every_folder(master_dir, keyset):
    code, out, _ = run(master_dir, "-d", "m1", "-y")
    assert out == (
        "The following keys are going to be deleted:\nAccepted Keys:\nm1\nDenied Keys:\nm1\n"
        "Key for minion m1 deleted.\nKey for minion m1 deleted.\n"
    )
    assert keyset.status("m1") is None


def test_delete_all(master_dir, keyset):
    code, out, _ = run(master_dir, "-D", "-y")
    assert code == 0 and out.count("deleted.") == 7
    assert keyset.list_keys() == {"minions": [], "minions_pre": [], "minions_rejected": [], "minions_denied": []}


@pytest.mark.parametrize(
    "answer,done",
    [("y\n", True), ("Y\n", True), ("yes\n", True), ("\n", True), ("n\n", False), ("no\n", False), ("x\n", False)],
)
def test_prompt_accept_defaults_to_yes(master_dir, keyset, answer, done):
    code, out, err = run(master_dir, "-a", "p1", stdin=answer)
    assert code == 0 and err == ""
    assert "Proceed? [n/Y] " in out
    assert ("Key for minion p1 accepted." in out) is done
    assert (keyset.status("p1") == "accepted") is done


@pytest.mark.parametrize("answer,done", [("y\n", True), ("\n", False), ("n\n", False)])
def test_prompt_delete_defaults_to_no(master_dir, keyset, answer, done):
    code, out, _ = run(master_dir, "-d", "p1", stdin=answer)
    assert code == 0 and "Proceed? [N/y] " in out
    assert (keyset.status("p1") is None) is done


def test_eof_means_no(master_dir, keyset):
    code, out, err = run(master_dir, "-R", stdin="")
    assert code == 1
    assert "nothing was changed" in err and "-y" in err
    assert keyset.list_keys()["minions_pre"] == ["p1", "p2"]


def test_finger(master_dir, keyset):
    keyset.ensure_master_keys()
    code, out, _ = run(master_dir, "-f", "m1")
    lines = out.splitlines()
    assert lines[0] == "Accepted Keys:" and lines[2] == "Denied Keys:"
    assert lines[1] == f"m1:  {keyset.fingerprint('m1')}"
    assert lines[3] == f"m1:  {keyset.fingerprint('m1', 'minions_denied')}"
    data = json.loads(run(master_dir, "-F", "--out", "json")[1])
    assert list(data) == ["minions", "minions_pre", "minions_rejected", "minions_denied", "local"]
    assert sorted(data["local"]) == ["master.pem", "master.pub"]
    assert run(master_dir, "-F")[1].startswith("Local Keys:\nmaster.pem:  ")
    assert run(master_dir, "-f", "nope") == (0, "", "")
    assert run(master_dir, "-f", "nope", "--out", "json") == (0, "{}\n", "")


def test_finger_master_as_salts_docs_write_it(master_dir, keyset):
    """`salt-key -F master` (Salt's documented way to read the master's fingerprint): salt-key
    ignores the word and prints every fingerprint, master.pub's under Local Keys."""
    keyset.ensure_master_keys()
    code, out, err = run(master_dir, "-F", "master")
    assert (code, err) == (0, "") and out == run(master_dir, "-F")[1]
    assert f"master.pub:  {crypto.fingerprint(keyset.master_public_pem())}" in out.splitlines()


def test_print_key(master_dir, keyset, pubkeys):
    out = run(master_dir, "-p", "m2")[1]
    assert out == "Accepted Keys:\nm2:  " + pubkeys[1].rstrip() + "\n"


def test_config_error_exits_2(tmp_path):
    code, _, err = run(tmp_path / "missing", "-L")
    assert code == 2 and "does not exist" in err


def test_main_key_entry_point(master_dir, keyset, monkeypatch, capsys):
    from briny.master import cli

    monkeypatch.setattr("sys.argv", ["briny-key", "-c", str(master_dir), "-l", "acc"])
    with pytest.raises(SystemExit) as exc:
        cli.main_key()
    assert exc.value.code == 0
    assert capsys.readouterr().out == "Accepted Keys:\nm1\nm2\n"
