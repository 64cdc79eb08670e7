#!/usr/bin/env bash
# test/deb.sh - build gpuagg's Debian packages, and check one installed with dpkg.
#
#   bash test/deb.sh build [OUTDIR]     postgresql-N-gpuagg_*.deb for every PostgreSQL N
#                                       whose postgresql-server-dev-N is installed (15 and
#                                       later), into OUTDIR (default debs/); lintian checks
#                                       them and fails the build on an error
#   bash test/deb.sh check [DEB]        as root: build (or take DEB), dpkg -i the package of
#                                       GPUAGG_PG_MAJOR (default 15), start a throwaway
#                                       cluster that preloads it, run `make installcheck` and
#                                       an ALTER EXTENSION gpuagg UPDATE from 0.1 against it,
#                                       then remove the package and put back the gpuagg files
#                                       it replaced (test/check.sh's package step)
#
# build copies the tree (git's files, committed or not) into a scratch directory,
# writes debian/control for the versions it builds (pg_buildext updatecontrol) and runs
# dpkg-buildpackage -b there, so the checkout's own build is left alone. The GPU device is
# built when nvcc is found under CUDA_HOME (default /usr/local/cuda), for the Makefile's
# CUDA_ARCHS; else the CPU device alone (debian/rules).
#
# check needs root (dpkg -i into the system's PostgreSQL). As root with apt-get it installs
# what is missing (dpkg-dev, debhelper, fakeroot, lintian, postgresql-server-dev-all,
# postgresql-GPUAGG_PG_MAJOR); without root, without dpkg-buildpackage and no way to
# install it, or with postgresql-N-gpuagg already installed (the check would remove it), it
# says why and exits with status 77 (SKIPPED). The package's files go where a
# `make install` of a checkout puts its own: check saves those first and puts them back.
#
# Environment:
#   GPUAGG_DEB_VERSIONS  PostgreSQL versions to build (default: every postgresql-server-dev-N
#                        installed, N >= 15; check builds GPUAGG_PG_MAJOR only)
#   GPUAGG_DEB_LINTIAN   0 => do not run lintian
#   GPUAGG_TEST_DEVICE   cpu|gpu: gpuagg.device for installcheck (default: gpu if
#                        gpuagg_devices() lists a usable GPU, else cpu)
#   CUDA_HOME, GPUAGG_PG_MAJOR, GPUAGG_USER, GPUAGG_TMPDIR, KEEP_CLUSTER: see
#   test/lib/common.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=test/lib/common.sh
. test/lib/common.sh

DEB_TOOLS=(dpkg-dev debhelper fakeroot lintian postgresql-server-dev-all)
DEB_SCRATCH=""
DEB_BACKUP=""
DEB_INSTALLED=""
DEB_BUILT=()

# Print the usage text.
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; }

# Print the PostgreSQL versions (15 and later) whose server headers are installed as packages.
installed_server_dev() {
	dpkg-query -W -f='${db:Status-Status} ${Package}\n' 'postgresql-server-dev-[0-9]*' 2>/dev/null |
		awk '$1 == "installed" { sub("postgresql-server-dev-", "", $2); if ($2 + 0 >= 15) print $2 }' |
		sort -V | tr '\n' ' ' | sed 's/ $//'
}

# Copy the tree's files (git's list: tracked and untracked-not-ignored; else all but build
# output) into directory $1.
copy_tree() {
	local dest=$1
	mkdir -p "$dest"
	if git -C "$GA_ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		(cd "$GA_ROOT" && git ls-files -z --cached --others --exclude-standard |
			xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
			tar --null -T - -cf -) | tar -xf - -C "$dest"
	else
		tar -C "$GA_ROOT" --exclude=.git --exclude=.gpu --exclude=debs --exclude='*.o' \
			--exclude='*.so' --exclude='*.bc' --exclude=results -cf - . | tar -xf - -C "$dest"
	fi
}

