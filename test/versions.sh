#!/usr/bin/env bash
# test/versions.sh - build gpuagg with warnings as errors against every PostgreSQL major
# version whose server headers it can get.
#
#   bash test/versions.sh [VERSION...]      (default: $GPUAGG_PG_VERSIONS, else 15 16 17 18)
#
# Where each version's headers and PGXS come from, first match wins:
#   1. GPUAGG_PG_ROOT_<N>=DIR: a tree laid out like Debian's packages
#      (DIR/usr/include/postgresql/N/server, DIR/usr/lib/postgresql/N/lib/pgxs)
#   2. this machine, when postgresql-server-dev-N and postgresql-client-N are installed
#   3. Debian's archive: postgresql-server-dev-N and postgresql-client-N of the first suite
#      of GPUAGG_DEBIAN_SUITES (default "trixie sid bookworm") that has them, fetched with
#      a private apt state and unpacked into a cache (test/lib/pgdebian.sh): nothing is
#      installed. When the archive cannot be reached, the last tree unpacked for that
#      version is used, and said so.
# Each version builds in a scratch copy of the tree (src/, cuda/, Makefile) with PGXS and
# that version's own CFLAGS (its Makefile.global) plus -Werror. The CUDA sources (.cu)
# include no PostgreSQL header, so they are not rebuilt per version: cuda/gpu/none.c
# stands in for them (the main build compiles them once). Two things of the host's older
# toolchain are bridged, and reported: compiler flags this gcc does not know are left out
# of the gcc build and checked with clang -fsyntax-only instead (when clang is installed),
# and strlcpy/strlcat get a declaration when the headers were configured for a C library
# that has them (glibc 2.38+) but this machine's has not.
#
# Result per version: PASS (built, no warning), FAIL (a compile error or warning: the
# compiler output is printed), SKIP (no headers: not in any Debian suite, or the archive
# unreachable and nothing cached; the reason is printed). Exit status 1 if any version
# FAILED, or if a version of GPUAGG_PG_REQUIRE (e.g. "17 18") was SKIPPED; else 0.
#
# Environment: GPUAGG_PG_VERSIONS ("none" builds nothing), GPUAGG_PG_REQUIRE,
# GPUAGG_PG_ROOT_<N>, GPUAGG_DEBIAN_SUITES, GPUAGG_VERSIONS_KEEP=1 (keep the scratch builds
# and their logs), GPUAGG_VERSIONS_RESULTS (file that receives one
# line "VERSION RESULT SECONDS DETAIL" per version, for test/check.sh), CC, and those of
# test/lib/pgdebian.sh (GPUAGG_PG_CACHE, GPUAGG_DEBIAN_MIRROR, GPUAGG_APT_TIMEOUT).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
GA_ROOT=$(pwd)
# shellcheck source=test/lib/pgdebian.sh
. test/lib/pgdebian.sh

SUITES=${GPUAGG_DEBIAN_SUITES:-trixie sid bookworm}
WORK=""
declare -A SUITE_FAILED=()
RESULTS=()

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# Print the seconds since $1 (date +%s.%N), one decimal.
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# Print the usage text.
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; }

# Record a version's result: record VERSION PASS|FAIL|SKIP SECONDS DETAIL.
record() {
	RESULTS+=("$1 $2 $3 $4")
	log "PostgreSQL $1: $2 - $4"
}

