#!/usr/bin/env bash
# test/host/pg-bundle-debian.sh - pack Debian's PostgreSQL VERSION (server, client, PGXS,
# headers, pg_regress, contrib) and every shared library it needs except the C/C++ runtime
# into one relocatable tarball, for a machine that has no PostgreSQL and no network (the GPU
# host).
#
#   bash test/host/pg-bundle-debian.sh VERSION OUT.tar.gz     e.g. 17 .gpu/pg17.tar.gz
#   bash test/host/gpu-host-setup-version.sh OUT.tar.gz       on that machine
#
# The packages come from the first Debian suite of GPUAGG_DEBIAN_SUITES (default
# "trixie sid") that has postgresql-VERSION, fetched with a private apt state
# (test/lib/pgdebian.sh): nothing is installed here, and the binaries need not run here
# (Debian 13's need glibc 2.38; this may be Debian 12). Libraries are found by following
# the ELF NEEDED entries of everything packed, through the Depends of the packages that
# provide them, until nothing is missing; libc, libm, libstdc++, libgcc_s and the dynamic
# loader are left to the target machine. The bundle is checked for a library that would be
# missing there and for symbol versions newer than GPUAGG_TARGET_GLIBC (default 2.39, the
# GPU host's Ubuntu 24.04), GPUAGG_TARGET_GLIBCXX (default 3.4.33) and GPUAGG_TARGET_CXXABI
# (default 1.3.15).
#
# Layout (like shared/tools/pg-bundle.sh's): usr/lib/postgresql/N/{bin,lib},
# usr/share/postgresql/N, usr/include/postgresql, deps/*.so*, BUNDLE-INFO. The JIT (LLVM),
# documentation and message translations are left out.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=test/lib/pgdebian.sh
. test/lib/pgdebian.sh

VERSION=${1:-}
OUT=${2:-}
SUITES=${GPUAGG_DEBIAN_SUITES:-trixie sid}
TARGET_GLIBC=${GPUAGG_TARGET_GLIBC:-2.39}
TARGET_GLIBCXX=${GPUAGG_TARGET_GLIBCXX:-3.4.33}
TARGET_CXXABI=${GPUAGG_TARGET_CXXABI:-1.3.15}
# sonames every glibc machine has (the C and C++ runtime and the loader)
HOST_LIBS_RE='^(libc|libm|libdl|libpthread|librt|libresolv|libutil|libanl|libstdc\+\+|libgcc_s|ld-linux-x86-64|linux-vdso)\.so'
SUITE=""
STAGE=""
PKGDIR=""
WORK=""

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { printf '[%s] ERROR: %s\n' "$(date +%H:%M:%S)" "$*" >&2; exit 1; }

# Print the programs and shared libraries of the bundle (ELF files; the rest is skipped later).
elf_files() {
	find "$STAGE/usr/lib/postgresql/$VERSION/bin" "$STAGE/deps" -type f
	find "$STAGE/usr/lib/postgresql/$VERSION/lib" -maxdepth 1 -type f -name '*.so*'
	find "$STAGE/usr/lib/postgresql/$VERSION/lib/pgxs" -type f -perm -u+x -name 'pg_*regress'
}

# Run objdump $1 over the bundle's ELF files (other files only make it complain).
objdump_all() {
	elf_files | xargs -r objdump "$1" 2>/dev/null || true
}

# Print the sonames the bundle's ELF files need.
needed_sonames() {
	objdump_all -p | awk '$1 == "NEEDED" { print $2 }' | sort -u
}

# Print the sonames present in the bundle (files and links under deps/ and lib/).
present_sonames() {
	find "$STAGE/deps" "$STAGE/usr/lib/postgresql/$VERSION/lib" -maxdepth 1 \( -type f -o -type l \) \
		-name '*.so*' -printf '%f\n' | sort -u
}

# Print the sonames the bundle needs that neither it nor the target machine provide.
missing_sonames() {
	comm -23 <(needed_sonames) <(present_sonames) | grep -Ev "$HOST_LIBS_RE" || true
}

