#!/usr/bin/env bash
# Run the reference Salt (installed by ../shared/tools/salt-reference.sh) masterless
# on a state tree, for side-by-side checks while developing. Never used by tests.
#   dev/saltref.sh TREE [PILLAR_TREE] -- salt-call args...
#   dev/saltref.sh deploy/example -- state.show_low_sls example --out=json
set -euo pipefail
tree=$(realpath "$1"); shift
pillar=""
if [ "${1:-}" != "--" ] && [ -n "${1:-}" ]; then pillar=$(realpath "$1"); shift; fi
[ "${1:-}" = "--" ] && shift
work=$(mktemp -d /tmp/saltref-run.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/etc"
{
  echo "file_client: local"
  echo "file_roots: {base: [$tree]}"
  [ -n "$pillar" ] && echo "pillar_roots: {base: [$pillar]}"
  echo "root_dir: $work/root"
  echo "cachedir: $work/cache"
  echo "pki_dir: $work/pki"
  echo "log_file: $work/minion.log"
  echo "id: ${SALTREF_ID:-golden}"
  [ -n "${SALTREF_EXTRA:-}" ] && printf '%s\n' "$SALTREF_EXTRA"
} > "$work/etc/minion"
"${SALTREF:-/tmp/saltref}/bin/salt-call" --local -c "$work/etc" "$@"
