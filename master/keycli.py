"""``briny-key``: list, accept, reject, delete and fingerprint minion keys.

Runs on the master host, as the operator, straight on the key store
(:mod:`briny.master.keys.store`) under the master config's ``pki_dir``; it does
not need the master daemon. Options, texts and exit codes are salt-key's
(Salt 3007), observed with the reference:

- with no command it lists all keys (``-L``); when several commands are
  given, the first in salt-key's order wins (``-l``, ``-L``, ``-p``, ``-P``,
  ``-a``, ``-A``, ``-r``, ``-R``, ``-d``, ``-D``, ``-f``, ``-F``);
- the listing is salt-key's ``key`` outputter without colour
  (``Accepted Keys:`` / ``Denied Keys:`` / ``Unaccepted Keys:`` /
  ``Rejected Keys:``, folders in name order); ``--out json|yaml|txt|nested``
  prints the data instead;
- accept/reject/delete first show what they will change ("The following
  keys are going to be accepted:"), ask ``Proceed? [n/Y]`` (``[N/y]`` for
  delete) unless ``-y``, and print ``Key for minion ID accepted.`` per key;
  a glob that matches nothing prints ``The key glob 'X' does not match any
  unaccepted keys.`` and exits 0;
- usage errors exit 64 (salt-key's ``EX_USAGE``); words that are not
  options are ignored, as salt-key ignores them (``briny-key -F master``,
  the form Salt's docs give for the master's fingerprint, prints every
  fingerprint, ``master.pub`` under ``Local Keys:``);
- fingerprints are Salt's (:func:`briny.common.crypto.fingerprint`, the
  config's ``hash_type``), the value a minion's ``master_finger`` takes.

Deliberate differences: when stdin gives no answer (EOF: ``</dev/null``, a
closed pipe) briny-key changes nothing, says so on stderr and exits 1
(salt-key prints ``Error: EOF when reading a line`` and exits 0); a piped
answer (``echo y | briny-key -a m1``) is read as salt-key reads it. Other
errors (an unreadable ``pki_dir``) exit 1 instead of salt-key's 0; a config
error exits 2 as in every briny command.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, TextIO

from briny.common import logsetup, saltonly, versions
from briny.common.cliargs import add_config_dir
from briny.common.config import load_master_config
from briny.common.exceptions import BrinyError, ConfigError
from briny.master.keys.store import ACC, DEN, LOCAL, PEND, REJ, KeyChange, KeyStore, Matches

log = logging.getLogger(__name__)

EX_USAGE = 64
HEADINGS = {
    PEND: "Unaccepted Keys:",
    ACC: "Accepted Keys:",
    DEN: "Denied Keys:",
    REJ: "Rejected Keys:",
    LOCAL: "Local Keys:",
}
# salt-key's order of precedence when several commands are given
COMMANDS = (
    "list",
    "list_all",
    "print",
    "print_all",
    "accept",
    "accept_all",
    "reject",
    "reject_all",
    "delete",
    "delete_all",
    "finger",
    "finger_all",
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EX_USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="briny-key", description="Manage the master's minion keys (salt-key).")
    add_config_dir(p, "master")
    versions.add_arguments(p)
    p.add_argument(
        "-l", "--list", dest="list", metavar="ARG", help="list keys of one status: acc, pre/un, rej, den, all"
    )
    p.add_argument("-L", "--list-all", dest="list_all", action="store_true", help="list all keys")
    p.add_argument("-p", "--print", dest="print", metavar="GLOB", help="print the matching public keys")
    p.add_argument("-P", "--print-all", dest="print_all", action="store_true", help="print all public keys")
    p.add_argument("-a", "--accept", dest="accept", metavar="GLOB", help="accept the matching pending keys")
    p.add_argument("-A", "--accept-all", dest="accept_all", action="store_true", help="accept all pending keys")
    p.add_argument("-r", "--reject", dest="reject", metavar="GLOB", help="reject the matching pending keys")
    p.add_argument("-R", "--reject-all", dest="reject_all", action="store_true", help="reject all pending keys")
    p.add_argument("-d", "--delete", dest="delete", metavar="GLOB", help="delete the matching keys")
    p.add_argument("-D", "--delete-all", dest="delete_all", action="store_true", help="delete all keys")
    p.add_argument("-f", "--finger", dest="finger", metavar="GLOB", help="print the matching keys' fingerprints")
    p.add_argument("-F", "--finger-all", dest="finger_all", action="store_true", help="print all fingerprints")
    p.add_argument("-y", "--yes", dest="yes", action="store_true", help="answer yes to every question")
    p.add_argument(
        "--include-rejected",
        "--include_rejected",
        dest="include_rejected",
        action="store_true",
        help="accept also matching rejected keys",
    )
    p.add_argument(
        "--include-accepted",
        "--include_accepted",
        dest="include_accepted",
        action="store_true",
        help="reject also matching accepted keys",
    )
    p.add_argument(
        "--include-denied",
        "--include_denied",
        dest="include_denied",
        action="store_true",
        help="accept/reject also matching denied keys",
    )
    p.add_argument(
        "--include-all",
        "--include_all",
        dest="include_all",
        action="store_true",
        help="accept rejected keys, or reject accepted keys, too",
    )
    p.add_argument("--out", "--output", dest="out", help="outputter: json, yaml, txt, nested, ...")
    p.add_argument("--out-indent", "--output-indent", dest="out_indent", type=int)
    p.add_argument(
        "--no-color", "--no-colour", dest="no_color", action="store_true", help="no colours (the key lists have none)"
    )
    logsetup.add_arguments(p, short=False, default_file="key_logfile")
    saltonly.add(p, saltonly.BRINY_KEY)  # refused by name (--gen-keys ...), before any key changes
    # salt-key ignores words that are not options: Salt's docs say `salt-key -F master`
    p.add_argument("extra", nargs="*", help=argparse.SUPPRESS)
    return p


def _key_text(data: dict[str, Any]) -> str:
    """salt-key's ``key`` outputter, without colour."""
    lines: list[str] = []
    for folder in sorted(data):
        lines.append(HEADINGS.get(folder, f"{folder}:"))
        entries = data[folder]
        for name in sorted(entries):
            lines.append(f"{name}:  {entries[name]}" if isinstance(entries, dict) else name)
    return "\n".join(lines).rstrip()


