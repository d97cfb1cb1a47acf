"""``briny``: run a job on targeted minions through the master, like ``salt``.

Runs on the master host, as the operator, in one synchronous process: it
talks to the running master over the operator IPC
(:class:`briny.master.clientapi.MasterClient`) and listens to the master
event bus (:class:`briny.common.event.EventListener`) for the returns.

Usage: ``briny [-c DIR] [-L|-G|-E|-C|-P|-N|-S|-I|-J|-R] TARGET FUN [ARG ...] [key=val ...]``
with ``-t TIMEOUT``, ``--async``, ``-b N|N%``, ``--failhard``, ``--subset N``,
``--static``, ``-v``, ``--show-jid``, ``--summary``, ``--hide-timeout``,
``--progress``, ``--out``, ``--out-file F [--out-file-append]``,
``--state-output``, ``--state-verbose``, ``--no-color``. Salt's options briny has no
counterpart for (``--return``, ``--eauth``, ...: :mod:`briny.common.saltonly`) are refused by
name before anything is sent (exit 2). Salt's meanings:
``-I``/``-J`` match the pillar the master compiled for each minion; ``-R``
(range) is refused as Salt without a range server refuses it; ``--subset N``
runs on N minions of the target, picked at random among those that have the
function; ``--failhard`` stops a batch at its first bad return (without
``-b`` it does nothing, and a warning says so); ``--hide-timeout`` leaves out
the minions that did not return (they fail nothing); ``--out-file`` writes the
returns to a file (``jid:``, the summary and errors stay on the terminal).

Progress: for a state run (``state.apply``, ``state.sls``, ...) with stdout
on a terminal (or ``--progress``), the publish asks the minions for
progress events (``salt/job/<jid>/prog/<id>/<n>``); on a terminal a live
line per running minion (``web1: 12/20 states, 0 failed``,
:mod:`briny.master.liveview`) is updated in place and cleared before each
output. Scripts (stdout not a terminal) see the normal output only.

How it waits (Salt's ``LocalClient`` behaviour): it subscribes to the bus
before publishing, prints each minion's return as it arrives (all at once
with ``--static``), and when ``-t`` seconds pass with minions missing it
first reads the job cache (a return whose event was missed), then asks the
rest with ``saltutil.find_job`` whether they still run the job; those that
do get another ``-t`` seconds, those that answer nothing within
``gather_job_timeout`` are reported as ``Minion did not return. [No
response]``.

Exit status: 0 when every minion returned and succeeded; 1 when a minion
failed (non-zero retcode, ``success`` false, a failed state) or did not
return; 2 for a usage or config error, no matching minion, or no running
master (the message says how to start it).
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, TextIO

from briny.common.args import parse_input
from briny.common.cliargs import add_config_dir, config_dir
from briny.common.config import load_master_config
from briny.common import config
from briny.common.exceptions import BrinyError, MasterError, MasterNotRunning, UsageError
from briny.common import logsetup, saltonly, versions
from briny.common.numbers import positive
from briny.common.output import HIGHSTATE_FUNCS
from briny.master.clientapi import MasterClient
from briny.master.opresults import Printer
from briny.master.waiter import Waiter

log = logging.getLogger(__name__)

TARGET_FLAGS = (
    ("-L", "--list", "list"),
    ("-G", "--grain", "grain"),
    ("-E", "--pcre", "pcre"),
    ("-C", "--compound", "compound"),
    ("-P", "--grain-pcre", "grain_pcre"),
    ("-N", "--nodegroup", "nodegroup"),
    ("-S", "--ipcidr", "ipcidr"),
    ("-I", "--pillar", "pillar"),
    ("-J", "--pillar-pcre", "pillar_pcre"),
    ("-R", "--range", "range"),
)


class CliParser(argparse.ArgumentParser):
    """A parser whose errors are UsageError (the command prints it and exits 2)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def add_target_flags(p: argparse.ArgumentParser, skip: Sequence[str] = ()) -> None:
    """Salt's target type flags (``-L``, ``-G``, ...; ``tgt_type``), but those in ``skip``."""
    group = p.add_mutually_exclusive_group()
    for short, long, kind in TARGET_FLAGS:
        if short not in skip:
            group.add_argument(
                short,
                long,
                dest="tgt_type",
                action="store_const",
                const=kind,
                help=f"the target is a {kind} expression",
            )


