#!/bin/sh
# test/host/gpu-host-setup-version.sh - on a machine with no PostgreSQL and no network (the
# GPU host), as root: unpack a bundle made by test/host/pg-bundle-debian.sh (or
# shared/tools/pg-bundle.sh), of any PostgreSQL version, write DIR/env.sh and create an
# unprivileged user to run the server.
#
#   sh test/host/gpu-host-setup-version.sh BUNDLE.tar.gz [DIR] [USER]
#        DIR defaults to /opt/pgN (N: the bundle's major version), USER to pgrun
#   . DIR/env.sh                  # PATH, LD_LIBRARY_PATH, PG_CONFIG of that PostgreSQL
#   bash test/check.sh            # as root: check.sh runs the server as an unprivileged user
set -eu
bundle=${1:?usage: test/host/gpu-host-setup-version.sh BUNDLE.tar.gz [DIR] [USER]}
[ -f "$bundle" ] || { echo "no such bundle: $bundle" >&2; exit 1; }
ver=$(tar tzf "$bundle" | sed -n 's|^\./usr/lib/postgresql/\([0-9][0-9]*\)/bin/pg_config$|\1|p' | head -n 1)
[ -n "$ver" ] || { echo "$bundle holds no usr/lib/postgresql/N/bin/pg_config" >&2; exit 1; }
dir=${2:-/opt/pg$ver}
user=${3:-pgrun}
mkdir -p "$dir"
tar xzf "$bundle" -C "$dir"
dir=$(cd "$dir" && pwd)
bin=$dir/usr/lib/postgresql/$ver/bin
# absolute paths, so that env.sh works when sourced from anywhere
cat >"$dir/env.sh" <<ENV
export PATH="$bin:\$PATH"
export LD_LIBRARY_PATH="$dir/deps\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export PG_CONFIG="$bin/pg_config"
ENV
id "$user" >/dev/null 2>&1 || useradd -m "$user"
# the server user must read the bundle; make install (as root) writes into it
chmod -R a+rX "$dir"
if [ -f "$dir/BUNDLE-INFO" ]; then head -n 1 "$dir/BUNDLE-INFO"; fi
for prog in pg_config postgres; do
	if out=$(LD_LIBRARY_PATH="$dir/deps" "$bin/$prog" --version 2>&1); then
		echo "$out"
	else
		echo "$bin/$prog does not run on this machine: $(echo "$out" | head -n 1)" >&2
	fi
done
echo "PG_CONFIG=$bin/pg_config"
echo "use it with: . $dir/env.sh"
