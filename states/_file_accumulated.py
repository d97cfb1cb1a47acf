"""``file.accumulated``: text gathered for a file that another ``file`` state of the run writes.

Part of the ``file`` state module (its private file, loaded with its dunders). As in Salt
3007, an accumulator is ``name`` (its key) and ``filename`` (the file it feeds); each
``file.accumulated`` adds its ``text`` (a string, or a list of them; a text already there is
not added twice) and must name its consumer with ``require_in`` or ``watch_in`` (a ``file``
state), else it fails as "Orphaned accumulator NAME in SLS:ID". The consumer runs after it
(the requisite) and finds the texts of the run:

- ``file.managed`` with a template gets ``accumulator`` = ``{name: [texts]}`` of its file;
- ``file.blockreplace`` adds the texts of the accumulators of its file that name it (all of
  them when none does), one line each, after its ``content``.

The accumulators live in the state run's ``__context__`` (one run, one set): nothing is kept
on disk between runs, and test mode gathers them as a real run does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from briny.common.dunders import __context__

_KEY = "file.accumulators"


def _store() -> dict[str, dict[str, Any]]:
    """{"data": {filename: {name: [texts]}}, "deps": {filename: {name: [consumer ids]}}} of this run."""
    store: dict[str, dict[str, Any]] = __context__.setdefault(_KEY, {"data": {}, "deps": {}})
    return store


def accumulated(name: str, filename: str, text: Any, **kwargs: Any) -> dict[str, Any]:
    """Add ``text`` to the accumulator ``name`` of ``filename``, for the ``file`` state it requires in."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    low = globals().get("__low__") or {}
    deps = [
        *(_as_list(kwargs.get("require_in") or low.get("require_in"))),
        *_as_list(kwargs.get("watch_in") or low.get("watch_in")),
    ]
    consumers = [d for d in deps if isinstance(d, dict) and "file" in d]
    if not consumers:
        ret["result"] = False
        ret["comment"] = f"Orphaned accumulator {name} in {low.get('__sls__')}:{low.get('__id__')}"
        return ret
    if not filename:
        ret["result"] = False
        ret["comment"] = "Missing filename: the file whose state consumes the accumulator"
        return ret
    texts = text if isinstance(text, list) else [text]
    store = _store()
    have = store["data"].setdefault(str(filename), {}).setdefault(str(name), [])
    ids = store["deps"].setdefault(str(filename), {}).setdefault(str(name), [])
    for dep in deps:
        if isinstance(dep, dict):
            ids.extend(str(v) for v in dep.values())
    for chunk in texts:
        if chunk not in have:
            have.append(chunk)
    ret["comment"] = f"Accumulator {name} for file {filename} was charged by text"
    return ret


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _template_context(filename: str, context: Any) -> Any:
    """``context`` with ``accumulator`` (the accumulators of ``filename``) when there are any."""
    found = _store()["data"].get(filename)
    if not found:
        return context
    merged = dict(context) if isinstance(context, dict) else {}
    merged["accumulator"] = found
    return merged


def _block_content(filename: str, content: Any) -> Any:
    """``content`` and, one line each, the texts of ``filename``'s accumulators that name this
    state (``__low__``'s id) as their consumer, or of all of them when none does."""
    found = _store()["data"].get(filename)
    if not found:
        return content
    low = globals().get("__low__") or {}
    deps = _store()["deps"].get(filename, {})
    names = [n for n in deps if str(low.get("__id__")) in deps[n] and n in found] or list(found)
    text = "" if content is None else str(content)
    for acc in names:
        for line in found[acc]:
            text = str(line) if text == "" else f"{text}\n{line}"
    return text
