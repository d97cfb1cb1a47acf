"""What ``briny`` (and ``briny-cp``, orchestrate) make of a minion's return: the
:class:`MinionResult` one event (or its absence) becomes, and the :class:`Printer` that shows
results as they arrive (outputters, ``--static``, ``--summary``, ``sys.doc``, the live progress
lines of :mod:`briny.master.liveview`).

Pure presentation: no I/O but the stream it is given; :mod:`briny.master.opcli` drives it."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any, TextIO

from briny.common.output import HIGHSTATE_FUNCS
from briny.master.busshape import sent

NO_RESPONSE = (
    "Minion did not return. [No response]\nThe minions may not have all finished running and "
    "any remaining minions will return upon completion. To look up the return data for this "
    "job later, run the following command:\n\nbriny-run jobs.lookup_jid {jid}"
)


# -- results --------------------------------------------------------------------------


@dataclass
class MinionResult:
    """One minion's answer (or its absence) as the CLI prints it."""

    id: str
    jid: str
    ret: Any
    retcode: int = 0
    out: str | None = None
    success: bool = True
    returned: bool = True


def _states_failed(ret: Any) -> bool:
    if isinstance(ret, list):  # render/compile errors
        return True
    if isinstance(ret, dict):
        for chunk in ret.values():
            if isinstance(chunk, dict) and "result" in chunk and chunk.get("result") is False:
                return True
    return False


def result_from_event(fun: str, data: dict[str, Any]) -> MinionResult:
    ret = data.get("return")
    retcode = data.get("retcode", 0)
    if isinstance(retcode, dict):
        retcode = max([v for v in retcode.values() if isinstance(v, int)] or [0])
    if not isinstance(retcode, int) or isinstance(retcode, bool):
        retcode = 1 if retcode else 0
    success = data.get("success", True) is not False and retcode == 0
    if fun in HIGHSTATE_FUNCS and _states_failed(ret):
        success = False
    if isinstance(ret, bool) and not ret and fun == "test.ping":
        success = False
    out = data.get("out") if isinstance(data.get("out"), str) else None
    return MinionResult(
        str(data.get("id", "")),
        str(data.get("jid", "")),
        ret,
        retcode if retcode else (0 if success else 1),
        out,
        success,
    )


def no_return(minion_id: str, jid: str) -> MinionResult:
    return MinionResult(minion_id, jid, NO_RESPONSE.format(jid=jid), 1, "nested", False, False)


# -- printing -------------------------------------------------------------------------


@dataclass
class Printer:
    ns: argparse.Namespace
    opts: dict[str, Any]
    fun: str
    stdout: TextIO
    collected: dict[str, Any] = field(default_factory=dict)
    live: Any = None  # a LiveView on a terminal, else None
    seen: list[MinionResult] = field(default_factory=list)  # every result shown, for --summary

    def counts(self, result: MinionResult) -> bool:
        """Does ``result`` count (for the exit status and the summary)? ``--hide-timeout`` drops
        the minions that did not return, as Salt does."""
        return result.returned or not self.ns.hide_timeout

    def progress(self, jid: str, minion_id: str, data: dict[str, Any]) -> None:
        """One progress event's data as the master's bus carries it (Salt's wrapper: what the minion
        sent is its ``data``)."""
        if self.live is not None:
            self.live.update(minion_id, sent(data))

    def tick(self) -> None:
        if self.live is not None:
            self.live.tick()

    def outputter(self, result: MinionResult | None) -> str:
        if self.ns.out:
            return str(self.ns.out)
        if result is not None and result.out:
            return result.out
        return "highstate" if self.fun in HIGHSTATE_FUNCS else "nested"

    def emit(self, data: dict[str, Any], result: MinionResult | None) -> None:
        from briny.common.output import render_output

        out = self.outputter(result)
        text = render_output(data, out, self.opts)
        if text and out != "quiet":
            if self.live is not None:
                self.live.clear()
            self.stdout.write(text + "\n")
            self.stdout.flush()
        if self.live is not None:
            self.live.draw()

    def result(self, result: MinionResult, extra: dict[str, Any] | None = None) -> None:
        if self.live is not None:
            self.live.forget(result.id)
        if not self.counts(result):
            return
        self.seen.append(result)
        if self.ns.static or self.fun == "sys.doc":
            if self.live is not None:
                self.live.draw()
            self.collected[result.id] = result.ret
            return
        self.emit({result.id: result.ret, **(extra or {})}, result)

    def finish(self) -> None:
        if self.live is not None:
            self.live.forget_all()
        if self.fun == "sys.doc":
            self.docs()
        elif self.ns.static and self.collected:
            self.emit(self.collected, None)

    def docs(self) -> None:
        """``sys.doc`` as Salt prints it: the docstrings of every minion merged (the first
        minion's text of each function), ``name:``, the text and a blank line per function; with
        ``--out``, each ``{name: text}`` through that outputter."""
        from briny.common.output import render_output

        merged: dict[str, Any] = {}
        for ret in self.collected.values():
            if isinstance(ret, dict):
                for fun, text in ret.items():
                    if text and fun not in merged:
                        merged[fun] = text
        for fun in sorted(merged):
            if self.ns.out:
                self.stdout.write(render_output({fun: merged[fun]}, "nested", self.opts) + "\n")
            else:
                self.stdout.write(f"{fun}:\n{merged[fun]}\n\n")
        self.stdout.flush()

    def summary(self, stdout: TextIO) -> None:
        """Salt's ``--summary`` block (on stdout, after the returns; not with ``--out``)."""
        returned = [r for r in self.seen if r.returned]
        silent = [r.id for r in self.seen if not r.returned]
        failed = [r.id for r in returned if r.retcode]
        lines = [
            "\n",
            "-------------------------------------------",
            "Summary",
            "-------------------------------------------",
            f"# of minions targeted: {len(self.seen)}",
            f"# of minions returned: {len(returned)}",
            f"# of minions that did not return: {len(silent)}",
            f"# of minions with errors: {len(failed)}",
        ]
        if self.ns.verbose and silent:
            lines.append("Minions not responding: " + " ".join(silent))
        if self.ns.verbose and failed:
            lines.append("Minions with failures: " + " ".join(failed))
        lines.append("-------------------------------------------")
        stdout.write("\n".join(lines) + "\n")
        stdout.flush()
