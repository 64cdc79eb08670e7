#!/usr/bin/env bash
# test/lib/pgdebian.sh - fetch Debian's PostgreSQL packages of any suite without touching
# the system (sourced by test/versions.sh and test/host/pg-bundle-debian.sh, not run).
#
# apt runs with a private configuration per Debian suite: its own sources list, package
# lists, cache and an empty dpkg status, so nothing under /etc/apt or /var/lib changes and
# the machine's own suite does not matter. Packages are verified by apt as usual (signed
# Release files, checked with the Debian archive keyring) and unpacked with `dpkg -x`.
#
# Environment:
#   GPUAGG_PG_CACHE          where package lists, .deb files and unpacked trees are kept
#                            (default /var/cache/gpuagg-pg as root, else ~/.cache/gpuagg-pg)
#   GPUAGG_DEBIAN_MIRROR     archive URL (default http://deb.debian.org/debian)
#   GPUAGG_DEBIAN_KEYRING    keyring that signs the suites
#                            (default /usr/share/keyrings/debian-archive-keyring.gpg)
#   GPUAGG_APT_TIMEOUT       seconds an `apt-get update` may take (default 90)

PGD_CACHE=${GPUAGG_PG_CACHE:-}
if [ -z "$PGD_CACHE" ]; then
	if [ "$(id -u)" -eq 0 ]; then
		PGD_CACHE=/var/cache/gpuagg-pg
	else
		PGD_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/gpuagg-pg
	fi
