#!/usr/bin/env bash
# Install (or upgrade) briny the way a host runs it: a venv in /opt/briny, the commands linked
# into /usr/local/bin, /etc/briny, the systemd units and the logrotate entry. Run as root.
#
#   deploy/install.sh                      install from this source checkout
#   deploy/install.sh --wheel FILE.whl     install from a built wheel (docs and units from this tree)
#   deploy/install.sh --wheelhouse DIR     offline: pip takes every package from DIR, never an index
#                                          (make it on a connected host: `pip wheel -w DIR .`)
#   --prefix DIR     where the venv goes (default /opt/briny)
#   --root DIR       where /etc/... and /usr/local/bin go (default /): a staging root
#   --python PY      the Python (>= 3.11) the venv is made with (default python3)
#   --no-bin-links   do not link the commands into ROOT/usr/local/bin
#
# Running it again upgrades briny in place (the venv is kept, pip upgrades the package). It
# never overwrites a config in /etc/briny (a new example lands next to it as master.example /
# minion.example), never starts, stops or enables a service (it says what to run), and never
# touches Salt's files: /etc/salt, /var/cache/salt, /var/log/salt, the salt-* units and commands
# are left as they are, so briny can be installed beside a running Salt (docs/migrating.md).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
prefix=/opt/briny
root=/
wheel=
wheelhouse=
python=${PYTHON:-python3}
bin_links=1
die() { echo "install.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --prefix) prefix=${2:?--prefix needs a folder}; shift 2 ;;
    --root) root=${2:?--root needs a folder}; shift 2 ;;
    --wheel) wheel=${2:?--wheel needs a file}; shift 2 ;;
    --wheelhouse) wheelhouse=${2:?--wheelhouse needs a folder}; shift 2 ;;
    --python) python=${2:?--python needs an interpreter}; shift 2 ;;
    --no-bin-links) bin_links=; shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done
case $prefix in /*) ;; *) die "--prefix must be an absolute path, not $prefix" ;; esac
root=$(cd "$root" 2>/dev/null && pwd) || die "--root $root is not a folder"
etc=${root%/}/etc
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  die "Python >= 3.11 is required ($python is $("$python" -V 2>&1 || echo missing))"
fi
[ -z "$wheel" ] || [ -f "$wheel" ] || die "no wheel at $wheel"
[ -z "$wheelhouse" ] || [ -d "$wheelhouse" ] || die "no wheelhouse folder at $wheelhouse"
[ -n "$wheel" ] || [ -f "$src/pyproject.toml" ] || die "$src is not a briny source checkout; give --wheel"

say() { printf 'install.sh: %s\n' "$*"; }

# 1. the venv (Debian's Python refuses pip outside one), created once and then upgraded in place
if [ ! -x "$prefix/bin/python" ]; then
  say "creating the venv $prefix"
  "$python" -m venv "$prefix" || die "could not create a venv with $python (on Debian: apt-get install python3-venv)"
fi
pip=("$prefix/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade)
if [ -n "$wheelhouse" ]; then
  pip+=(--no-index --find-links "$wheelhouse")
fi
package=${wheel:-$src}
say "installing briny from $package into $prefix"
"${pip[@]}" "$package"                               # briny and what it needs, upgraded as needed
"${pip[@]}" --force-reinstall --no-deps "$package"   # briny's own files, even at an unchanged version
version=$("$prefix/bin/python" -c 'import importlib.metadata as m; print(m.version("briny"))')

# 2. documentation, where the units' Documentation= points
doc=$prefix/share/doc/briny
install -d -m 0755 "$doc" "$doc/docs"
install -m 0644 "$src/README.md" "$doc/README.md"
install -m 0644 "$src"/docs/*.md "$doc/docs/"
install -m 0644 "$src/docs/migrating.md" "$doc/migrating.md"

# 3. /etc/briny: the config folder, with commented examples; an existing config is never replaced
install -d -m 0755 "$etc/briny"
for role in master minion; do
  if [ -e "$etc/briny/$role" ]; then
    install -m 0644 "$src/deploy/config/$role" "$etc/briny/$role.example"
  else
    install -m 0644 "$src/deploy/config/$role" "$etc/briny/$role"
  fi
done

# 4. systemd units (pointing at this prefix) and the logrotate entry
install -d -m 0755 "$etc/systemd/system" "$etc/logrotate.d"
for unit in briny-master.service briny-minion.service briny-api.service; do
  sed "s|/opt/briny|$prefix|g" "$src/deploy/systemd/$unit" > "$etc/systemd/system/$unit.tmp"
  chmod 0644 "$etc/systemd/system/$unit.tmp"
  mv -f "$etc/systemd/system/$unit.tmp" "$etc/systemd/system/$unit"
done
install -m 0644 "$src/deploy/logrotate/briny" "$etc/logrotate.d/briny"

# 5. the commands on PATH (links into the venv: an upgrade needs no new link). Not briny-swarm:
# a load-testing tool that makes thousands of minions (docs/scaling.md), run from $prefix/bin.
if [ -n "$bin_links" ]; then
  bindir=${root%/}/usr/local/bin
  install -d -m 0755 "$bindir"
  for cmd in briny briny-api briny-call briny-cp briny-key briny-master briny-minion briny-run; do
    [ -x "$prefix/bin/$cmd" ] && ln -sfn "$prefix/bin/$cmd" "$bindir/$cmd"
  done
fi

if [ "$root" = / ] && [ -d /run/systemd/system ]; then
  systemctl daemon-reload || say "systemctl daemon-reload failed; run it before starting the units"
fi
say "briny $version installed in $prefix"
say "next: edit $etc/briny/master or $etc/briny/minion, then systemctl enable --now briny-master (or briny-minion)"
