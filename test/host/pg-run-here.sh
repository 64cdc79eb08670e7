#!/usr/bin/env bash
# test/host/pg-run-here.sh - make a newer Debian PostgreSQL (17 from Debian 13, 18 from sid)
# run on this older Debian, without installing anything, so that the suite can run against
# it here.
#
#   bash test/host/pg-run-here.sh VERSION DIR       e.g. 17 /tmp/pg17-here; prints PG_CONFIG
#   NVCC= PG_CONFIG=DIR/pg/usr/lib/postgresql/VERSION/bin/pg_config bash test/check.sh --only regress
#
# Debian 13's programs need glibc 2.38 or later; Debian 12 has 2.36. This script packs the
# version with test/host/pg-bundle-debian.sh, unpacks it in DIR/pg, fetches the C and C++
# runtime of the same Debian suite into DIR/libc, and rewrites the programs (patchelf, from this
# machine's own suite) to start through that suite's dynamic loader, with DT_RPATH pointing
# at DIR/libc and DIR/pg/deps; nothing else on the machine sees that glibc. Extensions built
# here with this machine's compiler load into those programs as usual. For that build, the
# PGXS Makefile.global in DIR is adjusted like test/versions.sh does: compiler flags this gcc
# does not know are left out, and strlcpy/strlcat get a declaration.
#
# This is a test aid for a machine without the GPU host at hand (the CPU device only); the
# GPU host runs Debian 13's programs natively (test/host/gpu-host-setup-version.sh).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=test/lib/pgdebian.sh
. test/lib/pgdebian.sh

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { printf '[%s] ERROR: %s\n' "$(date +%H:%M:%S)" "$*" >&2; exit 1; }

VERSION=${1:-}
DIR=${2:-}
case "$VERSION" in '' | *[!0-9]*) die "usage: test/host/pg-run-here.sh VERSION DIR" ;; esac
[ -n "$DIR" ] || die "usage: test/host/pg-run-here.sh VERSION DIR"
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)

# 1. the bundle (its own glibc check does not apply: the suite's glibc comes with it here)
GPUAGG_TARGET_GLIBC=99 GPUAGG_TARGET_GLIBCXX=99 GPUAGG_TARGET_CXXABI=99 \
	bash test/host/pg-bundle-debian.sh "$VERSION" "$DIR/bundle.tar.gz" >"$DIR/bundle.log" 2>&1 ||
	{ tail -n 20 "$DIR/bundle.log" >&2; die "test/host/pg-bundle-debian.sh $VERSION failed"; }
rm -rf "$DIR/pg" "$DIR/libc"
mkdir -p "$DIR/pg" "$DIR/libc"
tar xzf "$DIR/bundle.tar.gz" -C "$DIR/pg"
suite=$(sed -n "1s/.* from Debian '\([a-z-]*\)'.*/\1/p" "$DIR/pg/BUNDLE-INFO")
[ -n "$suite" ] || die "cannot read the Debian suite from $DIR/pg/BUNDLE-INFO"
log "PostgreSQL $VERSION of Debian '$suite' unpacked in $DIR/pg"

# 2. that suite's C and C++ runtime
pgd_update "$suite" || die "$PGD_ERROR"
for p in libc6 libstdc++6 libgcc-s1; do
	deb=$(pgd_download "$suite" "$p") || die "$PGD_ERROR"
	dpkg-deb -x "$deb" "$DIR/libc"
done
libc=$DIR/libc/usr/lib/x86_64-linux-gnu
[ -x "$libc/ld-linux-x86-64.so.2" ] || die "no dynamic loader in $DIR/libc"

# 3. patchelf of this machine's suite
patchelf=$(command -v patchelf || true)
if [ -z "$patchelf" ]; then
	host_suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$host_suite" ] || die "patchelf is not installed and /etc/os-release names no Debian suite"
	pgd_update "$host_suite" || die "$PGD_ERROR"
	deb=$(pgd_download "$host_suite" patchelf) || die "$PGD_ERROR"
	dpkg-deb -x "$deb" "$DIR/patchelf"
	patchelf=$DIR/patchelf/usr/bin/patchelf
fi

# 4. the programs start through the suite's loader and find its libraries first
n=0
for f in "$DIR/pg/usr/lib/postgresql/$VERSION/bin/"* "$DIR/pg/usr/lib/postgresql/$VERSION/lib/pgxs/src/test/regress/pg_regress"; do
	# (not "objdump | grep -q": with pipefail, grep quitting early fails the pipeline)
	if [ -n "$(objdump -p "$f" 2>/dev/null | awk '$1 == "NEEDED"')" ]; then
		"$patchelf" --set-interpreter "$libc/ld-linux-x86-64.so.2" --force-rpath \
			--set-rpath "$libc:$DIR/pg/deps" "$f"
		n=$((n + 1))
	fi
done
log "$n programs rewritten to use $libc"

# 5. building extensions here: this gcc and glibc
mg=$DIR/pg/usr/lib/postgresql/$VERSION/lib/pgxs/src/Makefile.global
cc=$(pgd_host_cc "$mg")
pgd_split_cflags "$mg" "$cc"
extra=""
if pgd_libc_shim "$DIR/pg/usr/include/postgresql/$VERSION/server" "$cc" "$DIR/libc-shim.h"; then
	extra="-include $DIR/libc-shim.h"
fi
sed -i -e "s|^CC = .*|CC = $cc|" -e "s|^CFLAGS = .*|CFLAGS = ${extra:+$extra }${PGD_CFLAGS_KEPT# }|" "$mg"
log "PGXS: CC = $cc${PGD_CFLAGS_DROPPED:+, left out:$PGD_CFLAGS_DROPPED}${extra:+, strlcpy/strlcat declared}"

chmod -R a+rX "$DIR"
"$DIR/pg/usr/lib/postgresql/$VERSION/bin/postgres" -V
echo "PG_CONFIG=$DIR/pg/usr/lib/postgresql/$VERSION/bin/pg_config"
