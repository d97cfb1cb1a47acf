#!/bin/sh
# Render-time set-up for the gem cases (no network): tiny gems built with `gem build` from
# throwaway gemspecs into SANDBOX/gems/pkgs, a local gem source made from them
# (SANDBOX/gems/repo, `gem generate_index`), and SANDBOX/gems/bin/gem, the gem_bin the cases
# use: the host's gem with this sandbox's GEM_HOME (gems/home) and gemrc (install and
# update --local, from gems/pkgs), so nothing of the host's gems is read or changed.
# brinyold is installed there before the states run. Also gems/bin/broken-gem, a gem binary
# that fails. Idempotent.
set -e
sb=$1
g=$sb/gems
[ -x "$g/bin/gem" ] && exit 0
mkdir -p "$g/src" "$g/pkgs" "$g/repo/gems" "$g/home" "$g/bin"
cd "$g/src"
for spec in brinytoy:1.0 brinytoy:2.0 brinytoy:3.0.pre1 brinyother:1.0 brinyold:1.0; do
  name=${spec%%:*} version=${spec#*:}
  mkdir -p lib
  echo "module Toy; VERSION = '$version'; end" > "lib/$name.rb"
  cat > "$name.gemspec" <<SPEC
Gem::Specification.new do |s|
  s.name = "$name"
  s.version = "$version"
  s.summary = "briny test gem"
  s.authors = ["briny"]
  s.license = "MIT"
  s.files = ["lib/$name.rb"]
end
SPEC
  SOURCE_DATE_EPOCH=1704067200 gem build --silent "$name.gemspec" -o "$g/pkgs/$name-$version.gem" >/dev/null
  rm "lib/$name.rb"
done
cp "$g/pkgs/brinyother-1.0.gem" "$g/repo/gems/"
gem generate_index --silent -d "$g/repo" >/dev/null
printf -- '---\ninstall: --local\nupdate: --local\n:sources:\n- file://%s/repo/\n' "$g" > "$g/gemrc"
cat > "$g/bin/gem" <<WRAP
#!/bin/sh
cd $g/pkgs || exit 1
GEM_HOME=$g/home GEM_PATH=$g/home GEMRC=$g/gemrc GEM_SPEC_CACHE=$g/spec exec /usr/bin/gem "\$@"
WRAP
printf '#!/bin/sh\necho "gem: this gem binary is broken" >&2\nexit 3\n' > "$g/bin/broken-gem"
chmod 755 "$g/bin/gem" "$g/bin/broken-gem"
"$g/bin/gem" install --silent --no-document brinyold >/dev/null
