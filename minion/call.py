"""``briny-call``: run one execution function on this host, like ``salt-call``.

Runs on a managed host. ``--local`` (or ``file_client: local``) needs no
master: in this process, the state tree and pillar are read from this host's
``file_roots`` and ``pillar_roots``. Otherwise the call goes to the running
``briny-minion`` over its local IPC (:mod:`briny.minion.localapi`), which
runs it as a job with the master's pillar, files and compiled states; with
no minion running, exit 2. With ``--local`` the config's keys briny will not act on are
named in warnings first, as the daemons name them at start (:mod:`briny.common.saltkeys`).
Results go to stdout through the outputters; problems go to
stderr. Exit status: 0 on success, 1 when the function reported a failure
(a failed state, a compile error, a non-zero ``retcode``), 2 on a usage or
config error (a Salt option briny does not support, ``--return``, is refused by name before
anything runs), 255 when the function does not exist (as ``salt-call``).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

from briny.common.cliargs import add_config_dir, config_dir
from briny.common.config import load_minion_config
from briny.common.exceptions import BrinyError, InvalidArguments
from briny.common.jid import gen_jid
from briny.common import logsetup, saltkeys, saltonly, versions

log = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="briny-call", description="Run an execution function on this host.")
    add_config_dir(p, "minion")
    p.add_argument("--local", action="store_true", help="run without a master: file_client local")
    p.add_argument("--id", dest="minion_id", help="use this minion id")
    p.add_argument("--file-root", action="append", help="a file root for the base saltenv (repeatable)")
    p.add_argument("--pillar-root", action="append", help="a pillar root for the base saltenv")
    p.add_argument("--out", "--output", dest="out", help="outputter: highstate, json, yaml, nested, txt, raw, quiet")
    p.add_argument("--out-indent", "--output-indent", dest="out_indent", type=int)
    p.add_argument("--out-file", "--output-file", dest="out_file", help="write the output to this file (replaced)")
    p.add_argument(
        "--out-file-append",
        "--output-file-append",
        dest="out_file_append",
        action="store_true",
        help="append to --out-file instead of replacing it",
    )
    p.add_argument(
        "--state-output",
        "--state_output",
        dest="state_output",
        help="full, terse, mixed, changes, full_id, terse_id, mixed_id, changes_id",
    )
    p.add_argument("--state-verbose", "--state_verbose", dest="state_verbose", type=_bool)
    p.add_argument("--no-color", "--no-colour", dest="color", action="store_false", default=None)
    p.add_argument("--force-color", "--force-colour", dest="force_color", action="store_true")
    logsetup.add_arguments(p)
    p.add_argument("--retcode-passthrough", action="store_true", help="exit with the function's own retcode")
    p.add_argument("-g", "--grains", dest="grains_run", action="store_true", help="return grains.items")
    versions.add_arguments(p)
    saltonly.add(p, saltonly.BRINY_CALL)  # refused by name (--return ...), before anything runs
    p.add_argument("fun", nargs="?", help="module.function")
    p.add_argument("arg", nargs="*", help="arguments and key=value pairs")
    return p


def _bool(text: str) -> bool:
    return str(text).lower() in ("1", "true", "yes", "on")


def _config(ns: argparse.Namespace) -> dict[str, Any]:
    overrides: dict[str, Any] = {}
    if ns.local:
        overrides["file_client"] = "local"
    if ns.minion_id:
        overrides["id"] = ns.minion_id
    if ns.file_root:
        overrides["file_roots"] = {"base": [os.path.abspath(d) for d in ns.file_root]}
    if ns.pillar_root:
        overrides["pillar_roots"] = {"base": [os.path.abspath(d) for d in ns.pillar_root]}
    for key in ("state_output", "state_verbose"):
        if getattr(ns, key) is not None:
            overrides[key] = getattr(ns, key)
    opts = load_minion_config(config_dir(ns.config_dir), overrides)
    opts.update(logsetup.cli_overrides(ns))
    logsetup.setup_logging(opts, console_level=ns.log_level)
    return opts


def _default_outputter(fun: str, module: Any) -> str:
    from briny.minion.executor import default_outputter

    return default_outputter(fun, module) or "nested"


def _daemon_control(opts: dict[str, Any], kind: str) -> Any:
    """:func:`briny.minion.localapi.daemon_control`, its client (ZeroMQ, asyncio) imported only
    when a ``schedule.*`` / ``beacons.*`` action asks the running daemon."""

    def ask(action: str, args: dict[str, Any]) -> Any:
        from briny.minion.localapi import daemon_control

        return daemon_control(opts, kind)(action, args)

    return ask


def run(argv: list[str] | None = None) -> int:
    # options may come after the function, as with salt-call; "--" ends them
    ns = build_parser().parse_intermixed_args(argv)
    logsetup.setup_console(ns.log_level)
    try:
        saltonly.refuse("briny-call", ns, "nothing was run")
    except BrinyError as exc:
        print(exc, file=sys.stderr)
        return 2
    if ns.grains_run:
        ns.fun, ns.arg = "grains.items", []
    if not ns.fun:
        print("briny-call: a function to run is required, e.g. briny-call --local test.ping", file=sys.stderr)
        return 2
    try:
        opts = _config(ns)
    except BrinyError as exc:
        print(f"briny-call: {exc}", file=sys.stderr)
        return 2
    if opts.get("file_client") != "local":
        return _through_minion(ns, opts)
    saltkeys.warn_unsupported(opts)  # masterless: no daemon has named the keys briny will not act on

    from briny.minion.executor import Executor, Job
    from briny.minion.host.grains import load_grains

    grains = load_grains(opts)
    opts["grains"] = grains
    job = Job.from_cli(gen_jid(), ns.fun, ns.arg)
    log.debug("running %s locally as %s (jid %s)", ns.fun, opts.get("id"), job.jid)
    # schedule.* / beacons.*: the running daemon's, when one runs for this config
    schedule, beacons = _daemon_control(opts, "schedule"), _daemon_control(opts, "beacons")
    result = Executor(opts, lambda: grains, schedule=schedule, beacons=beacons).run(job)
    log.debug("%s returned (retcode %s)", ns.fun, result.retcode)
    if result.error == "not_found":
        print(result.ret, file=sys.stderr)
        return 255
    if result.error is not None:
        error = result.exception
        if isinstance(error, InvalidArguments):  # salt-call's words: the error, then the docstring
            print(f"Passed invalid arguments: {error}.\n\nUsage:\n", file=sys.stderr)
            print(str(result.ret).partition("\n")[2])
        elif isinstance(error, BrinyError):
            print(f"Error running '{ns.fun}': {error}", file=sys.stderr)
        else:
            print(f"Error running '{ns.fun}': {result.ret}", file=sys.stderr)
        return 1
    return _show(ns, opts, result.ret, result.retcode, ns.out or _default_outputter(ns.fun, result.module))


def _through_minion(ns: argparse.Namespace, opts: dict[str, Any]) -> int:
    """Not ``--local``: the running minion daemon runs the call (and asks its master for the
    compiled states of a state run) over ``sock_dir/minion_client.ipc``."""
    if ns.minion_id or ns.file_root or ns.pillar_root:
        print(
            "briny-call: --id, --file-root and --pillar-root apply only with --local (the running "
            "minion uses its own config)",
            file=sys.stderr,
        )
        return 2
    from briny.common.args import parse_input
    from briny.common.exceptions import MinionNotRunning
    from briny.minion.localapi import LocalClient

    args, kwargs = parse_input(ns.arg)
    try:
        reply = LocalClient(opts).call(ns.fun, args, kwargs)
    except MinionNotRunning as exc:
        print(f"briny-call: {exc}", file=sys.stderr)
        return 2
    error = reply.get("error")
    if error == "not_found":
        print(reply.get("message") or reply.get("return"), file=sys.stderr)
        return 255
    if error in ("usage", "denied"):
        print(f"briny-call: {reply.get('message')}", file=sys.stderr)
        return 2
    if error is not None:
        print(reply.get("message") or f"Error running '{ns.fun}': {reply.get('return')}", file=sys.stderr)
        return 1
    retcode = reply.get("retcode")
    retcode = retcode if isinstance(retcode, int) and not isinstance(retcode, bool) else 1
    out = ns.out or reply.get("out") or "nested"
    return _show(ns, opts, reply.get("return"), retcode, str(out))


def _show(ns: argparse.Namespace, opts: dict[str, Any], ret: Any, retcode: int, out: str) -> int:
    """Print the result through the outputter; the exit status."""
    from briny.common.output import render_output

    out_opts = dict(opts)
    if ns.out_indent is not None:
        out_opts["output_indent"] = ns.out_indent
    color = True if ns.force_color else (False if ns.color is False else None)
    text = render_output({"local": ret}, out, out_opts, color=color)
    if ns.out_file:
        with open(ns.out_file, "a" if ns.out_file_append else "w", encoding="utf-8") as fh:  # Salt's modes
            fh.write(text + ("\n" if text and not text.endswith("\n") else ""))
    elif text:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()
    if retcode and not ns.retcode_passthrough:
        return 1
    return retcode


def main() -> None:
    try:
        code = run()
    except KeyboardInterrupt:
        print("briny-call: interrupted", file=sys.stderr)
        code = 130
    sys.exit(code)


if __name__ == "__main__":
    main()
