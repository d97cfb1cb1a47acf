#!/usr/bin/env python3
"""Rewrite the list of Salt config keys briny ignores in docs/migrating.md from common/saltkeys.py.

    .venv/bin/python dev/migrating_keys.py      # after changing common/saltkeys.py or config.py

The list sits between the ``<!-- ignored keys: begin -->`` and ``<!-- ignored keys: end -->``
markers; tests/unit/common/test_saltkeys.py fails while it differs from the table.
"""

from __future__ import annotations

from pathlib import Path

from briny.common import saltkeys

DOC = Path(__file__).resolve().parents[1] / "docs" / "migrating.md"
BEGIN, END = "<!-- ignored keys: begin -->\n", "<!-- ignored keys: end -->"


def main() -> None:
    text = DOC.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{BEGIN}\n{saltkeys.markdown()}\n{END}{tail}")
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
