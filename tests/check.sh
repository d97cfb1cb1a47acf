#!/usr/bin/env bash
# The static checks CI runs before the suite (tests/run.sh): ruff lint, ruff format, mypy.
# Usage: tests/check.sh        Needs .venv with the test extra (tests/run.sh makes it).
# Runs every check, says which failed, and exits non-zero when any did.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
failed=()

echo "== ruff check"
"$BIN/ruff" check --quiet . || failed+=("ruff check")

echo "== ruff format --check"
"$BIN/ruff" format --check --quiet . || failed+=("ruff format (run: .venv/bin/ruff format .)")

# The sources install as briny.common, briny.master, ... from top-level folders, which mypy
# cannot map: link them under build/typecheck/briny/ (pyproject.toml's mypy_path) and report
# the errors under their real paths.
echo "== mypy"
tree=build/typecheck/briny
mkdir -p "$tree"
ln -sfn ../../../briny/__init__.py "$tree/__init__.py"
for pkg in common master minion states; do
  ln -sfn "../../../$pkg" "$tree/$pkg"
done
"$BIN/mypy" | sed "s#^$tree/\(common\|master\|minion\|states\)/#\1/#" || failed+=("mypy")

if [ ${#failed[@]} -gt 0 ]; then
  printf 'tests/check.sh: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "static checks passed"
