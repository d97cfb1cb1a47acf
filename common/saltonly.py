"""Salt's command-line options briny has no counterpart for yet: accepted by the parser, then refused by name.

Runs in ``briny``, ``briny-call``, ``briny-run``, ``briny-key`` and ``briny-cp`` while they
read their command line. Without
this table argparse would answer ``unrecognized arguments: --return`` (or, worse, take an option's
value for the target). A job must never run without what its options asked for (a returner,
external auth, executors), so each command registers the Salt options it lacks as hidden
options (:func:`add`) and, after parsing and before anything is sent or run, :func:`refuse`
raises :class:`~briny.common.exceptions.UsageError` naming each one given and what it is (the
command prints it and exits 2). ``docs/not-yet.md`` lists the subsystems behind them.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any, NamedTuple

from .exceptions import UsageError


class SaltOption(NamedTuple):
    flags: tuple[str, ...]
    takes_value: bool
    what: str  # what briny does not have, for the message


# by a key of our own (the dest), the option strings Salt 3007's commands take
OPTIONS: dict[str, SaltOption] = {
    "return": SaltOption(("--return",), True, "returners"),
    "return_config": SaltOption(("--return_config", "--return-config"), True, "returners"),
    "return_kwargs": SaltOption(("--return_kwargs", "--return-kwargs"), True, "returners"),
    "eauth": SaltOption(("-a", "--auth", "--eauth", "--external-auth"), True, "external auth"),
    "make_token": SaltOption(("-T", "--make-token"), False, "external auth tokens"),
    "username": SaltOption(("--username",), True, "external auth"),
    "password": SaltOption(("--password",), True, "external auth"),
    "module_executors": SaltOption(("--module-executors",), True, "module executors"),
    "executor_opts": SaltOption(("--executor-opts",), True, "module executors"),
    "metadata": SaltOption(("--metadata",), True, "job metadata"),
    "set_metadata": SaltOption(("--set-metadata",), True, "job metadata"),
    "saltfile": SaltOption(("--saltfile",), True, "Saltfiles"),
    "args_stdin": SaltOption(("--args-stdin",), False, "arguments read from stdin"),
    "no_parse": SaltOption(("--no-parse",), True, "leaving arguments unparsed"),
    "args_separator": SaltOption(("--args-separator",), True, "multi-function jobs"),
    "doc": SaltOption(("-d", "--doc", "--documentation"), False, "the documentation mode"),
    "batch_wait": SaltOption(("--batch-wait",), True, "batch waits"),
    "batch_safe_limit": SaltOption(("--batch-safe-limit",), True, "batch safe limits"),
    "batch_safe_size": SaltOption(("--batch-safe-size",), True, "batch safe limits"),
    "output_diff": SaltOption(("--output-diff",), False, "the changed-states-only output"),
    "config_dump": SaltOption(("--config-dump",), False, "dumping the config"),
    "preview_target": SaltOption(("--preview-target",), False, "target previews"),
    "hosts": SaltOption(("-H", "--hosts"), False, "salt-cloud hosts"),
    "delimiter": SaltOption(("--delimiter",), True, "a targeting delimiter"),
    "hard_crash": SaltOption(("--hard-crash",), False, "hard crashes"),
    "master": SaltOption(("--master",), True, "choosing the master on the command line"),
    "module_dirs": SaltOption(("-m", "--module-dirs"), True, "extra module folders on the command line"),
    "states_dir": SaltOption(("--states-dir",), True, "extra state folders on the command line"),
    "proxyid": SaltOption(("--proxyid",), True, "proxy minions"),
    "no_return_event": SaltOption(("--no-return-event",), False, "leaving out the return event"),
    "profiling": SaltOption(("--enable-profiling",), False, "profiling"),
    "profiling_path": SaltOption(("--profiling-path",), True, "profiling"),
    "jid": SaltOption(("--jid",), True, "choosing a runner's jid"),
    "run_async": SaltOption(("--async",), False, "asynchronous runners"),
    "cachedir": SaltOption(("--cachedir",), True, "choosing the cache folder on the command line"),
    "priv": SaltOption(("--priv",), True, "choosing the private key on the command line"),
    "refresh_grains_cache": SaltOption(("--refresh-grains-cache",), False, "the grains cache"),
    "skip_grains": SaltOption(("--skip-grains",), False, "skipping the grains"),
    "call_timeout": SaltOption(("-t", "--timeout"), True, "a timeout for reaching the master"),
    "quiet": SaltOption(("--quiet",), False, "quiet runners"),
    # salt-key's (its -a is --accept: its external auth has only the long forms)
    "key_eauth": SaltOption(("--auth", "--eauth", "--external-auth"), True, "external auth"),
    "gen_keys": SaltOption(("--gen-keys",), True, "generating key pairs with the key command"),
    "gen_keys_dir": SaltOption(("--gen-keys-dir",), True, "generating key pairs with the key command"),
    "keysize": SaltOption(("--keysize",), True, "generating key pairs with the key command"),
    "gen_signature": SaltOption(("--gen-signature",), False, "master public key signatures"),
    "auto_create": SaltOption(("--auto-create",), False, "master public key signatures"),
    "pub": SaltOption(("--pub",), True, "master public key signatures"),
    "signature_path": SaltOption(("--signature-path",), True, "master public key signatures"),
    "rotate_aes_key": SaltOption(("--rotate-aes-key",), True, "rotating the AES key from the key command"),
    "preserve_minions": SaltOption(("--preserve-minions",), True, "preserving minion caches on key deletion"),
    "key_quiet": SaltOption(("-q", "--quiet"), False, "quiet key commands"),
    "key_user": SaltOption(("-u", "--user"), True, "running the key command as another user"),
    "key_out_file": SaltOption(("--out-file", "--output-file"), True, "writing key lists to a file"),
    "key_out_file_append": SaltOption(
        ("--out-file-append", "--output-file-append"), False, "writing key lists to a file"
    ),
    "force_color": SaltOption(("--force-color", "--force-colour"), False, "coloured key lists"),
    "state_output": SaltOption(("--state-output", "--state_output"), True, "state output options here"),
    "state_verbose": SaltOption(("--state-verbose", "--state_verbose"), True, "state output options here"),
}

# the Salt options each command refuses (those it has are its own)
BRINY = (
    "return return_config return_kwargs eauth make_token username password module_executors executor_opts "
    "metadata saltfile args_stdin no_parse args_separator doc batch_wait batch_safe_limit batch_safe_size "
    "output_diff config_dump preview_target hosts delimiter hard_crash"
).split()
BRINY_CALL = (
    "return module_executors executor_opts set_metadata metadata saltfile args_stdin no_parse doc hard_crash "
    "master module_dirs states_dir proxyid no_return_event profiling profiling_path cachedir priv "
    "refresh_grains_cache skip_grains call_timeout output_diff"
).split()
BRINY_RUN = (
    "eauth make_token username password saltfile args_stdin no_parse doc hard_crash profiling profiling_path jid "
    "run_async quiet skip_grains"
).split()

BRINY_KEY = (
    "key_eauth make_token username password saltfile hard_crash gen_keys gen_keys_dir keysize gen_signature "
    "auto_create priv pub signature_path rotate_aes_key preserve_minions key_quiet key_user key_out_file "
    "key_out_file_append force_color state_output state_verbose"
).split()
BRINY_CP = "delimiter hard_crash hosts saltfile state_output state_verbose".split()

_PREFIX = "salt_only_"


def add(parser: argparse.ArgumentParser, names: Iterable[str]) -> None:
    """Register Salt's options ``names`` (keys of :data:`OPTIONS`) on ``parser``, hidden from ``--help``."""
    for name in names:
        opt = OPTIONS[name]
        if opt.takes_value:
            parser.add_argument(*opt.flags, dest=_PREFIX + name, default=None, help=argparse.SUPPRESS)
        else:
            parser.add_argument(*opt.flags, dest=_PREFIX + name, action="store_true", help=argparse.SUPPRESS)


def _long(opt: SaltOption) -> str:
    return next(f for f in opt.flags if f.startswith("--"))


def given(ns: argparse.Namespace) -> list[tuple[str, Any]]:
    """(the key of :data:`OPTIONS`, its value or True) for each of them on the command line."""
    return [
        (key[len(_PREFIX) :], value)
        for key, value in sorted(vars(ns).items())
        if key.startswith(_PREFIX) and value not in (None, False)
    ]


def refuse(prog: str, ns: argparse.Namespace, nothing: str) -> None:
    """UsageError naming each Salt option given that briny does not support, and what it is;
    ``nothing`` says what did not happen ("nothing was sent")."""
    parts = []
    for key, value in given(ns):
        opt = OPTIONS[key]
        parts.append(f"{_long(opt)}{'' if value is True else ' ' + str(value)} ({opt.what})")
    if parts:
        verb = "is a Salt option" if len(parts) == 1 else "are Salt options"
        raise UsageError(f"{prog}: {', '.join(parts)} {verb} briny does not support yet; {nothing} (docs/not-yet.md)")
