"""The ``highstate`` outputter: state returns as Salt 3007 prints them.

Runs in the CLIs (``briny-call``, ``briny``, ``briny-run``) whenever a state
function returns (the caller passes ``out="highstate"``).

Input is the whole return, ``{host: host_return, ...}``. Per host:

- a dict of state results (keys ``mod_|-id_|-name_|-fun``) prints one block
  per state, ordered by ``__run_num__``, then the ``Summary for HOST`` block;
- a list (render and compile errors) prints ``Data failed to compile:`` and
  each error under a ``----------`` line;
- any other value prints its text line by line under ``HOST:``.

``opts`` keys read here: ``state_output`` (full, terse, mixed, changes and the
``_id`` forms), ``state_verbose``, ``state_output_diff``,
``state_output_profile``, ``state_output_pct``. Data that is not a state
return at all is handed back to the caller (``FallbackToNested``), which prints
it with the nested outputter, as Salt does when its highstate printer fails.
"""

from __future__ import annotations

import pprint
import textwrap
from typing import Any

from .colors import get_colors
from ..exceptions import FallbackToNested
from .nested import NestedDisplay

_SEP = "_|-"
_STATE_MODES = ("full", "terse", "mixed", "changes")


def _is_state(ret: Any) -> bool:
    """Salt draws a host entry as a state only when it is a mapping with a result."""
    return isinstance(ret, dict) and "result" in ret


def _check_state(key: Any, ret: dict[str, Any]) -> None:
    if not isinstance(key, str) or len(key.split(_SEP)) < 3:
        raise FallbackToNested(f"{key!r} is not a state key")
    for needed in ("comment", "changes"):
        if needed not in ret:
            raise FallbackToNested(f"state return has no {needed!r}")
    if "duration" in ret:
        try:
            float(ret["duration"])
        except (TypeError, ValueError) as exc:
            raise FallbackToNested("duration is not a number") from exc