# Download and unpack package $1 into PKGDIR/$1 (once).
fetch_pkg() {
	local deb
	[ -d "$PKGDIR/$1" ] && return 0
	deb=$(pgd_download "$SUITE" "$1") || die "$PGD_ERROR"
	mkdir -p "$PKGDIR/$1"
	dpkg-deb -x "$deb" "$PKGDIR/$1"
	echo "$deb" >"$PKGDIR/$1.deb-path"
}

# Note package $1 as a part of the bundle in BUNDLE-INFO.
note_pkg() {
	echo "$1 $(dpkg-deb -f "$(cat "$PKGDIR/$1.deb-path")" Version)" >>"$STAGE/BUNDLE-INFO.packages"
}

# Copy the shared libraries of unpacked package $1 whose soname is in list $2 into deps/; print how many.
take_libs() {
	local pkg=$1 wanted=$2 f n=0 base
	while IFS= read -r f; do
		base=$(basename "$f")
		if grep -qxF "$base" <<<"$wanted"; then
			cp -L "$f" "$STAGE/deps/$base"
			n=$((n + 1))
		fi
	done < <(find "$PKGDIR/$pkg" \( -type f -o -type l \) -name '*.so*' 2>/dev/null)
	echo "$n"
}

# Resolve the libraries: follow Depends of the packages that contributed something.
resolve_libs() {
	local round=0 missing frontier next pkg dep n
	frontier="postgresql-$VERSION postgresql-client-$VERSION libpq5"
	declare -A seen=()
	for pkg in $frontier; do seen[$pkg]=1; done
	while :; do
		missing=$(missing_sonames)
		[ -n "$missing" ] || break
		# a package already unpacked may have it (libicu76: libicuuc, then libicudata)
		for pkg in "${!seen[@]}"; do
			if [ -d "$PKGDIR/$pkg" ] && [ "$(take_libs "$pkg" "$missing")" -gt 0 ] &&
				! grep -q "^$pkg " "$STAGE/BUNDLE-INFO.packages"; then
				note_pkg "$pkg"
				frontier="$frontier $pkg"
			fi
		done
		missing=$(missing_sonames)
		[ -n "$missing" ] || break
		round=$((round + 1))
		[ "$round" -le 8 ] || die "libraries still missing after 8 rounds: $(echo $missing)"
		log "round $round: missing $(echo $missing)"
		next=""
		for pkg in $frontier; do
			for dep in $(pgd_deb_depends "$(cat "$PKGDIR/$pkg.deb-path")"); do
				case "$dep" in
					libc6 | libgcc-s1 | libstdc++6 | libllvm* | libclang* | libperl* | libpython* | libtcl* | debconf* | perl* | tzdata | locales* | ssl-cert | postgresql-common* | lsb-base | adduser) continue ;;
				esac
				[ -n "${seen[$dep]:-}" ] && continue
				seen[$dep]=1
				next="$next $dep"
			done
		done
		[ -n "$next" ] || die "missing $(echo $missing), and no further package to look in"
		frontier=""
		for pkg in $next; do
			if ! (pgd_download "$SUITE" "$pkg" >/dev/null); then
				log "  $pkg: not downloadable ($PGD_ERROR), skipped"
				continue
			fi
			fetch_pkg "$pkg"
			n=$(take_libs "$pkg" "$missing")
			# its own dependencies matter only if it gave something
			if [ "$n" -gt 0 ]; then
				frontier="$frontier $pkg"
				note_pkg "$pkg"
			fi
		done
		# libraries just added may need further ones: look in their packages' Depends next
	done
}

# Fail if the bundle needs a library the target machine lacks or symbol versions newer than it has.
check_bundle() {
	local missing sym want have newest needs=""
	missing=$(missing_sonames)
	[ -z "$missing" ] || die "the bundle needs libraries it does not have: $missing"
	for sym in GLIBC GLIBCXX CXXABI; do
		case $sym in
			GLIBC) want=$TARGET_GLIBC ;;
			GLIBCXX) want=$TARGET_GLIBCXX ;;
			CXXABI) want=$TARGET_CXXABI ;;
		esac
		newest=$(objdump_all -T | grep -o "${sym}_[0-9][0-9.]*" | sed "s/^${sym}_//" | sort -uV | tail -n 1)
		[ -n "$newest" ] || continue
		needs="$needs ${sym}_$newest"
		have=$(printf '%s\n%s\n' "$newest" "$want" | sort -V | tail -n 1)
		[ "$have" = "$want" ] || die "the bundle needs ${sym}_$newest, newer than the target's ${sym}_$want (GPUAGG_TARGET_$sym)"
	done
	log "newest symbol versions needed:$needs"
	{
		echo "needs symbol versions up to:$needs"
		echo "host libraries (not packed): $(needed_sonames | grep -E "$HOST_LIBS_RE" | tr '\n' ' ')"
	} >>"$STAGE/BUNDLE-INFO"
}

