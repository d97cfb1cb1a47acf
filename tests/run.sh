#!/usr/bin/env bash
# Set up (or update) .venv with briny and its test extra, then run the whole suite.
# Usage: tests/run.sh [pytest args...]     Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "tests/run.sh: Python >= 3.11 is required ($PY is $("$PY" -V 2>&1))" >&2
  exit 2
fi
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
# The system-state tests manage real crontabs: install Debian's cron when it is missing.
if [ "$(id -u)" = 0 ] && ! command -v crontab >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q cron >/dev/null \
    || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q cron >/dev/null; } \
    || echo "tests/run.sh: could not install cron; crontab tests will be skipped" >&2
fi
# The debconf tests need Debian's debconf-utils (debconf-get-selections), the pkgrepo tests apt-ftparchive.
for tool in debconf-get-selections:debconf-utils apt-ftparchive:apt-utils; do
  if [ "$(id -u)" = 0 ] && ! command -v "${tool%%:*}" >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${tool#*:}" >/dev/null \
      || echo "tests/run.sh: could not install ${tool#*:}; its tests will be skipped" >&2
  fi
done
exec .venv/bin/python -m pytest -q "$@"
