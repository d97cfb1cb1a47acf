"""The state functions whose returns Salt prints with the highstate outputter.

A module of its own so the minion's executor and the operator's CLI can ask without importing
every outputter (:mod:`briny.common.output` re-exports it).
"""

from __future__ import annotations

# Functions whose returns Salt prints with the highstate outputter (the state module's
# __outputter__, and the orchestrate runner), when the return does not name one.
HIGHSTATE_FUNCS = frozenset(
    {
        "state.apply",
        "state.highstate",
        "state.sls",
        "state.single",
        "state.low",
        "state.sls_id",
        "state.top",
        "state.template",
        "state.template_str",
        "state.test",
        "state.pkg",
        "state.request",
        "state.run_request",
        "state.check_request",
        "state.orchestrate",
    }
)