# Build the packages of versions $1 (space-separated) into directory $2; record them in DEB_BUILT.
build_debs() {
	local versions=$1 out=$2 src buildlog t0 f
	for f in dpkg-buildpackage dh pg_buildext; do
		command -v "$f" >/dev/null 2>&1 ||
			die "$f not found: install ${DEB_TOOLS[*]} (apt-get install --no-install-recommends ...)"
	done
	[ -n "$versions" ] || die "no postgresql-server-dev-N (N >= 15) installed: nothing to build"
	if [ -z "$DEB_SCRATCH" ]; then DEB_SCRATCH=$(mktemp -d "${GPUAGG_TMPDIR:-/tmp}/gpuagg-deb.XXXXXX"); fi
	src=$DEB_SCRATCH/gpuagg
	copy_tree "$src"
	buildlog=$DEB_SCRATCH/build.log
	log "building postgresql-{$(tr ' ' ',' <<<"$versions")}-gpuagg in $src"
	(cd "$src" && PG_SUPPORTED_VERSIONS="$versions" pg_buildext updatecontrol) ||
		die "pg_buildext updatecontrol failed"
	t0=$(now_s)
	if ! (cd "$src" && PG_SUPPORTED_VERSIONS="$versions" MAKEFLAGS="-j$(ncores)" \
		dpkg-buildpackage -b -us -uc) >"$buildlog" 2>&1; then
		tail -n 80 "$buildlog" >&2
		die "dpkg-buildpackage failed (the end of its output above; all of it in $buildlog)"
	fi
	grep -E '^gpuagg:' "$buildlog" | sort -u || true
	log "built in $(elapsed_since "$t0")s"
	mkdir -p "$out"
	DEB_BUILT=()
	for f in "$DEB_SCRATCH"/*.deb; do
		[ -f "$f" ] || continue
		mv -f "$f" "$out/"
		DEB_BUILT+=("$out/$(basename "$f")")
	done
	[ "${#DEB_BUILT[@]}" -gt 0 ] || die "dpkg-buildpackage made no .deb"
	for f in "${DEB_BUILT[@]}"; do
		log "  $f: $(dpkg-deb -f "$f" Package Version Depends | tr '\n' ' ')"
	done
	if [ "${GPUAGG_DEB_LINTIAN:-1}" != 0 ]; then
		run_lintian "${DEB_BUILT[@]}"
	fi
}

# Run lintian on the .deb files given (no debug symbol packages); fail on an error.
run_lintian() {
	local debs=() f
	if ! command -v lintian >/dev/null 2>&1; then
		log "lintian not installed: the packages are not checked"
		return 0
	fi
	for f in "$@"; do
		case "$f" in *-dbgsym_*) ;; *) debs+=("$f") ;; esac
	done
	log "lintian ${debs[*]##*/}"
	lintian --fail-on error "${debs[@]}" ||
		die "lintian reports an error (above)"
	log "lintian: no errors"
}