def _as_lists(value: Any) -> Any:
    """Tuples as lists, all the way down (Salt decodes the data first)."""
    if isinstance(value, (list, tuple)):
        return [_as_lists(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_lists(item) for key, item in value.items()}
    return value


def _nested_hosts(changes: Any) -> dict[str, Any] | None:
    """The per-minion state runs an orchestration step (``salt.state``) keeps in its changes
    (``{"out": "highstate", "ret": {minion: ...}}``), else None."""
    if isinstance(changes, dict) and changes.get("out") == "highstate" and isinstance(changes.get("ret"), dict):
        hosts: dict[str, Any] = changes["ret"]
        return hosts
    return None


def _changed(changes: Any) -> bool:
    """Whether a state's changes count as a change, as Salt counts them: an orchestration step's
    only when one of its minions' states changed something (or returned plain text)."""
    hosts = _nested_hosts(changes)
    if hosts is None:
        return bool(changes)
    for data in hosts.values():
        if isinstance(data, (int, str)):  # False (a minion that did not return) too, as Salt
            return True
        if isinstance(data, dict) and any(_is_state(r) and _changed(r.get("changes")) for r in data.values()):
            return True
    return False


def _duration(ret: dict[str, Any]) -> str:
    """The Duration field: milliseconds as the state reported them."""
    return f"{ret['duration']} ms" if "duration" in ret else ""


class HighstateDisplay:
    """Draw state returns for one set of options and one colour table."""

    def __init__(self, opts: dict[str, Any], color: bool) -> None:
        self.colors = get_colors(color)
        self.nested = NestedDisplay(self.colors)
        mode = str(opts.get("state_output", "full") or "full").lower()
        self.by_id = mode.endswith("_id")
        base = mode[: -len("_id")] if self.by_id else mode
        self.mode = base if base in _STATE_MODES else "full"
        self.verbose = bool(opts.get("state_verbose", True))
        self.hide_unchanged = bool(opts.get("state_output_diff", False))
        self.profile = bool(opts.get("state_output_profile", True))
        self.pct = bool(opts.get("state_output_pct", False))

    # -- entry point -------------------------------------------------------
    def render(self, data: Any) -> str:
        # Orchestration wraps the per-host data in a "data" key.
        if isinstance(data, dict) and "data" in data:
            data = data["data"]
        if data is None or isinstance(data, str):
            return str(data)
        if not isinstance(data, dict):
            raise FallbackToNested("highstate data is not a mapping of hosts")
        for host, host_data in data.items():
            if not isinstance(host, str):
                raise FallbackToNested(f"host name {host!r} is not text")
            if isinstance(host_data, dict):
                for key, ret in host_data.items():
                    if _is_state(ret):
                        _check_state(key, ret)
        return "\n".join(self._host(str(host), host_data) for host, host_data in data.items())

    # -- one host ----------------------------------------------------------
    def _host(self, host: str, data: Any) -> str:
        c = self.colors
        if isinstance(data, list):
            return self._compile_errors(host, data)
        if isinstance(data, dict):
            return self._states(host, data)
        if not isinstance(data, (int, str)):
            # None, floats, tuples...: Salt prints the host name alone
            return f"{c['GREEN']}{host}:{c['ENDC']}"
        lines = [f"{c['CYAN']}{host}:{c['ENDC']}"]
        for line in str(data).splitlines():
            lines.append(f"{c['GREEN']}    {line}{c['ENDC']}")
        return "\n".join(lines)

    def _compile_errors(self, host: str, errors: list[Any]) -> str:
        c = self.colors
        red, end = c["LIGHT_RED"], c["ENDC"]
        lines = [f"{red}{host}:{end}", f"    {red}Data failed to compile:{end}"]
        for err in errors:
            lines.append(f"{red}----------\n    {_as_lists(err)}{end}")
        return "\n".join(lines)

    def _states(self, host: str, data: dict[str, Any]) -> str:
        c = self.colors
        body: list[str] = []
        states = {key: ret for key, ret in data.items() if _is_state(ret)}
        # Salt lists entries without a run number last one first.
        for ret in reversed(list(data.values())):
            if isinstance(ret, dict) and ret and "__run_num__" not in ret:
                body.append(
                    "The State execution failed to record the order in which all "
                    "states were executed. The state return missing data is:"
                )
                body.append(pprint.pformat(ret))
        order = sorted(states, key=lambda k: states[k].get("__run_num__", 0))

        counts: dict[Any, int] = {}
        changed = 0
        warned = 0
        durations = 0.0
        hcolor = c["GREEN"]
        for key in order:
            ret = states[key]
            result = ret["result"]
            counts[result] = counts.get(result, 0) + 1
            if _changed(ret["changes"]):
                changed += 1
            if "duration" in ret:
                durations += float(ret["duration"])
            if result is False:
                hcolor = c["RED"]
            elif result is None:
                hcolor = c["LIGHT_YELLOW"]
            block = self._state(key, ret)
            if block and not self._terse(ret) and "warnings" in ret:
                warned += 1
            body.extend(block)

        lines = [f"{hcolor}{host}:{c['ENDC']}"]
        lines.extend(body)
        lines.extend(self._summary(host, counts, changed, warned, durations))
        return "\n".join(lines)

    # -- one state ---------------------------------------------------------
    def _state_color(self, ret: dict[str, Any]) -> str:
        c = self.colors
        result = ret["result"]
        if result is False:
            return c["RED"]
        if result is None:
            return c["LIGHT_YELLOW"]
        if ret["changes"]:
            return c["CYAN"]
        return c["GREEN"]

    def _hidden(self, ret: dict[str, Any]) -> bool:
        quiet = not self.verbose or self.hide_unchanged
        return quiet and ret["result"] is True and not _changed(ret["changes"])

    def _terse(self, ret: dict[str, Any]) -> bool:
        if self.mode == "terse":
            return True
        if self.mode == "mixed":
            return ret["result"] is not False
        if self.mode == "changes":
            return ret["result"] is True and not ret["changes"]
        return False

    def _state(self, key: str, ret: dict[str, Any]) -> list[str]:
        if self._hidden(ret):
            return []
        comps = key.split(_SEP)
        if self._terse(ret):
            return [self._terse_line(comps, ret)]
        return self._full_block(comps, ret)

    def _terse_line(self, comps: list[str], ret: dict[str, Any]) -> str:
        c = self.colors
        tcolor = self._state_color(ret)
        result = ret["result"]
        if result is False:
            word = "Failed"
        elif result is None:
            word = "Differs"
        elif ret["changes"]:
            word = "Changed"
        else:
            word = "Clean"
        name = comps[1] if self.by_id else comps[2]
        text = f" Name: {name} - Function: {comps[0]}.{comps[-1]} - Result: {word}"
        if self.profile:
            if "start_time" in ret:
                if "duration" not in ret:
                    # Salt's terse line needs both; it prints the data nested.
                    raise FallbackToNested("terse state with start_time but no duration")
                text += f" - Started: {ret['start_time']} - Duration: {_duration(ret)}"
        line = f" {tcolor}{text}{c['ENDC']}"
        if "warnings" in ret:
            listed = "\n".join(str(w) for w in ret["warnings"])
            line = f"{c['LIGHT_RED']}Warnings:\n{listed}{c['ENDC']}{line}"
        return line

    def _full_block(self, comps: list[str], ret: dict[str, Any]) -> list[str]:
        c = self.colors
        tcolor, end = self._state_color(ret), c["ENDC"]
        ind = "    "
        lines = [f"{tcolor}----------{end}", f"{ind}{tcolor}      ID: {comps[1]}{end}"]
        lines.append(f"{ind}{tcolor}Function: {comps[0]}.{comps[-1]}{end}")
        if not self.by_id and comps[1] != comps[2]:
            lines.append(f"{ind}{tcolor}    Name: {comps[2]}{end}")
        lines.append(f"{ind}{tcolor}  Result: {ret['result']}{end}")
        comment = ("\n" + " " * 14).join(str(ret["comment"]).strip().split("\n"))
        lines.append(f"{ind}{tcolor} Comment: {comment}{end}")
        if self.profile and "start_time" in ret:
            lines.append(f"{ind}{tcolor} Started: {ret['start_time']}{end}")
            lines.append(f"{ind}{tcolor}Duration: {_duration(ret)}{end}")
        lines.append(f"{tcolor}     Changes:   {self._changes(ret['changes'])}{end}")
        if "warnings" in ret:
            lines.append(self._warnings(ret["warnings"]))
        return lines

    def _changes(self, changes: Any) -> str:
        if not isinstance(changes, dict):
            return f"Invalid Changes data: {changes}"
        if not changes:
            return ""
        if _nested_hosts(changes) is not None:  # an orchestration step's state runs, per minion
            return "".join(
                "\n" + "\n".join(" " * 14 + line for line in self._host(str(host), data).splitlines())
                for host, data in changes["ret"].items()
            )
        return "\n" + self.nested.render(changes, 14).rstrip()

    def _warnings(self, warnings: Any) -> str:
        c = self.colors
        text = textwrap.fill(
            " ".join(warnings),
            width=80,
            initial_indent="    Warnings: ",
            subsequent_indent=" " * 14,
        )
        if not text:
            text = "    Warnings: "
        return f"{text[:3]}{c['LIGHT_RED']}{text[3:]}{c['ENDC']}"

    # -- summary -----------------------------------------------------------
    def _summary(self, host: str, counts: dict[Any, int], changed: int, warned: int, durations: float) -> list[str]:
        c = self.colors
        end = c["ENDC"]
        tallies = list(counts.values()) + ([warned] if warned else [])
        width = max((len(str(n)) for n in tallies), default=0)
        dashes = "-" * (width + 11)
        total = sum(counts.values())
        failed = counts.get(False, 0)
        unchanged = counts.get(None, 0)
        succeeded = counts.get(True, 0) + unchanged
        for result, num in counts.items():
            if result not in (True, False, None):
                succeeded += num

        lines = [f"{c['CYAN']}\nSummary for {host}\n{dashes}{end}"]
        extra = []
        if unchanged:
            extra.append(f"{c['LIGHT_YELLOW']}unchanged={unchanged}{end}")
        if changed:
            extra.append(f"{c['GREEN']}changed={changed}{end}")
        line = f"{c['GREEN']}Succeeded: {str(succeeded).rjust(width)}{end}"
        if extra:
            line += " (" + ", ".join(extra) + ")"
        lines.append(line)
        fcolor = c["RED"] if failed else c["CYAN"]
        lines.append(f"{fcolor}Failed: {str(failed).rjust(width + 3)}{end}")
        if self.pct and total:
            success_pct = round(succeeded / total * 100, 2)
            failure_pct = round(failed / total * 100, 2)
            lines.append(f"{c['GREEN']}Success %: {success_pct}{end}")
            lines.append(f"{fcolor}Failure %: {failure_pct}{end}")
        if warned:
            lines.append(f"{c['LIGHT_RED']}Warnings: {str(warned).rjust(width + 1)}{end}")
        lines.append(f"{c['CYAN']}{dashes}\nTotal states run: {str(total).rjust(width + 4)}{end}")
        if self.profile:
            unit = "ms"
            if durations > 999:
                durations /= 1000
                unit = "s"
            amount = f"{durations:.3f}".rjust(width + 6)
            lines.append(f"{c['CYAN']}Total run time: {amount} {unit}{end}")
        return lines


def render_highstate(data: Any, opts: dict[str, Any], color: bool) -> str:
    """Text of state returns; raises ``FallbackToNested`` for anything else."""
    return HighstateDisplay(opts, color).render(data)
