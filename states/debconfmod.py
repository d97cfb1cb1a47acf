"""The ``debconf`` state module: pre-answer Debian package configuration questions.

``debconf.set`` sets the answers of one package from ``data``
(``{question: {type: ..., value: ...}}``); ``debconf.set_file`` loads a whole
selections file (``source``, rendered with ``template`` when given). The work
goes through the ``debconf`` execution module (``debconf-utils``).

Results follow Salt 3007 (checked against the reference on Debian 12, live,
test mode and second runs): changes ``{question: value}`` (``(password
hidden)`` for passwords), in test mode ``{question: "New value: v"}``;
comments ``Unchanged answers: q1 q2 `` for the questions already answered
so, ``All specified answers are already set`` when nothing changes, ``Some
settings failed to be applied.`` (the change reads ``Failed to set!``);
boolean values are written ``true`` / ``false``. ``set_file`` says
``Debconf selections were set.`` (test mode: ``Debconf selections would
have been set.``, whatever the file holds, as Salt), ``Unable to set
debconf selections from file.`` when the file is missing or refused.

Differences from Salt, on purpose: a password is never shown, not even in
test mode (Salt shows ``New value: <the password>`` there); ``data`` that is
not a mapping of ``{type, value}`` mappings fails the state with a message
naming the question (Salt stops with a traceback).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from ._access import _testing

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


__virtualname__ = "debconf"


def _salt(fun: str) -> Any:
    return __salt__[f"debconf.{fun}"]


def _bad_data(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "data must be a mapping of question: {type: ..., value: ...}"
    for key, args in data.items():
        if not isinstance(args, dict) or "type" not in args or "value" not in args:
            return f"The answer to {key} must be a mapping with 'type' and 'value'"
    return None


def set(name: str, data: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Make sure package ``name``'s questions have the answers in ``data``."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    problem = _bad_data(data)
    if problem:
        ret.update(result=False, comment=problem)
        return ret
    current = _salt("show")(name)
    for key, args in data.items():
        type_, value = args["type"], args["value"]
        if type_ == "boolean":  # debconf's booleans are lower case
            value = "true" if value else "false"
        shown = "(password hidden)" if type_ == "password" else f"{value}"
        if current is not None and [key, type_, str(value)] in current:
            if ret["comment"] == "":
                ret["comment"] = "Unchanged answers: "
            ret["comment"] += f"{key} "
        elif _testing():
            ret["result"] = None
            ret["changes"][key] = f"New value: {shown}"
        elif _salt("set")(name, key, type_, value):
            ret["changes"][key] = shown
        else:
            ret["result"] = False
            ret["comment"] = "Some settings failed to be applied."
            ret["changes"][key] = "Failed to set!"
    if not ret["changes"]:
        ret["comment"] = "All specified answers are already set"
    return ret


def set_file(
    name: str, source: Any = None, template: Any = None, context: Any = None, defaults: Any = None, **kwargs: Any
) -> dict[str, Any]:
    """Load the answers in the selections file ``source`` (a template with ``template``)."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    if context is None:
        context = {}
    elif not isinstance(context, dict):
        ret.update(result=False, comment="Context must be formed as a dict")
        return ret
    if defaults is None:
        defaults = {}
    elif not isinstance(defaults, dict):
        ret.update(result=False, comment="Defaults must be formed as a dict")
        return ret
    if _testing():
        ret.update(result=None, comment="Debconf selections would have been set.")
        return ret
    if not source:
        ret.update(result=False, comment="debconf.set_file needs a source: the selections file")
        return ret
    saltenv = str(kwargs.get("saltenv") or globals().get("__env__") or "base")
    if template:
        done = _salt("set_template")(source, template, context, defaults, saltenv=saltenv)
    else:
        done = _salt("set_file")(source, saltenv=saltenv)
    if done:
        ret["comment"] = "Debconf selections were set."
    else:
        ret.update(result=False, comment="Unable to set debconf selections from file.")
    return ret