def build_parser() -> argparse.ArgumentParser:
    p = CliParser(prog="briny", description="Run a function on targeted minions through the master.")
    add_config_dir(p, "master")
    add_target_flags(p)
    p.add_argument(
        "-t",
        "--timeout",
        type=float,
        help="seconds to wait for returns before asking "
        "the slow minions whether they still run the job (default: the 'timeout' option, 5)",
    )
    p.add_argument("--async", dest="run_async", action="store_true", help="print the job id and return")
    p.add_argument("-b", "--batch", "--batch-size", dest="batch", help="run on N minions (or N%%) at a time")
    p.add_argument("-s", "--static", action="store_true", help="print all returns together at the end")
    p.add_argument(
        "--subset", type=int, help="run on N minions of the target chosen at random (that have the function)"
    )
    p.add_argument("--failhard", action="store_true", help="stop a batch run (-b) at the first bad return")
    p.add_argument("--summary", action="store_true", help="print a summary of the returns at the end")
    p.add_argument("--show-jid", dest="show_jid", action="store_true", help="print the job id first")
    p.add_argument(
        "--hide-timeout", dest="hide_timeout", action="store_true", help="show nothing of minions that do not return"
    )
    p.add_argument("-v", "--verbose", action="store_true", help="print the job id first")
    p.add_argument(
        "-p",
        "--progress",
        action="store_true",
        help="ask the minions for progress events of "
        "state runs (implied when stdout is a terminal, which then shows a live line per minion)",
    )
    p.add_argument(
        "--out", "--output", dest="out", help="outputter: highstate, json, yaml, nested, txt, raw, pprint, quiet"
    )
    p.add_argument("--out-indent", "--output-indent", dest="out_indent", type=int)
    p.add_argument("--out-file", "--output-file", dest="out_file", help="write the output to this file instead")
    p.add_argument(
        "--out-file-append",
        "--output-file-append",
        dest="out_file_append",
        action="store_true",
        help="append to --out-file instead of replacing it",
    )
    p.add_argument(
        "--state-output", "--state_output", dest="state_output", help="full, terse, mixed, changes (and the _id forms)"
    )
    p.add_argument(
        "--state-verbose",
        "--state_verbose",
        dest="state_verbose",
        type=lambda s: str(s).lower() in ("1", "true", "yes", "on"),
    )
    p.add_argument("--no-color", "--no-colour", dest="no_color", action="store_true")
    p.add_argument("--force-color", "--force-colour", dest="force_color", action="store_true")
    logsetup.add_arguments(p)
    versions.add_arguments(p)
    saltonly.add(p, saltonly.BRINY)  # refused by name (--return ...), before anything is sent
    p.add_argument("tgt", nargs="?", help="the target")
    p.add_argument("fun", nargs="?", help="module.function")
    p.add_argument("arg", nargs="*", help="arguments and key=value pairs")
    return p


# -- the command ----------------------------------------------------------------------


def _opts(ns: argparse.Namespace) -> dict[str, Any]:
    opts = load_master_config(config_dir(ns.config_dir, required=True))
    opts.update(logsetup.cli_overrides(ns))
    for key in ("state_output", "state_verbose"):
        if getattr(ns, key) is not None:
            opts[key] = getattr(ns, key)
    if ns.no_color:
        opts["no_color"] = True
    if ns.force_color:
        opts["force_color"] = True
    if ns.out_indent is not None:
        opts["output_indent"] = ns.out_indent
    return opts


def _is_tty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _batch_size(spec: str, count: int) -> int:
    text = str(spec).strip()
    try:
        if text.endswith("%"):
            size = float(text[:-1]) / 100.0 * count
            return max(1, int(size) if size >= 1 else (1 if size > 0 else 0))
        size = int(text)
    except ValueError:
        raise UsageError(
            f"invalid batch size {spec!r}: give a number of minions or a percentage (-b 2, -b 10%)"
        ) from None
    if size < 1:
        raise UsageError(f"invalid batch size {spec!r}: it must be at least 1")
    return size


