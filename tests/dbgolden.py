"""The database golden corpora (``tests/golden/postgres``, ``tests/golden/mysql``):
shared by the recorder (``dev/record_db_golden.py``, runs Salt) and the test
(``tests/integration/test_db_golden.py``, runs briny).

Cases follow ``salt-golden.py``'s convention (``cases/NAME.sls``, ``lib/``
is a helper) and reach a throwaway server started for the session: the
server's values replace placeholders in the case files (``@PGPORT@``,
``@PGPASS@``, ``@PGROOT@``, ``@PGUSER@``, ``@PGDEADPORT@``; ``@MY...@`` for
MariaDB, see each server's ``substitutions()``) and are masked back in the
results. ``expected/NAME.json`` holds ``{"run", "test", "low"}`` as
``salt-golden.py`` writes them, run in that order against one server.

Salt turns an exception raised in a state into a traceback in the comment;
:func:`normalize` keeps only the exception's message (both sides), since
briny fails those states with the message itself.
"""

from __future__ import annotations

import pathlib
import re
import sys

GOLDEN = pathlib.Path(__file__).resolve().parent / "golden"
sys.path.insert(0, str(GOLDEN))
import goldenlib  # noqa: E402 - found on the path set just above

RUNS = ("run", "test", "low")
_EXC = re.compile(
    r"^An exception occurred in this state: Traceback \(most recent call last\):.*\n(?:\w+\.)*\w+: (.*?)\n?$", re.S
)


def cases_dir(db: str) -> pathlib.Path:
    return GOLDEN / db / "cases"


def expected_dir(db: str) -> pathlib.Path:
    return GOLDEN / db / "expected"


def cases(db: str) -> list[str]:
    return goldenlib.requisite_cases(cases_dir(db))


# put in place but never masked back: a system user name ("postgres") is part of too many other words
NOT_MASKED = frozenset({"@PGUSER@", "@MYUSER@"})


def unmask(obj, placeholders):
    """Put the markers back in place of the server's values (longest value first); an integer
    equal to one (a port given unquoted) becomes its marker too."""
    pairs = sorted(
        ((value, marker) for marker, value in placeholders if marker not in NOT_MASKED), key=lambda p: -len(p[0])
    )
    return goldenlib.mask(_ints(obj, dict(pairs)), pairs)


def _ints(obj, values):
    if isinstance(obj, dict):
        return {k: _ints(v, values) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_ints(v, values) for v in obj]
    if isinstance(obj, int) and not isinstance(obj, bool) and str(obj) in values:
        return values[str(obj)]
    return obj


def normalize(obj):
    """Comments holding a state's traceback reduced to the exception's message."""
    if isinstance(obj, dict):
        return {
            k: (_EXC.sub(r"\1", v) if k == "comment" and isinstance(v, str) else normalize(v)) for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [normalize(v) for v in obj]
    return obj
