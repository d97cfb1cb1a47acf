"""``briny-run``: run a master-side runner function (``salt-run``).

Runs on the master host, as the operator. Runners are found in
:mod:`briny.master.runners` (``jobs.*`` read the job cache; ``manage.*`` and
``state.event`` talk to the running master and fail clearly without one).

Usage: ``briny-run [-c DIR] [--out OUT] FUN [ARG ...] [key=value ...]``;
arguments are read as YAML, as Salt reads them. With ``--arg-json`` they come
as one JSON object on stdin instead (``saltutil.runner`` on the master's host
runs ``python -m briny.master.runcli --arg-json``, so no value is re-read). Output goes through
:func:`briny.common.output.render_output` (``nested`` by default, or the
outputter a runner names, e.g. ``highstate`` for ``jobs.lookup_jid`` of a
state run). A runner answering ``{"data", "outputter", "retcode"}`` (Salt's
full runner answer: ``state.orchestrate``) is printed whole with that
outputter, and exits with that ``retcode``, as ``salt-run`` does.
Exit status: 0 on success; 1 when the runner failed (a bad
argument, an unreadable cache) or the runner set a non-zero ``retcode``; 2
for a usage or config error (a Salt option briny does not support, ``--eauth``, is
refused by name); an
unknown function prints ``'FUN' is not available.`` and exits 1 (salt-run
exits 0 there; briny is explicit about failing).
"""

from __future__ import annotations

import argparse
import inspect
import json
import logging
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from briny.common import logsetup, saltonly, versions
from briny.common.args import call_function, parse_input
from briny.common.cliargs import add_config_dir
from briny.common.config import load_master_config
from briny.common.exceptions import BrinyError, ConfigError, FunctionNotFound, UsageError
from briny.master.runners import RunEvents, RunnerContext, get_runner

log = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="briny-run", description="Run a master-side runner (salt-run).")
    add_config_dir(p, "master")
    p.add_argument("--out", "--output", dest="out", help="outputter: nested, json, yaml, highstate, txt, ...")
    p.add_argument("--out-indent", "--output-indent", dest="out_indent", type=int)
    p.add_argument("--out-file", "--output-file", dest="out_file", help="write the output to this file (replaced)")
    p.add_argument(
        "--out-file-append",
        "--output-file-append",
        dest="out_file_append",
        action="store_true",
        help="append to --out-file instead of replacing it",
    )
    p.add_argument("--no-color", "--no-colour", dest="color", action="store_false", default=None)
    p.add_argument("--force-color", "--force-colour", dest="force_color", action="store_true")
    p.add_argument("-t", "--timeout", dest="timeout", type=float, help="timeout in seconds for runners that wait")
    logsetup.add_arguments(p)
    versions.add_arguments(p)
    p.add_argument(
        "--arg-json",
        dest="arg_json",
        action="store_true",
        help='read the arguments as one JSON object on stdin, {"arg": [...], "kwarg": {...}, "saltenv": ENV} '
        "(saltenv is passed only to a runner that takes one; saltutil.runner uses this)",
    )
    saltonly.add(p, saltonly.BRINY_RUN)  # refused by name (--eauth ...), before the runner runs
    p.add_argument("fun", help="module.function, e.g. jobs.list_jobs")
    p.add_argument("arg", nargs="*", help="arguments and key=value pairs")
    return p


def _render(data: Any, out: str | None, opts: dict[str, Any], color: bool | None) -> str:
    try:
        from briny.common.output import render_output
    except ImportError:  # the outputters are another module's; JSON keeps briny-run usable
        return json.dumps(data, indent=4, default=str)
    return render_output(data, out, opts, color=color)


def run(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """briny-run with ``argv``; returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    ns = build_parser().parse_intermixed_args(argv)
    logsetup.setup_console(ns.log_level, stream=err)
    try:
        saltonly.refuse("briny-run", ns, "the runner did not run")
        opts = load_master_config(ns.config_dir)
        opts.update(logsetup.cli_overrides(ns))
        logsetup.setup_logging(opts, console_level=ns.log_level, stream=err)
    except UsageError as exc:
        print(exc, file=err)
        return 2
    except ConfigError as exc:
        print(f"briny-run: {exc}", file=err)
        return 2
    if ns.timeout is not None:
        opts["timeout"] = ns.timeout
    if ns.out_indent is not None:
        opts["output_indent"] = ns.out_indent
    if ns.force_color:
        opts["force_color"] = True
    try:
        func = get_runner(ns.fun)
    except FunctionNotFound:  # through the outputter, as salt-run prints it (``--out=json``: a JSON string)
        print(_render(f"'{ns.fun}' is not available.", ns.out, opts, ns.color), file=out)
        return 1
    if ns.arg_json:
        if ns.arg:
            print("briny-run: --arg-json takes the arguments on stdin, not on the command line", file=err)
            return 2
        try:
            args, kwargs = _json_arguments(sys.stdin.read(), func)
        except ValueError as exc:
            print(f"briny-run: --arg-json: {exc}", file=err)
            return 2
    else:
        args, kwargs = parse_input(list(ns.arg))
    ctx = RunnerContext(opts)
    events = RunEvents(opts, ns.fun, args, kwargs)
    try:
        result = call_function(func, ns.fun, [ctx, *args], kwargs)
    except (BrinyError, OSError) as exc:
        events.ret(f"{type(exc).__name__}: {exc}", False)
        print(f"briny-run: {ns.fun}: {exc}", file=err)
        return 1
    finally:
        ctx.close()
    outputter = ns.out
    retcode = ctx.context.get("retcode", 0)
    if isinstance(result, dict) and set(result) == {"outputter", "data"}:
        outputter = outputter or result["outputter"]
        result = result["data"]
    elif isinstance(result, dict) and {"outputter", "data", "retcode"} <= set(result):
        # a runner's full answer (state.orchestrate): printed whole, as salt-run prints it
        outputter = outputter or result["outputter"]
        retcode = result["retcode"]
    events.ret(result, not retcode)  # the runner's answer, as salt-run's ret event carries it
    text = _render(result, outputter, opts, ns.color)
    if ns.out_file:
        with open(ns.out_file, "a" if ns.out_file_append else "w", encoding="utf-8") as fh:  # Salt's modes
            fh.write(text + "\n")
    elif text:
        print(text, file=out)
    return int(retcode) if isinstance(retcode, int) and not isinstance(retcode, bool) else 0


def _json_arguments(text: str, func: Any) -> tuple[list[Any], dict[str, Any]]:
    """(positional, keyword) arguments from ``--arg-json``'s object; ValueError when malformed."""
    data = json.loads(text or "{}")
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    args, kwargs, saltenv = data.get("arg") or [], data.get("kwarg") or {}, data.get("saltenv")
    if not isinstance(args, list) or not isinstance(kwargs, dict):
        raise ValueError('"arg" must be a list and "kwarg" an object')
    if saltenv is not None and "saltenv" in inspect.signature(func).parameters:
        kwargs.setdefault("saltenv", saltenv)
    return args, kwargs


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: returns the exit status (``briny.master.cli.main_run`` exits with it)."""
    return run(argv)


if __name__ == "__main__":  # saltutil.runner runs briny-run as `python -m briny.master.runcli`
    sys.exit(main())