main() {
	local suite ver p dir
	case "$VERSION" in '' | *[!0-9]*) die "usage: test/host/pg-bundle-debian.sh VERSION OUT.tar.gz" ;; esac
	[ -n "$OUT" ] || die "usage: test/host/pg-bundle-debian.sh VERSION OUT.tar.gz"
	for p in objdump dpkg-deb apt-get; do command -v "$p" >/dev/null || die "$p is needed"; done
	for suite in $SUITES; do
		pgd_update "$suite" || die "$PGD_ERROR"
		ver=$(pgd_candidate "$suite" "postgresql-$VERSION")
		if [ -n "$ver" ]; then SUITE=$suite; break; fi
	done
	[ -n "$SUITE" ] || die "no Debian suite of '$SUITES' has postgresql-$VERSION"
	log "PostgreSQL $VERSION: Debian '$SUITE' $ver"

	WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpuagg-bundle.XXXXXX")
	trap 'rm -rf "$WORK"' EXIT
	STAGE=$WORK/stage
	PKGDIR=$WORK/pkgs
	mkdir -p "$STAGE/deps" "$PKGDIR"
	for p in "postgresql-$VERSION" "postgresql-client-$VERSION" "postgresql-server-dev-$VERSION" libpq5; do
		fetch_pkg "$p"
		note_pkg "$p"
	done
	for p in "postgresql-$VERSION" "postgresql-client-$VERSION" "postgresql-server-dev-$VERSION"; do
		for dir in usr/lib/postgresql usr/share/postgresql usr/include/postgresql; do
			if [ -d "$PKGDIR/$p/$dir" ]; then
				mkdir -p "$STAGE/$dir"
				cp -a "$PKGDIR/$p/$dir/." "$STAGE/$dir/"
			fi
		done
	done
	cp -L "$PKGDIR"/libpq5/usr/lib/*/libpq.so.5 "$STAGE/deps/"
	# the JIT alone (LLVM) would triple the size; man pages are not needed
	rm -rf "$STAGE/usr/lib/postgresql/$VERSION/lib/bitcode" "$STAGE/usr/lib/postgresql/$VERSION/lib/"llvmjit* \
		"$STAGE/usr/share/postgresql/$VERSION/man"
	[ -x "$STAGE/usr/lib/postgresql/$VERSION/bin/postgres" ] || die "no postgres in postgresql-$VERSION"
	[ -x "$STAGE/usr/lib/postgresql/$VERSION/bin/pg_config" ] || die "no pg_config in postgresql-client-$VERSION"
	[ -x "$STAGE/usr/lib/postgresql/$VERSION/lib/pgxs/src/test/regress/pg_regress" ] || die "no pg_regress"
	[ -f "$STAGE/usr/include/postgresql/$VERSION/server/postgres.h" ] || die "no server headers"

	resolve_libs
	{
		echo "PostgreSQL $VERSION from Debian '$SUITE' ($PGD_MIRROR), made by test/host/pg-bundle-debian.sh on $(date -u +%Y-%m-%d)"
		echo "packages:"
		sed 's/^/  /' "$STAGE/BUNDLE-INFO.packages"
	} >"$STAGE/BUNDLE-INFO"
	rm -f "$STAGE/BUNDLE-INFO.packages"
	check_bundle
	log "deps/: $(ls "$STAGE/deps" | tr '\n' ' ')"
	mkdir -p "$(dirname "$OUT")"
	tar czf "$OUT" -C "$STAGE" .
	log "wrote $OUT ($(du -h "$OUT" | cut -f1)); $(du -sh "$STAGE" | cut -f1) unpacked"
	cat "$STAGE/BUNDLE-INFO"
}

main