# Set TREE_ROOT to a tree holding version $1's headers and PGXS, fetching it if needed,
# and TREE_NOTE to where it came from; false with the reason in PGD_ERROR.
find_tree() {
	local v=$1 var root suite ver failed=() tree f deb why
	var=GPUAGG_PG_ROOT_$v
	TREE_NOTE=""
	TREE_ROOT=""
	if [ -n "${!var:-}" ]; then
		root=${!var}
		if has_tree "$root" "$v"; then
			TREE_NOTE="headers from $var=$root"
			TREE_ROOT=$root
			return 0
		fi
		PGD_ERROR="$var=$root has no usr/include/postgresql/$v/server or usr/lib/postgresql/$v/lib/pgxs"
		return 1
	fi
	if has_tree / "$v"; then
		TREE_NOTE="headers installed on this machine ($(dpkg-query -W -f='${Version}' "postgresql-server-dev-$v" 2>/dev/null || echo "version unknown"))"
		TREE_ROOT=/
		return 0
	fi
	for suite in $SUITES; do
		if [ -z "${SUITE_FAILED[$suite]:-}" ] && ! pgd_update "$suite"; then
			SUITE_FAILED[$suite]=$PGD_ERROR
		fi
		if [ -n "${SUITE_FAILED[$suite]:-}" ]; then
			failed+=("$suite")
			continue
		fi
		ver=$(pgd_candidate "$suite" "postgresql-server-dev-$v")
		[ -n "$ver" ] || continue
		tree=$PGD_CACHE/trees/$v-$ver
		if [ ! -f "$tree/.complete" ]; then
			rm -rf "$tree"
			mkdir -p "$tree"
			for f in "postgresql-server-dev-$v" "postgresql-client-$v"; do
				deb=$(pgd_download "$suite" "$f") || return 1
				dpkg-deb -x "$deb" "$tree" || { PGD_ERROR="dpkg-deb -x $deb failed"; return 1; }
			done
			has_tree "$tree" "$v" || { PGD_ERROR="$tree lacks the server headers or PGXS"; return 1; }
			touch "$tree/.complete"
		fi
		TREE_NOTE="headers of Debian '$suite' $ver"
		TREE_ROOT=$tree
		return 0
	done
	if [ ${#failed[@]} -gt 0 ]; then
		why="${SUITE_FAILED[${failed[0]}]}"
		if [ ${#failed[@]} -gt 1 ]; then why="$why; also ${failed[*]:1}"; fi
		# the archive could not be asked: fall back to what an earlier run unpacked
		tree=$(ls -d "$PGD_CACHE/trees/$v-"*/.complete 2>/dev/null | sort -V | tail -n 1)
		if [ -n "$tree" ]; then
			tree=$(dirname "$tree")
			TREE_NOTE="cached headers ${tree##*/$v-} (Debian's archive unreachable: $why)"
			TREE_ROOT=$tree
			return 0
		fi
		PGD_ERROR="Debian's archive unreachable and nothing cached: $why"
	else
		PGD_ERROR="no Debian suite of '$SUITES' has postgresql-server-dev-$v"
	fi
	return 1
}

# Whether $1 holds version $2's server headers and PGXS.
has_tree() {
	[ -f "$1/usr/include/postgresql/$2/server/postgres.h" ] &&
		[ -f "$1/usr/lib/postgresql/$2/lib/pgxs/src/makefiles/pgxs.mk" ] &&
		[ -f "$1/usr/lib/postgresql/$2/lib/pgxs/src/Makefile.global" ]
}

# Write a pg_config for tree $1, version $2, to file $3. Debian's own pg_config is a
# program that may not run here (newer glibc), and an unpacked one would print /usr paths.
write_pg_config() {
	local r=${1%/} v=$2
	cat >"$3" <<EOF
#!/bin/sh
# pg_config of the PostgreSQL $v tree in ${r:-/}, written by test/versions.sh
for a in "\$@"; do
	case "\$a" in
	--bindir) echo "$r/usr/lib/postgresql/$v/bin" ;;
	--sharedir) echo "$r/usr/share/postgresql/$v" ;;
	--sysconfdir) echo "$r/etc/postgresql-common" ;;
	--libdir) echo "$r/usr/lib/x86_64-linux-gnu" ;;
	--pkglibdir) echo "$r/usr/lib/postgresql/$v/lib" ;;
	--includedir | --pkgincludedir) echo "$r/usr/include/postgresql" ;;
	--includedir-server) echo "$r/usr/include/postgresql/$v/server" ;;
	--mandir) echo "$r/usr/share/postgresql/$v/man" ;;
	--docdir) echo "$r/usr/share/doc/postgresql-doc-$v" ;;
	--localedir) echo "$r/usr/share/locale" ;;
	--pgxs) echo "$r/usr/lib/postgresql/$v/lib/pgxs/src/makefiles/pgxs.mk" ;;
	--version) echo "PostgreSQL $v (headers in ${r:-/})" ;;
	*) echo "pg_config (test/versions.sh): unsupported option \$a" >&2; exit 1 ;;
	esac
done
EOF
	chmod +x "$3"
}