def _no_match(stdout: TextIO, stderr: TextIO) -> int:
    stdout.write("No minions matched the target. No command was sent, no jid was assigned.\n")
    stderr.write("ERROR: No return received\n")
    return 2


def _out_stream(ns: argparse.Namespace, stdout: TextIO) -> TextIO:
    """Where the returns go: ``--out-file`` (replaced, or appended to with ``--out-file-append``,
    as Salt), else stdout."""
    if not ns.out_file:
        return stdout
    try:
        return open(ns.out_file, "a" if ns.out_file_append else "w", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"briny: cannot write --out-file {ns.out_file}: {exc.strerror}") from None


def _pick_subset(waiter: Waiter, client: MasterClient, ns: argparse.Namespace, tgt: Any, tgt_type: str) -> list[str]:
    """Salt's ``--subset N``: ask the target which functions it has, keep N minions (at random)
    among those that have ``ns.fun``."""
    pub = client.publish(tgt, "sys.list_functions", [ns.fun.partition(".")[0]], {}, tgt_type, waiter.timeout)
    if not pub.get("minions"):
        return []
    waiter.add_job(pub["jid"], "sys.list_functions", pub["minions"])
    having: list[str] = []
    while waiter.active:
        for res in waiter.poll():
            if res.returned and isinstance(res.ret, list) and ns.fun in res.ret:
                having.append(res.id)
    random.shuffle(having)
    return sorted(having[: ns.subset])


