"""The names the loader injects into execution and state modules, declared for the checkers.

:mod:`briny.common.loader` sets ``__opts__``, ``__salt__``, ... as globals of
each module it loads (docs/DEVELOPING.md, "Modules"). Ruff and mypy cannot
see that, so a module declares the ones it uses by importing them from here
under ``TYPE_CHECKING``::

    from typing import TYPE_CHECKING

    if TYPE_CHECKING:
        from briny.common.dunders import __opts__, __salt__

Nothing imports this module at run time: the names below have no value (an
import outside ``TYPE_CHECKING`` fails with ImportError), so the loader's
globals are the only ones a module ever sees. ``tests/unit/test_imports.py``
checks that every import of it is guarded.
"""

from typing import Any

from .jobcontext import JobContext
from .loader import LazyLoader

__opts__: dict[str, Any]  # the configuration (minion opts, or the master's for a minion it renders for)
__grains__: dict[str, Any]
__pillar__: dict[str, Any]
__salt__: LazyLoader  # execution functions: __salt__["cmd.run_all"](...)
__states__: LazyLoader  # state functions (state modules only)
__context__: dict[str, Any]  # shared by the modules of one loader for one run
__job__: JobContext  # briny's: the job's runtime (common/jobcontext.py)
__salt_system_encoding__: str  # the encoding Salt's modules fall back to (utf-8)
# set by the engine before each state call (LazyLoader.inject)
__low__: dict[str, Any]
__env__: str
__running__: dict[str, Any]
__lowstate__: list[dict[str, Any]]