def _show(data: dict[str, Any], ns: argparse.Namespace, opts: dict[str, Any], out: TextIO) -> None:
    if ns.out:
        from briny.common.output import render_output

        text = render_output(data, ns.out, opts, color=False)
        if text:
            print(text, file=out)
        return
    text = _key_text(data)
    if text:
        print(text, file=out)


def _command(ns: argparse.Namespace) -> tuple[str, str]:
    """(command without ``_all``, match) as salt-key resolves them."""
    cmd = next((c for c in COMMANDS if getattr(ns, c)), "list_all")
    if cmd == "list_all":
        return "list", "all"
    if cmd.endswith("_all"):
        return cmd[:-4], "*"
    return cmd, getattr(ns, cmd)


def _ask(prompt: str, default_yes: bool, out: TextIO, stdin: TextIO) -> bool | None:
    """True/False for the answer, None when stdin gives none (EOF)."""
    out.write(prompt)
    out.flush()
    try:
        line = stdin.readline()
    except (OSError, ValueError):
        line = ""
    if not line:
        out.write("\n")
        return None
    answer = line.strip().lower()
    if not answer:
        return default_yes
    return answer.startswith("y")


def _no_match(pattern: str, flags: dict[str, bool]) -> str:
    statuses = ["unaccepted"] + [name for name in ("accepted", "rejected", "denied") if flags[name]]
    text = statuses[0] if len(statuses) == 1 else f"{', '.join(statuses[:-1])} or {statuses[-1]}"
    return f"The key glob '{pattern}' does not match any {text} keys."