def run(argv: Sequence[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        ns = build_parser().parse_intermixed_args(list(sys.argv[1:] if argv is None else argv))
        saltonly.refuse("briny", ns, "nothing was sent")
        if not ns.tgt or not ns.fun:
            raise UsageError("briny: a target and a function are required, e.g. briny '*' test.ping")
        logsetup.setup_console(ns.log_level, stream=stderr)
        opts = _opts(ns)
        logsetup.setup_logging(opts, console_level=ns.log_level, stream=stderr)
        arg, kwarg = parse_input(list(ns.arg))
        if ns.batch is not None:
            _batch_size(ns.batch, 100)  # refuse a bad size before anything is sent
        if ns.subset is not None and ns.subset < 1:
            raise UsageError(f"briny: --subset must be at least 1, not {ns.subset}")
        if ns.failhard and ns.batch is None:
            log.warning(
                "--failhard stops a batch run (-b) at its first bad return; without -b it does nothing (as Salt)"
            )
        if ns.out_file:
            opts["no_color"] = True
        out = _out_stream(ns, stdout)
    except BrinyError as exc:
        stderr.write(f"{exc}\n")
        return 2
    timeout = positive(ns.timeout, None) or config.number(opts, "timeout")
    gather = config.number(opts, "gather_job_timeout")
    tgt: Any = ns.tgt
    tgt_type = ns.tgt_type or "glob"
    client = MasterClient(opts)
    listener = None
    printer: Printer | None = None
    batch_code: int | None = None
    try:
        if ns.run_async:
            pub = client.publish(tgt, ns.fun, arg, kwarg, tgt_type, timeout)
            if not pub.get("minions"):
                return _no_match(stdout, stderr)
            stdout.write(f"Executed command with job ID: {pub['jid']}\n")
            return 0
        client.check_running()
        from briny.common.event import EventListener

        live = ns.fun in HIGHSTATE_FUNCS and _is_tty(out)
        progress = ns.fun in HIGHSTATE_FUNCS and (live or ns.progress)
        listener = EventListener(opts, "salt/job/*" if progress else "salt/job/*/ret/*", name="master")
        listener.wait_ready()  # subscribed before anything can return (the job cache covers a miss)
        waiter = Waiter(client, listener, opts, timeout, gather)
        printer = Printer(ns, opts, ns.fun, out)
        if live:
            from briny.master.liveview import LiveView

            printer.live = LiveView(out)
            waiter.on_progress = printer.progress
        if ns.subset is not None:
            tgt, tgt_type = _pick_subset(waiter, client, ns, tgt, tgt_type), "list"
            if not tgt:
                return _no_match(stdout, stderr)
        if ns.batch is not None:
            batch_code = _run_batch(ns, client, waiter, printer, tgt, tgt_type, arg, kwarg, timeout, out, stderr)
            failed = False
        else:
            pub = client.publish(tgt, ns.fun, arg, kwarg, tgt_type, timeout, progress=progress)
            if not pub.get("minions"):
                return _no_match(stdout, stderr)
            if ns.show_jid:
                stdout.write(f"jid: {pub['jid']}\n")
                stdout.flush()
            if ns.verbose:
                msg = f"Executing job with jid {pub['jid']}"
                out.write(f"{msg}\n{'-' * len(msg)}\n\n")
                out.flush()
            waiter.add_job(pub["jid"], ns.fun, pub["minions"])
            failed = False
            while waiter.active:
                for res in waiter.poll(0.2 if live else 1.0):
                    failed = failed or (not res.success and printer.counts(res))
                    printer.result(res)
                printer.tick()
        printer.finish()
        if ns.summary and not ns.out:
            printer.summary(stdout)
    except MasterNotRunning as exc:
        stderr.write(f"briny: {exc}\n")
        return 2
    except MasterError as exc:
        stderr.write(f"briny: {exc}\n")
        return 2
    except KeyboardInterrupt:
        stderr.write("\nExiting gracefully on Ctrl-c\n")
        return 1
    finally:
        if printer is not None and printer.live is not None:
            printer.live.forget_all()
        if listener is not None:
            listener.close()
        client.close()
        if out is not stdout:
            out.close()
    if batch_code is not None:  # Salt's batch: the highest retcode, no summary line
        return batch_code
    if failed:
        stderr.write("ERROR: Minions returned with non-zero exit code\n")
        return 1
    return 0


def _run_batch(
    ns: argparse.Namespace,
    client: MasterClient,
    waiter: Waiter,
    printer: Printer,
    tgt: Any,
    tgt_type: str,
    arg: list[Any],
    kwarg: dict[str, Any],
    timeout: float,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """Salt's batch mode: ping the target, then keep N minions busy at a time. The exit status, as
    Salt's: the highest retcode of the returns (1 when a minion did not respond or failed
    without one), 0 when all succeeded."""
    ping = client.publish(tgt, "test.ping", [], {}, tgt_type, timeout)
    if not ping.get("minions"):
        stdout.write("No minions matched the target.\n")
        raise MasterError("No return received")
    waiter.add_job(ping["jid"], "test.ping", ping["minions"])
    up: list[str] = []
    failed = False
    code = 0
    while waiter.active:
        for res in waiter.poll():
            if res.returned:
                up.append(res.id)
            else:
                stdout.write(f"Minion {res.id} did not respond. No job will be sent.\n")
                failed = True
    size = _batch_size(ns.batch, len(up))
    queue = sorted(up)
    active = 0
    while queue or waiter.active:
        if queue and active < size:
            group, queue = queue[: size - active], queue[size - active :]
            stdout.write(f"\nExecuting run on {group}\n\n")
            stdout.flush()
            pub = client.publish(
                group, ns.fun, arg, kwarg, "list", timeout, progress=waiter.on_progress is not None or bool(ns.progress)
            )
            started = pub.get("minions") or []
            for m in group:
                if m not in started:
                    stdout.write(f"Minion '{m}' failed to respond to job sent\n")
                    failed = True
            if started:
                waiter.add_job(pub["jid"], ns.fun, started)
                active += len(started)
            continue
        for res in waiter.poll():
            active -= 1
            bad = not res.success and printer.counts(res)
            failed = failed or bad
            if not res.returned:
                stdout.write(f"Minion '{res.id}' failed to respond to job sent\n")
            printer.result(res, {"jid": res.jid, "retcode": res.retcode})
            if bad:
                code = max(code, res.retcode or 1)
            if bad and ns.failhard:
                log.error("Minion %s returned with non-zero exit code. Batch run stopped due to failhard", res.id)
                return code
    return max(code, 1) if failed else code


def main() -> None:
    try:
        code = run()
    except KeyboardInterrupt:
        code = 1
    sys.exit(code)