fi
PGD_MIRROR=${GPUAGG_DEBIAN_MIRROR:-http://deb.debian.org/debian}
PGD_KEYRING=${GPUAGG_DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}
PGD_APT_TIMEOUT=${GPUAGG_APT_TIMEOUT:-90}
PGD_ERROR=""

# Print the apt options of the private state of suite $1.
pgd_apt_opts() {
	local d=$PGD_CACHE/apt/$1
	printf '%s\n' \
		-o "Dir::Etc::SourceList=$d/sources.list" -o "Dir::Etc::SourceParts=$d/sources.list.d" \
		-o "Dir::Etc::Preferences=$d/preferences" -o "Dir::Etc::PreferencesParts=$d/preferences.d" \
		-o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d/cache" -o "Dir::State::status=/dev/null" \
		-o "APT::Get::List-Cleanup=0" -o "Acquire::Languages=none" -o "Acquire::Retries=1" \
		-o "Acquire::http::Timeout=20" -o "Acquire::https::Timeout=20" -o "APT::Sandbox::User=$(id -un)"
}

# Run apt-get (or apt-cache with $1 = cache) in the private state of suite $2.
pgd_apt() {
	local tool=apt-get suite opts
	if [ "$1" = cache ]; then tool=apt-cache; shift; fi
	suite=$1
	shift
	mapfile -t opts < <(pgd_apt_opts "$suite")
	"$tool" "${opts[@]}" "$@"
}

# Refresh the package lists of suite $1 once per run; false (reason in PGD_ERROR) if it fails.
pgd_update() {
	local suite=$1 d=$PGD_CACHE/apt/$1 out opts
	if [ -f "$d/.updated-$$" ]; then return 0; fi
	if ! command -v apt-get >/dev/null 2>&1; then
		PGD_ERROR="no apt-get on this machine"
		return 1
	fi
	if [ ! -r "$PGD_KEYRING" ]; then
		PGD_ERROR="no Debian archive keyring at $PGD_KEYRING (package debian-archive-keyring)"
		return 1
	fi
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/sources.list.d" "$d/preferences.d" ||
		{ PGD_ERROR="cannot create $d"; return 1; }
	echo "deb [signed-by=$PGD_KEYRING] $PGD_MIRROR $suite main" >"$d/sources.list"
	mapfile -t opts < <(pgd_apt_opts "$suite")
	out=$(timeout -k 5 "$PGD_APT_TIMEOUT" apt-get "${opts[@]}" -q update 2>&1)
	if [ $? -ne 0 ] || grep -qE '^(W: Failed to fetch|E: )' <<<"$out"; then
		PGD_ERROR="apt-get update of Debian '$suite' ($PGD_MIRROR) failed"
		if grep -qE '^(W|E): ' <<<"$out"; then
			PGD_ERROR="$PGD_ERROR: $(grep -E '^(W|E): ' <<<"$out" | head -n 1)"
		else
			PGD_ERROR="$PGD_ERROR (no answer within ${PGD_APT_TIMEOUT}s)"
		fi
		return 1
	fi
	rm -f "$d"/.updated-*
	touch "$d/.updated-$$"
}

# Print the candidate version of package $2 in suite $1 (nothing if the suite has none).
pgd_candidate() {
	pgd_apt cache "$1" policy "$2" 2>/dev/null | awk '/Candidate:/ { if ($2 != "(none)") print $2 }'
}

# Download package $2 of suite $1 into $PGD_CACHE/debs (kept: a later run reuses it); print the file.
pgd_download() {
	local suite=$1 pkg=$2 ver file out
	ver=$(pgd_candidate "$suite" "$pkg")
	if [ -z "$ver" ]; then
		PGD_ERROR="Debian '$suite' has no package $pkg"
		return 1
	fi
	mkdir -p "$PGD_CACHE/debs"
	# apt writes an epoch "1:" as "1%3a" in file names
	file=$(ls "$PGD_CACHE/debs/${pkg}_"*"${ver#*:}_"*.deb 2>/dev/null | head -n 1)
	if [ -z "$file" ]; then
		if ! out=$(cd "$PGD_CACHE/debs" && pgd_apt "$suite" -q download "$pkg=$ver" 2>&1); then
			PGD_ERROR="apt-get download $pkg=$ver from Debian '$suite' failed: $(grep -E '^(W|E): ' <<<"$out" | head -n 2 | tr '\n' ' ')"
			return 1
		fi
		file=$(ls "$PGD_CACHE/debs/${pkg}_"*"${ver#*:}_"*.deb 2>/dev/null | head -n 1)
		[ -n "$file" ] || { PGD_ERROR="apt-get download $pkg=$ver left no .deb"; return 1; }
	fi
	echo "$file"
}

# Print the package names that .deb $1 depends on (first alternative of each, no versions).
pgd_deb_depends() {
	dpkg-deb -f "$1" Depends Pre-Depends 2>/dev/null | sed -e 's/^[A-Za-z-]*: //' | tr ',' '\n' |
		sed -e 's/|.*//' -e 's/(.*)//' -e 's/:any//' -e 's/[[:space:]]//g' | grep -v '^$' | sort -u
}

# ---------------------------------------------------------------- building with a newer version's headers

# Print the C compiler to build with the PGXS Makefile.global $1: its own when this machine has it, else cc.
pgd_host_cc() {
	local cc
	cc=${CC:-$(sed -n 's/^CC = //p' "$1")}
	if ! command -v "${cc%% *}" >/dev/null 2>&1; then cc=cc; fi
	echo "$cc"
}

# Split the CFLAGS of Makefile.global $1 into what compiler $2 knows (PGD_CFLAGS_KEPT) and
# what it does not (PGD_CFLAGS_DROPPED): 18's are gcc 14's, this machine may have gcc 12.
pgd_split_cflags() {
	local f
	PGD_CFLAGS_KEPT=""
	PGD_CFLAGS_DROPPED=""
	for f in $(sed -n 's/^CFLAGS = //p' "$1"); do
		if echo 'int x;' | $2 -Wall -Wformat -Werror "$f" -x c -c -o /dev/null - >/dev/null 2>&1; then
			PGD_CFLAGS_KEPT="$PGD_CFLAGS_KEPT $f"
		else
			PGD_CFLAGS_DROPPED="$PGD_CFLAGS_DROPPED $f"
		fi
	done
}

# Write to $3 a header declaring strlcpy/strlcat when the server headers in $1 were configured
# for a C library that has them (glibc 2.38+, so port.h does not declare them) and compiler $2's
# has not; false when none is needed. Only for compiling: the real server provides them.
pgd_libc_shim() {
	grep -q '^#define HAVE_DECL_STRLCPY 1' "$1/pg_config.h" || return 1
	if printf '#include <string.h>\nint f(char *b);\nint f(char *b) { return (int) strlcpy(b, "x", 2); }\n' |
		$2 -Werror=implicit-function-declaration -x c -c -o /dev/null - >/dev/null 2>&1; then
		return 1
	fi
	printf '%s\n' '/* server headers configured for glibc 2.38+, compiled with an older one (test/lib/pgdebian.sh) */' \
		'#include <stddef.h>' 'extern size_t strlcpy(char *dst, const char *src, size_t siz);' \
		'extern size_t strlcat(char *dst, const char *src, size_t siz);' >"$3"
}