# Build against version $1; records the result.
build_version() {
	local v=$1 t0 root dir mg cc keep dropped f shim="" notes=() rc srcs
	t0=$(date +%s.%N)
	if ! find_tree "$v"; then
		record "$v" SKIP "$(since "$t0")" "$PGD_ERROR"
		return 0
	fi
	root=$TREE_ROOT
	notes+=("$TREE_NOTE")
	dir=$WORK/pg$v
	mkdir -p "$dir"
	tar -C "$GA_ROOT" --exclude='*.o' --exclude='*.so' --exclude='*.bc' -cf - Makefile gpuagg.control src cuda sql |
		tar -C "$dir" -xf -
	write_pg_config "$root" "$v" "$dir/pg_config"
	mg=$root/usr/lib/postgresql/$v/lib/pgxs/src/Makefile.global

	# that version's compiler and flags, less what this compiler does not know
	cc=$(pgd_host_cc "$mg")
	pgd_split_cflags "$mg" "$cc"
	keep=$PGD_CFLAGS_KEPT
	dropped=$PGD_CFLAGS_DROPPED
	if pgd_libc_shim "$root/usr/include/postgresql/$v/server" "$cc" "$dir/host-libc-shim.h"; then
		shim=$dir/host-libc-shim.h
		notes+=("strlcpy/strlcat declared for this machine's older glibc")
	fi

	log "PostgreSQL $v: make NVCC= CC=$cc (${TREE_NOTE})"
	set +e
	make -C "$dir" --no-print-directory -j"$(nproc 2>/dev/null || echo 2)" NVCC= PG_CONFIG="$dir/pg_config" \
		CC="$cc" CFLAGS="$keep -Werror${shim:+ -include $shim}" all >"$dir/build.log" 2>&1
	rc=$?
	set -e
	if [ "$rc" -ne 0 ] || grep -q 'warning:' "$dir/build.log"; then
		echo "---- PostgreSQL $v: compiler output (errors and warnings) ----"
		grep -E -B2 -A6 'error|warning' "$dir/build.log" | grep -v '^gcc \|^x86_64-linux-gnu-gcc \|^cc ' | head -n 120 ||
			tail -n 60 "$dir/build.log"
		echo "---- end of PostgreSQL $v compiler output ----"
		record "$v" FAIL "$(since "$t0")" "compile errors or warnings with -Werror; ${notes[0]}"
		return 0
	fi

	# flags the host gcc lacks (e.g. 18's -Wmissing-variable-declarations, a gcc 14 flag)
	dropped=$(echo "$dropped" | xargs -n1 2>/dev/null | grep '^-W[a-z]' | grep -v '^-Werror' | xargs || true)
	if [ -n "$dropped" ]; then
		if command -v clang >/dev/null 2>&1; then
			srcs=$(cd "$dir" && ls src/*.c src/*/*.c cuda/*.c cuda/cpu/*.c cuda/gpu/none.c)
			set +e
			for f in $srcs; do
				# shellcheck disable=SC2086  # $dropped is a flag list
				(cd "$dir" && clang -fsyntax-only -Wno-everything $dropped -Werror -D_GNU_SOURCE \
					-Icuda -Isrc -I"$root/usr/include/postgresql/$v/server" ${shim:+-include "$shim"} "$f")
			done >"$dir/clang.log" 2>&1
			set -e
			if grep -q 'error' "$dir/clang.log"; then
				cat "$dir/clang.log"
				record "$v" FAIL "$(since "$t0")" "clang -fsyntax-only -Werror $dropped failed; ${notes[0]}"
				return 0
			fi
			notes+=("$dropped checked with clang, gcc $($cc -dumpversion) lacks it")
		else
			notes+=("$dropped not checked: gcc $($cc -dumpversion) lacks it and clang is not installed")
		fi
	fi
	record "$v" PASS "$(since "$t0")" "built with -Werror ($(grep -c -- ' -c -o ' "$dir/build.log") C files, .cu not rebuilt); $(IFS=';'; echo "${notes[*]}" | sed 's/;/; /g')"
}

# Build each version and print the summary.
main() {
	local versions v r failed=0 line
	case "${1:-}" in -h | --help) usage; exit 0 ;; esac
	versions=${*:-${GPUAGG_PG_VERSIONS-15 16 17 18}}
	if [ -z "$versions" ] || [ "$versions" = none ]; then
		log "GPUAGG_PG_VERSIONS=none: building against no other PostgreSQL version"
		[ -z "${GPUAGG_VERSIONS_RESULTS:-}" ] || : >"$GPUAGG_VERSIONS_RESULTS"
		exit 0
	fi
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpuagg-versions.XXXXXX")
	if [ "${GPUAGG_VERSIONS_KEEP:-0}" = 1 ]; then
		log "GPUAGG_VERSIONS_KEEP=1: the builds stay in $WORK"
	else
		trap 'rm -rf "$WORK"' EXIT
	fi
	log "building against PostgreSQL $versions (cache: $PGD_CACHE)"
	for v in $versions; do
		case "$v" in *[!0-9]* | "") echo "not a major version: $v" >&2; exit 2 ;; esac
		build_version "$v"
	done
	printf '\n%-8s %-5s %7s  %s\n' version result seconds detail
	for line in "${RESULTS[@]}"; do
		read -r v r s d <<<"$line"
		printf '%-8s %-5s %7s  %s\n' "$v" "$r" "$s" "$d"
		if [ "$r" = FAIL ]; then failed=1; fi
		if [ "$r" = SKIP ] && [[ " ${GPUAGG_PG_REQUIRE:-} " == *" $v "* ]]; then
			echo "PostgreSQL $v is in GPUAGG_PG_REQUIRE but was skipped" >&2
			failed=1
		fi
	done
	if [ -n "${GPUAGG_VERSIONS_RESULTS:-}" ]; then
		printf '%s\n' "${RESULTS[@]}" >"$GPUAGG_VERSIONS_RESULTS"
	fi
	exit "$failed"
}

main "$@"