# Install with apt-get what building and checking the packages need, when root and missing.
ensure_deb_tools() {
	local want=("${DEB_TOOLS[@]}" "postgresql-$GA_PG_MAJOR" "postgresql-server-dev-$GA_PG_MAJOR" build-essential)
	local missing=() p
	for p in "${want[@]}"; do
		if [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" != installed ]; then
			missing+=("$p")
		fi
	done
	[ "${#missing[@]}" -gt 0 ] || return 0
	log "installing missing packages: ${missing[*]} (apt-get update + install)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null || die "apt-get update failed"
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
		die "apt-get install ${missing[*]} failed"
}

# Print the gpuagg files of the system's PostgreSQL (library, control, scripts, stamp).
system_gpuagg_files() {
	local f
	for f in "$PG_PKGLIBDIR/gpuagg.so" "$PG_SHAREDIR/extension/gpuagg.control" \
		"$PG_SHAREDIR"/extension/gpuagg--*.sql "$PG_SHAREDIR/extension/gpuagg.stamp"; do
		if [ -f "$f" ]; then echo "$f"; fi
	done
}

# Save the system's gpuagg files into DEB_BACKUP (the package replaces them).
save_system_files() {
	local f
	DEB_BACKUP=$DEB_SCRATCH/system-files
	mkdir -p "$DEB_BACKUP"
	while IFS= read -r f; do
		mkdir -p "$DEB_BACKUP$(dirname "$f")"
		cp -a "$f" "$DEB_BACKUP$f"
	done < <(system_gpuagg_files)
	log "saved the system's gpuagg files: $( (cd "$DEB_BACKUP" && find . -type f | wc -l) ) file(s)"
}

# Remove the package and put the saved files back, each by rename (a running server keeps its copy).
restore_system_files() {
	local f
	if [ -n "$DEB_INSTALLED" ]; then
		dpkg --purge "$DEB_INSTALLED" >/dev/null || warn "dpkg --purge $DEB_INSTALLED failed"
		log "removed $DEB_INSTALLED"
		DEB_INSTALLED=""
	fi
	[ -n "$DEB_BACKUP" ] && [ -d "$DEB_BACKUP" ] || return 0
	while IFS= read -r f; do
		f=${f#.}
		cp -a "$DEB_BACKUP$f" "$f.gpuagg-restore" && mv -f "$f.gpuagg-restore" "$f"
	done < <(cd "$DEB_BACKUP" && find . -type f)
	log "put back the system's gpuagg files"
	DEB_BACKUP=""
}

# EXIT hook: uninstall and restore, then remove the scratch directory.
on_exit_hook() {
	restore_system_files
	stop_cluster
	if [ -n "$DEB_SCRATCH" ] && [ "${KEEP_CLUSTER:-0}" != 1 ]; then rm -rf "$DEB_SCRATCH"; fi
}

# Print the gpuagg.device the suite runs on (GPUAGG_TEST_DEVICE, else a usable GPU, else cpu).
deb_test_device() {
	local n
	if [ -n "${GPUAGG_TEST_DEVICE:-}" ]; then
		echo "$GPUAGG_TEST_DEVICE"
	elif n=$(count_usable_gpus gpuagg_deb) && [ "$n" -gt 0 ]; then
		echo gpu
	else
		echo cpu
	fi
}

# Check the installed package: CREATE EXTENSION, an upgrade from 0.1, then make installcheck.
check_installed() {
	local device outdir files
	psql_as postgres -q -c "CREATE DATABASE gpuagg_deb"
	psql_as gpuagg_deb -q -c "CREATE EXTENSION gpuagg"
	psql_as gpuagg_deb -At -c "SELECT extversion FROM pg_extension WHERE extname = 'gpuagg'" |
		grep -qx "$(sed -n "s/^default_version = '\(.*\)'/\1/p" gpuagg.control)" ||
		die "CREATE EXTENSION gpuagg did not install the default version"
	device=$(deb_test_device)
	psql_as gpuagg_deb -q -c "DROP EXTENSION gpuagg" -c "CREATE EXTENSION gpuagg VERSION '0.1'" \
		-c "ALTER EXTENSION gpuagg UPDATE"
	log "after ALTER EXTENSION gpuagg UPDATE from 0.1: $(psql_as gpuagg_deb -At -c "SELECT
		'version ' || (SELECT extversion FROM pg_extension WHERE extname = 'gpuagg')
		|| ', gpuagg_devices() rows ' || (SELECT count(*) FROM gpuagg_devices())
		|| ', gpuagg_stats rows ' || (SELECT count(*) FROM gpuagg_stats)")"
	psql_as postgres -q -c "DROP DATABASE gpuagg_deb"
	outdir=$DEB_SCRATCH/installcheck
	mkdir -p "$outdir"
	log "make installcheck (gpuagg.device = $device) against the packaged gpuagg"
	if ! make -C "$GA_ROOT" --no-print-directory installcheck PG_CONFIG="$PG_CONFIG" \
		GPUAGG_TEST_DEVICE="$device" EXTRA_REGRESS_OPTS="--outputdir=$outdir" \
		PGHOST="$CLUSTER_DIR" PGPORT="$PGPORT_CLUSTER" PGUSER="$GPUAGG_RUN_USER"; then
		if [ -s "$outdir/regression.diffs" ]; then cat "$outdir/regression.diffs"; fi
		die "make installcheck failed against the packaged gpuagg"
	fi
	files=$(dpkg -L "$DEB_INSTALLED" | grep -E '/gpuagg(\.so|\.control|--.*\.sql)$' | tr '\n' ' ')
	log "the package's files: $files"
}

# The check command: build, install, test, remove.
deb_check() {
	local deb=${1:-} pkg
	if ! is_root; then
		log "SKIPPED: the package check installs with dpkg -i into the system's PostgreSQL: run it as root"
		exit 77
	fi
	if command -v apt-get >/dev/null 2>&1; then
		ensure_deb_tools
	fi
	if [ -z "$deb" ] && ! command -v dpkg-buildpackage >/dev/null 2>&1; then
		log "SKIPPED: dpkg-buildpackage not found and no apt-get to install dpkg-dev"
		exit 77
	fi
	unset PG_CONFIG
	PG_CONFIG=/usr/lib/postgresql/$GA_PG_MAJOR/bin/pg_config
	[ -x "$PG_CONFIG" ] || die "no PostgreSQL $GA_PG_MAJOR at $PG_CONFIG (postgresql-$GA_PG_MAJOR)"
	check_pg_tools
	pkg=postgresql-$GA_PG_MAJOR-gpuagg
	if [ "$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null)" = installed ]; then
		log "SKIPPED: $pkg is installed here, and the check would remove it (dpkg --purge $pkg first)"
		exit 77
	fi
	install_exit_trap
	DEB_SCRATCH=$(mktemp -d "${GPUAGG_TMPDIR:-/tmp}/gpuagg-deb.XXXXXX")
	if [ -z "$deb" ]; then
		build_debs "$GA_PG_MAJOR" "$DEB_SCRATCH/debs"
		deb=$(printf '%s\n' "${DEB_BUILT[@]}" | grep "/${pkg}_" | head -n 1)
	fi
	[ -f "$deb" ] || die "no $pkg package to check"
	[ "$(dpkg-deb -f "$deb" Package)" = "$pkg" ] || die "$deb is not a $pkg package"
	save_system_files
	log "dpkg -i $deb"
	DEB_INSTALLED=$pkg
	dpkg -i "$deb" || die "dpkg -i $deb failed"
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$pkg")" = installed ] || die "$pkg is not installed"
	start_cluster test
	check_installed
	stop_cluster
	restore_system_files
	log "the package check passed"
}

# Parse the command and run it.
main() {
	local cmd=${1:-}
	[ $# -gt 0 ] && shift
	case "$cmd" in
		build)
			install_exit_trap
			build_debs "${GPUAGG_DEB_VERSIONS:-$(installed_server_dev)}" "${1:-$GA_ROOT/debs}"
			;;
		check) deb_check "$@" ;;
		-h | --help) usage ;;
		*) usage >&2; die "unknown command '${cmd}': build or check" ;;
	esac
}

main "$@"
