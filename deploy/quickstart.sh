#!/usr/bin/env bash
# The main job: install briny into .venv and apply the example state tree.
#
#   deploy/quickstart.sh          apply deploy/example/ with briny-call --local
#   KEEP=1 deploy/quickstart.sh   keep the temporary root afterwards
#
# Everything is written under a fresh temporary root; nothing outside it is
# touched. (The issue "Master and minion over ZeroMQ" turns this into a real
# master and minions on loopback.)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
PY=${PYTHON:-python3}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "quickstart: Python >= 3.11 is required" >&2; exit 2
fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e .

root=$(mktemp -d "${TMPDIR:-/tmp}/briny-quickstart.XXXXXX")
cleanup() { if [ -z "${KEEP:-}" ]; then rm -rf "$root"; else echo "kept $root"; fi; }
trap cleanup EXIT
mkdir -p "$root/etc"
cat > "$root/etc/minion" <<CONF
id: quickstart-minion
file_client: local
root_dir: $root
file_roots:
  base:
    - $repo/deploy/example/salt
pillar_roots:
  base:
    - $repo/deploy/example/pillar
CONF

call() { .venv/bin/briny-call --local -c "$root/etc" "$@"; }

echo "== briny-call --local state.apply   (first run: everything changes)"
call state.apply
echo
echo "== briny-call --local state.apply   (second run: nothing to change)"
call state.apply --state-output=terse
echo
echo "== files written under $root/srv/example"
(cd "$root/srv/example" && find . -type f | sort | while read -r f; do echo "--- $f"; cat "$f"; done)
