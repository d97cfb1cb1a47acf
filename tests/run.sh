#!/usr/bin/env bash
# Set up (or update) .venv with briny and its test extra, run the static checks (tests/check.sh:
# ruff, mypy), then the whole suite under coverage, with the floor in pyproject.toml.
# Usage: tests/run.sh [pytest args...]     Exits non-zero on any failure.
# A part of the suite (a path, -k, -m 'not host') covers less: add --no-cov (or
# --cov-fail-under=0). BRINY_NO_CHECKS=1 skips the static checks.
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
# As root the suite does real host work (tests marked `host`: packages, repositories, users,
# services, throwaway database servers); the Debian tools those tests need are installed here
# when missing, in one apt-get run. BRINY_TEST_NO_INSTALL=1 installs nothing (the tests that
# need a missing tool then skip, saying why); `tests/run.sh -m 'not host'` skips the host work.
missing=()
need() { # need PACKAGE PROBE...: PACKAGE is missing unless a PROBE (a command, or a path glob) exists
  local pkg=$1 probe
  shift
  for probe in "$@"; do
    if [[ $probe == /* ]]; then
      compgen -G "$probe" >/dev/null && return 0
    else
      command -v "$probe" >/dev/null 2>&1 && return 0
    fi
  done
  missing+=("$pkg")
}
if [ "$(id -u)" = 0 ] && [ -z "${BRINY_TEST_NO_INSTALL:-}" ] && command -v apt-get >/dev/null 2>&1; then
  need cron crontab
  need postgresql '/usr/lib/postgresql/*/bin/initdb'
  need mariadb-server /usr/sbin/mariadbd
  need debconf-utils debconf-get-selections
  need apt-utils apt-ftparchive
  need bind9-dnsutils dig
  need ruby gem
  need rpm rpmbuild # the dnf tests: RPMs built, published and installed into a throwaway root
  need dnf dnf
  need dnf-plugins-core /usr/lib/python3/dist-packages/dnf-plugins/versionlock.py
  need createrepo-c createrepo_c
  need git git
  need openssh-server /usr/sbin/sshd # gitfs over ssh:// (tests/unit/master/test_gitfs.py)
  apt_install() { # apt_install [APT-GET OPTION...] -- PACKAGE...
    local opts=()
    while [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    [ $# -gt 0 ] || return 0
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${opts[@]}" "$@" >/dev/null \
      || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${opts[@]}" "$@" >/dev/null; } \
      || echo "tests/run.sh: could not install $*; the tests that need them will be skipped" >&2
  }
  apt_install -- "${missing[@]}"
  missing=()
  need rbenv rbenv # without its recommended ruby-build, which would bring a compiler
  apt_install --no-install-recommends -- "${missing[@]}"
fi
checks=0
if [ -z "${BRINY_NO_CHECKS:-}" ]; then
  bash tests/check.sh || checks=$?
fi
# Coverage of the code the suite runs in its own process (daemons and briny-call started as
# processes are measured only with BRINY_COV_SUBPROCESS=subprocess, see docs/DEVELOPING.md); the
# full report goes to build/coverage.md.
tests=0
.venv/bin/python -m pytest -q --cov --cov-report=markdown:build/coverage.md "$@" || tests=$?
if [ "$checks" -ne 0 ]; then
  echo "tests/run.sh: the static checks failed (tests/check.sh, above)" >&2
  [ "$tests" -ne 0 ] || tests=1
fi
exit "$tests"
