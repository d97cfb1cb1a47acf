#!/usr/bin/env bash
# The main job: a real master and three minions on loopback applying the example tree.
#
#   deploy/quickstart.sh          install briny into .venv, start briny-master and three
#                                 briny-minion daemons under a fresh temporary root, accept
#                                 their keys with briny-key, run `briny '*' test.ping` and
#                                 `briny '*' state.apply`, print the results and the events,
#                                 and stop everything it started
#   KEEP=1 deploy/quickstart.sh   keep the temporary root (configs, logs, files written)
#
# Nothing outside the temporary root is touched; the daemons listen on 127.0.0.1 only,
# on free ports picked at start, and are stopped by the pids this script recorded.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
PY=${PYTHON:-python3}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "quickstart: Python >= 3.11 is required" >&2; exit 2
fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
bin=$repo/.venv/bin

root=$(mktemp -d "${TMPDIR:-/tmp}/briny-qs.XXXXXX")
pids=()
stop_all() {
  for pid in "${pids[@]:-}"; do [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]:-}"; do
    [ -n "$pid" ] || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  if [ -z "${KEEP:-}" ]; then rm -rf "$root"; else echo "kept $root"; fi
}
trap stop_all EXIT

read -r pub_port ret_port < <("$bin/python" -c \
  'from briny.common.transport import free_ports; print(*free_ports(2))')

mkdir -p "$root/master"
cat > "$root/master/master" <<CONF
# The quick start's master: loopback only, keys accepted by briny-key below.
root_dir: $root/master
interface: 127.0.0.1
publish_port: $pub_port
ret_port: $ret_port
pki_dir: pki
cachedir: cache
sock_dir: sock
log_file: master.log
pidfile: master.pid
file_roots:
  base:
    - $repo/deploy/example/salt
pillar_roots:
  base:
    - $repo/deploy/example/pillar
CONF

roles=(web web db)
for i in 1 2 3; do
  mkdir -p "$root/minion$i"
  cat > "$root/minion$i/minion" <<CONF
# Quick-start minion $i: talks to the master above on loopback.
id: minion$i
root_dir: $root/minion$i
master: 127.0.0.1
master_port: $ret_port
publish_port: $pub_port
pki_dir: pki
cachedir: cache
sock_dir: sock
log_file: minion.log
pidfile: minion.pid
ping_interval: 2
acceptance_wait_time: 1
grains:
  role: ${roles[$((i - 1))]}
# No file_roots here: the state tree, its files and the pillar come from the master.
CONF
done

say() { printf '\n== %s\n' "$*"; }
mconf=$root/master

say "briny-master -c $mconf -d"
"$bin/briny-master" -c "$mconf" -d
pids+=("$(cat "$root/master/master.pid")")

say "briny-minion -d (minion1, minion2, minion3)"
for i in 1 2 3; do
  "$bin/briny-minion" -c "$root/minion$i" -d
  pids+=("$(cat "$root/minion$i/minion.pid")")
done

# the minions ask to be accepted: wait until all three keys are pending
for _ in $(seq 100); do
  n=$("$bin/briny-key" -c "$mconf" -L --out json | "$bin/python" -c \
      'import json,sys; print(len(json.load(sys.stdin).get("minions_pre", [])))')
  [ "$n" -ge 3 ] && break
  sleep 0.2
done
say "briny-key -L"
"$bin/briny-key" -c "$mconf" -L
say "briny-key -A -y"
"$bin/briny-key" -c "$mconf" -A -y

# watch the master's event bus while the jobs run
"$bin/briny-run" -c "$mconf" state.event > "$root/events.log" 2>&1 &
pids+=("$!")

# accepted minions re-authenticate within a ping interval or two
for _ in $(seq 60); do
  if "$bin/briny" -c "$mconf" '*' test.ping -t 2 --out quiet >/dev/null 2>&1; then break; fi
  sleep 0.5
done

say "briny '*' test.ping"
"$bin/briny" -c "$mconf" '*' test.ping
say "briny -G role:web test.ping"
"$bin/briny" -c "$mconf" -G role:web test.ping
say "briny '*' state.apply --state-output=terse"
"$bin/briny" -c "$mconf" '*' state.apply --state-output=terse -t 30

say "files written under each minion's root"
for i in 1 2 3; do
  [ -d "$root/minion$i/srv/example" ] || continue
  (cd "$root/minion$i/srv/example" && find . -type f | sort | sed "s|^\./|minion$i: |")
done

sleep 0.5
say "events seen on the master's bus (tag, then data)"
cut -c1-200 "$root/events.log"