def _change(
    store: KeyStore,
    cmd: str,
    pattern: str,
    ns: argparse.Namespace,
    opts: dict[str, Any],
    out: TextIO,
    err: TextIO,
    stdin: TextIO,
) -> int:
    flags = {"accepted": False, "rejected": ns.include_rejected, "denied": ns.include_denied}
    if cmd == "accept":
        flags["rejected"] = ns.include_all or ns.include_rejected
    elif cmd == "reject":
        flags = {"accepted": ns.include_all or ns.include_accepted, "rejected": False, "denied": ns.include_denied}
    found = store.name_match(pattern)
    if cmd == "delete":
        chosen: Matches = found
    else:
        wanted = {PEND: True, ACC: flags["accepted"], REJ: flags["rejected"], DEN: flags["denied"]}
        chosen = {folder: ids for folder, ids in found.items() if wanted.get(folder)}
    if not chosen:
        print(_no_match(pattern, flags), file=out)
        return 0
    verb = {"accept": "accepted", "reject": "rejected", "delete": "deleted"}[cmd]
    print(f"The following keys are going to be {verb}:", file=out)
    _show(chosen, ns, opts, out)
    if not ns.yes:
        try:
            answer = _ask("Proceed? [N/y] " if cmd == "delete" else "Proceed? [n/Y] ", cmd != "delete", out, stdin)
        except KeyboardInterrupt:
            print("\nExiting on CTRL-c", file=err)
            return 1
        if answer is None:
            print("briny-key: no answer on stdin (end of input); nothing was changed. Use -y to answer yes.", file=err)
            return 1
        if not answer:
            return 0
    changes: list[KeyChange]
    if cmd == "accept":
        changes = store.accept(chosen, include_rejected=flags["rejected"], include_denied=flags["denied"])
        done = {c.id for c in changes}
        for folder, ids in chosen.items():
            for minion_id in ids:
                if minion_id not in done and folder in (PEND, REJ, DEN):
                    print(f"Unable to accept invalid key for {minion_id}.", file=err)
    elif cmd == "reject":
        changes = store.reject(chosen, include_accepted=flags["accepted"], include_denied=flags["denied"])
    else:
        changes = store.delete(chosen)
    if cmd == "delete":
        for change in changes:
            print(f"Key for minion {change.id} {verb}.", file=out)
        return 0
    # salt-key reports every folder a changed key is in afterwards (an id
    # that also has a denied key is reported twice); briny-key does the same
    done = {c.id for c in changes}
    now = store.list_keys()
    report: dict[str, list[str]] = {}
    for ids in chosen.values():
        for minion_id in ids:
            if minion_id in done:
                for folder in (ACC, PEND, REJ, DEN):
                    if minion_id in now[folder]:
                        report.setdefault(folder, []).append(minion_id)
    for ids in report.values():
        for minion_id in ids:
            print(f"Key for minion {minion_id} {verb}.", file=out)
    return 0


def run(
    argv: Sequence[str] | None = None,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
    stdin: TextIO | None = None,
) -> int:
    """briny-key with ``argv``; returns the exit status (testable: pass the streams)."""
    out = out or sys.stdout
    err = err or sys.stderr
    stdin = stdin or sys.stdin
    ns = build_parser().parse_args(argv)
    logsetup.setup_console(ns.log_level, stream=err)
    try:
        saltonly.refuse("briny-key", ns, "no key was changed")
    except BrinyError as exc:
        print(exc, file=err)
        return 2
    try:
        opts = load_master_config(ns.config_dir)
        opts.update(logsetup.cli_overrides(ns, "key_logfile"))
        logsetup.setup_logging(opts, console_level=ns.log_level, file_key="key_logfile", stream=err)
    except ConfigError as exc:
        print(f"briny-key: {exc}", file=err)
        return 2
    if ns.out_indent is not None:
        opts["output_indent"] = ns.out_indent
    store = KeyStore(opts)
    cmd, match = _command(ns)
    try:
        if cmd == "list":
            try:
                data: dict[str, Any] = store.list_status(match)
            except BrinyError:
                print("Usage: briny-key [options]\n", file=err)
                print(f"briny-key: error: '{match}' is not a valid argument to '--list'", file=err)
                return EX_USAGE
            _show(data, ns, opts, out)
        elif cmd == "print":
            _show(store.key_strings(match), ns, opts, out)
        elif cmd == "finger":
            _show(store.fingerprints(match), ns, opts, out)
        else:
            return _change(store, cmd, match, ns, opts, out, err, stdin)
    except (OSError, BrinyError) as exc:
        print(f"Error: {exc}", file=err)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: returns the exit status (``briny.master.cli.main_key`` exits with it)."""
    return run(argv)
