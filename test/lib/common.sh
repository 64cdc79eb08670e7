#!/usr/bin/env bash
# test/lib/common.sh - shared helpers of test/check.sh and test/demo.sh (sourced, not run).
#
# Provides: timestamped logging; ensure_packages (apt on a fresh Debian, or a check of
# the PostgreSQL given by PG_CONFIG); build_and_install; a throwaway PostgreSQL cluster
# (start_cluster / stop_cluster, always stopped and removed by an EXIT trap unless
# KEEP_CLUSTER=1); as_pguser / psql_as to run PostgreSQL programs as an unprivileged
# user, since PostgreSQL refuses to run as root.
#
# Environment understood here:
#   PG_CONFIG          pg_config of an existing PostgreSQL 15 or later (15, 16, 17 and 18 are
#                      supported); given => no apt at all
#   GPUAGG_PG_MAJOR    major version apt installs when PG_CONFIG is not given (default 15:
#                      Debian 12's; 17 on Debian 13)
#   GPUAGG_USER        OS user that runs the server when invoked as root
#                      (default: postgres if it exists, else gpuagg, created on demand)
#   GPUAGG_SKIP_BUILD  1 => use the gpuagg already installed, do not run make
#   GPUAGG_INSTALL     where build_and_install installs: system (PG_CONFIG's PostgreSQL),
#                      private (a copy of it under GPUAGG_PREFIX, so that another checkout's
#                      or a package's gpuagg stays as it is) or auto (private unless the
#                      system's gpuagg.so is missing or was installed from this checkout);
#                      default system, auto in test/demo.sh and the benchmarks
#   GPUAGG_PREFIX      the private copy (default /var/tmp/gpuagg-pg-<checksum of the
#                      checkout's path>; GPUAGG_TMPDIR instead of /var/tmp when set)
#   GPUAGG_EXTRA_CONF  extra lines appended to the cluster's postgresql.conf
#   GPUAGG_TMPDIR      parent of the throwaway cluster directory (default /tmp)
#   KEEP_CLUSTER       1 => leave the cluster running and its directory in place

GA_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
GA_PG_MAJOR=${GPUAGG_PG_MAJOR:-15}
GA_DEBIAN_PACKAGES=(postgresql-$GA_PG_MAJOR postgresql-server-dev-$GA_PG_MAJOR build-essential)
GA_BG_PIDS=()
CLUSTER_DIR=""
CLUSTER_RUNNING=0

# ---------------------------------------------------------------- logging

# Print a message prefixed with the wall-clock time.
log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# Print a warning to stderr.
warn() { printf '[%s] WARNING: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# Print an error to stderr and exit 1 (the EXIT trap still cleans up).
die() { printf '[%s] ERROR: %s\n' "$(date +%H:%M:%S)" "$*" >&2; exit 1; }

# Print a section banner.
section() { printf '\n[%s] ==== %s ====\n' "$(date +%H:%M:%S)" "$*"; }

# Print seconds since the epoch with milliseconds (for durations).
now_s() { date +%s.%3N; }

# Print the seconds elapsed since $1 (a now_s value), one decimal.
elapsed_since() { awk -v a="$1" -v b="$(now_s)" 'BEGIN { printf "%.1f", b - a }'; }

# Whether this shell runs as root.
is_root() { [ "$(id -u)" -eq 0 ]; }

# Print $1 (an integer, or 1e6-style notation) as an integer; fail when it is neither.
to_int() { awk -v x="$1" 'BEGIN { if (x ~ /^[0-9]+(\.[0-9]+)?([eE]\+?[0-9]+)?$/ && x + 0 >= 1) printf "%.0f\n", x; else exit 1 }'; }

# Set variable $1 (or $2 where it is empty) to its value as an integer, 1e6-style
# notation accepted; die naming it when it is not a positive integer.
int_var() {
	local value=${!1:-${2:-}} n
	n=$(to_int "$value") || die "$1 must be a positive integer (1e6 notation accepted), not '$value'"
	printf -v "$1" '%s' "$n"
}

# Print the number of CPU cores available to this process.
ncores() { nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1; }

# Print the machine's memory in MB.
mem_total_mb() { awk '/^MemTotal:/ { printf "%d", $2 / 1024 }' /proc/meminfo; }

# ---------------------------------------------------------------- packages and PostgreSQL

# Print the Debian packages of GA_DEBIAN_PACKAGES that are not installed.
missing_debian_packages() {
	local p
	for p in "${GA_DEBIAN_PACKAGES[@]}"; do
		if [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" != installed ]; then
			printf '%s\n' "$p"
		fi
	done
}

# Install what is missing (root + apt + no PG_CONFIG), then resolve and check pg_config.
ensure_packages() {
	local missing
	if [ -n "${PG_CONFIG:-}" ]; then
		log "PG_CONFIG=$PG_CONFIG given: using that PostgreSQL, no package installation"
	elif ! is_root; then
		log "not root: no package installation, looking for an installed PostgreSQL"
	elif ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-query >/dev/null 2>&1; then
		log "no apt-get here: no package installation, looking for an installed PostgreSQL"
	else
		missing=$(missing_debian_packages | tr '\n' ' ')
		missing=${missing% }
		if [ -z "$missing" ]; then
			log "packages present: ${GA_DEBIAN_PACKAGES[*]}"
		else
			log "installing missing packages: $missing (apt-get update + install)"
			export DEBIAN_FRONTEND=noninteractive
			apt-get update -q || die "apt-get update failed"
			# shellcheck disable=SC2086  # $missing is a word list
			apt-get install -y -q --no-install-recommends $missing ||
				die "apt-get install $missing failed"
			log "installed: $missing"
		fi
	fi
	resolve_pg_config
	check_pg_tools
}

# Set and export PG_CONFIG (given, else GA_PG_MAJOR's, else the newest Debian-style one, else the one on PATH).
resolve_pg_config() {
	local newest
	if [ -z "${PG_CONFIG:-}" ]; then
		newest=$(ls -d /usr/lib/postgresql/*/bin/pg_config 2>/dev/null | sort -V | tail -n 1)
		if [ -x "/usr/lib/postgresql/$GA_PG_MAJOR/bin/pg_config" ]; then
			PG_CONFIG=/usr/lib/postgresql/$GA_PG_MAJOR/bin/pg_config
		elif [ -n "$newest" ]; then
			PG_CONFIG=$newest
		elif command -v pg_config >/dev/null 2>&1; then
			PG_CONFIG=$(command -v pg_config)
		else
			die "no pg_config found. Install PostgreSQL 15 or later with its server headers
  (Debian/Ubuntu, as root: apt-get install postgresql-$GA_PG_MAJOR postgresql-server-dev-$GA_PG_MAJOR build-essential)
  or point PG_CONFIG at an existing one, e.g. PG_CONFIG=/opt/pg/usr/lib/postgresql/$GA_PG_MAJOR/bin/pg_config"
		fi
	fi
	export PG_CONFIG
}

# Check that pg_config, the server programs, PGXS, pg_regress and a C toolchain work; set PG_* paths.
check_pg_tools() {
	local version t hint major
	hint="install postgresql-$GA_PG_MAJOR postgresql-server-dev-$GA_PG_MAJOR build-essential, or set PG_CONFIG to the pg_config of a complete PostgreSQL 15 or later (server, client, PGXS, pg_regress)"
	version=$("$PG_CONFIG" --version 2>&1) || die "'$PG_CONFIG --version' failed: $version
  ($hint; a relocated PostgreSQL may also need LD_LIBRARY_PATH)"
	PG_BINDIR=$("$PG_CONFIG" --bindir)
	PG_PKGLIBDIR=$("$PG_CONFIG" --pkglibdir)
	PG_SHAREDIR=$("$PG_CONFIG" --sharedir)
	PG_REGRESS="$PG_PKGLIBDIR/pgxs/src/test/regress/pg_regress"
	for t in initdb pg_ctl postgres psql; do
		[ -x "$PG_BINDIR/$t" ] || die "$PG_BINDIR/$t not found ($hint)"
	done
	[ -f "$("$PG_CONFIG" --pgxs)" ] || die "PGXS makefile $("$PG_CONFIG" --pgxs) not found ($hint)"
	[ -x "$PG_REGRESS" ] || die "pg_regress not found at $PG_REGRESS ($hint)"
	for t in make cc; do
		command -v "$t" >/dev/null 2>&1 || die "'$t' not found ($hint)"
	done
	major=$(sed -n 's/^PostgreSQL \([0-9][0-9]*\).*/\1/p' <<<"$version")
	if [ -z "$major" ]; then
		warn "cannot tell the major version of '$version' ($PG_CONFIG)"
	elif [ "$major" -lt 15 ]; then
		die "gpuagg needs PostgreSQL 15 or later; $PG_CONFIG reports '$version'"
	elif [ "$major" -gt 18 ]; then
		warn "gpuagg is built and tested with PostgreSQL 15 to 18; $PG_CONFIG reports '$version'"
	fi
	log "using $version ($PG_CONFIG)"
	export PG_BINDIR PG_PKGLIBDIR PG_SHAREDIR PG_REGRESS
}

# ---------------------------------------------------------------- build

# Run make with arguments $2..., its output into file $1, and show progress: a dot per C
# object, a line per CUDA object (each takes a while); returns make's status.
make_with_progress() {
	local out=$1 status
	shift
	printf '[%s] compiling ' "$(date +%H:%M:%S)"
	make "$@" 2>&1 | tee "$out" | awk '
		/ -c / && /\.cu( |$)/ {
			for (i = 1; i <= NF; i++) if ($i ~ /\.cu$/) printf "\n  nvcc %s ", $i
			fflush(); next
		}
		/ -c / && / -o [^ ]*\.o( |$)/ { printf "."; fflush() }
		END { print "" }'
	status=${PIPESTATUS[0]}
	return "$status"
}

# Print the checksum of file $1 (empty when it does not exist).
file_sum() { if [ -f "$1" ]; then md5sum <"$1" | cut -d' ' -f1; fi; }

# Print the stamp that records which checkout installed gpuagg into sharedir $1.
install_stamp_file() { echo "$1/extension/gpuagg.stamp"; }

# Write the install stamp of this checkout for the gpuagg.so of pkglibdir $1 into sharedir $2.
write_install_stamp() {
	local commit
	commit=$(git -C "$GA_ROOT" rev-parse HEAD 2>/dev/null || echo unknown)
	printf 'checkout=%s\ncommit=%s\nlibrary=%s\n' "$GA_ROOT" "$commit" "$(file_sum "$1/gpuagg.so")" \
		>"$(install_stamp_file "$2")" 2>/dev/null || true
}

# Print where to install (system or private) for GPUAGG_INSTALL, saying why on stderr.
install_mode() {
	local mode=${GPUAGG_INSTALL:-system} stamp lib
	case "$mode" in
		system | private) echo "$mode"; return 0 ;;
		auto) ;;
		*) die "GPUAGG_INSTALL must be system, private or auto, not '$mode'" ;;
	esac
	lib=$PG_PKGLIBDIR/gpuagg.so
	stamp=$(install_stamp_file "$PG_SHAREDIR")
	if ! is_root && { [ ! -w "$PG_PKGLIBDIR" ] || [ ! -w "$PG_SHAREDIR/extension" ]; }; then
		log "GPUAGG_INSTALL=auto: $PG_PKGLIBDIR is not writable: installing into a private copy" >&2
		echo private
	elif [ ! -f "$lib" ]; then
		log "GPUAGG_INSTALL=auto: no gpuagg installed in $PG_PKGLIBDIR: installing there" >&2
		echo system
	elif [ -f "$stamp" ] && grep -qxF "checkout=$GA_ROOT" "$stamp" &&
		grep -qxF "library=$(file_sum "$lib")" "$stamp"; then
		log "GPUAGG_INSTALL=auto: the gpuagg in $PG_PKGLIBDIR is this checkout's: installing there" >&2
		echo system
	else
		log "GPUAGG_INSTALL=auto: the gpuagg in $PG_PKGLIBDIR is not this checkout's" \
			"($(if [ -f "$stamp" ]; then sed -n 's/^checkout=//p' "$stamp"; else echo "a package or another install"; fi)):" \
			"installing into a private copy" >&2
		echo private
	fi
}

# Copy PG_CONFIG's PostgreSQL (bindir, pkglibdir, sharedir, each at its own path below
# GPUAGG_PREFIX) unless the copy is of the same version, install gpuagg into it, and point
# PG_BINDIR, PG_PKGLIBDIR and PG_SHAREDIR at it. PostgreSQL finds its libraries and shared
# files relative to its programs, so the copy's server loads the copy's gpuagg.
install_private() {
	local buildlog=$1 prefix version d
	prefix=${GPUAGG_PREFIX:-${GPUAGG_TMPDIR:-/var/tmp}/gpuagg-pg-$(printf '%s' "$GA_ROOT" | cksum | cut -d' ' -f1)}
	version=$("$PG_CONFIG" --version)
	if [ "$(cat "$prefix/PG-VERSION" 2>/dev/null)" != "$version $PG_BINDIR" ]; then
		log "copying $version ($PG_BINDIR) into $prefix"
		rm -rf "$prefix"
		for d in "$PG_BINDIR" "$PG_PKGLIBDIR" "$PG_SHAREDIR"; do
			mkdir -p "$prefix$d"
			cp -a "$d/." "$prefix$d/" || die "cannot copy $d into $prefix"
		done
		printf '%s\n' "$version $PG_BINDIR" >"$prefix/PG-VERSION"
	fi
	if ! make -C "$GA_ROOT" --no-print-directory install DESTDIR="$prefix" PG_CONFIG="$PG_CONFIG" \
		>"$buildlog" 2>&1; then
		cat "$buildlog" >&2
		die "make install DESTDIR=$prefix failed (output above)"
	fi
	chmod -R a+rX "$prefix"
	PG_BINDIR=$prefix$PG_BINDIR
	PG_PKGLIBDIR=$prefix$PG_PKGLIBDIR
	PG_SHAREDIR=$prefix$PG_SHAREDIR
	export PG_BINDIR PG_PKGLIBDIR PG_SHAREDIR
	write_install_stamp "$PG_PKGLIBDIR" "$PG_SHAREDIR"
	log "installed into the private copy $prefix: the server runs from $PG_BINDIR"
}

# Build with PGXS and install (GPUAGG_INSTALL: into PG_CONFIG's PostgreSQL, or a private
# copy of it); print the make output on failure.
build_and_install() {
	local buildlog t0 libdir extdir mode
	if [ "${GPUAGG_SKIP_BUILD:-0}" = 1 ]; then
		log "GPUAGG_SKIP_BUILD=1: using the gpuagg already installed in $PG_PKGLIBDIR"
		[ -f "$PG_PKGLIBDIR/gpuagg.so" ] || die "GPUAGG_SKIP_BUILD=1 but $PG_PKGLIBDIR/gpuagg.so is not installed"
		return 0
	fi
	buildlog=$(mktemp "${GPUAGG_TMPDIR:-/tmp}/gpuagg-build.XXXXXX")
	t0=$(now_s)
	log "building: make -j$(ncores) PG_CONFIG=$PG_CONFIG (in $GA_ROOT)"
	if ! make_with_progress "$buildlog" -C "$GA_ROOT" --no-print-directory -j"$(ncores)" PG_CONFIG="$PG_CONFIG"; then
		cat "$buildlog" >&2
		rm -f "$buildlog"
		die "build failed (make output above)"
	fi
	grep -E '^gpuagg:|warning:' "$buildlog" || true
	log "built in $(elapsed_since "$t0")s"
	mode=$(install_mode) || die "cannot choose where to install (above)"
	if [ "$mode" = private ]; then
		install_private "$buildlog"
		rm -f "$buildlog"
		return 0
	fi
	libdir=$PG_PKGLIBDIR
	extdir=$PG_SHAREDIR/extension
	if is_root || { [ -w "$libdir" ] && [ -w "$extdir" ]; }; then
		if ! make -C "$GA_ROOT" --no-print-directory install PG_CONFIG="$PG_CONFIG" >"$buildlog" 2>&1; then
			cat "$buildlog" >&2
			rm -f "$buildlog"
			die "make install failed (output above)"
		fi
		write_install_stamp "$libdir" "$PG_SHAREDIR"
		log "installed into $libdir and $extdir"
	elif [ -f "$GA_ROOT/gpuagg.so" ] && cmp -s "$GA_ROOT/gpuagg.so" "$libdir/gpuagg.so"; then
		log "$libdir is not writable, but the gpuagg.so installed there is this build: continuing"
	else
		rm -f "$buildlog"
		die "cannot install: $libdir or $extdir is not writable by $(id -un). Run
  sudo make -C $GA_ROOT install PG_CONFIG=$PG_CONFIG
then run this command again (or run it as root, or with GPUAGG_INSTALL=private)."
	fi
	rm -f "$buildlog"
}

# ---------------------------------------------------------------- running as the server user

# Set and export GPUAGG_RUN_USER: the OS user that owns and runs the throwaway server.
choose_run_user() {
	if ! is_root; then
		GPUAGG_RUN_USER=$(id -un)
	elif [ -n "${GPUAGG_USER:-}" ]; then
		GPUAGG_RUN_USER=$GPUAGG_USER
	elif id postgres >/dev/null 2>&1; then
		GPUAGG_RUN_USER=postgres
	else
		GPUAGG_RUN_USER=gpuagg
	fi
	if is_root && ! id "$GPUAGG_RUN_USER" >/dev/null 2>&1; then
		log "creating the unprivileged user '$GPUAGG_RUN_USER' to run PostgreSQL"
		useradd --create-home --shell /bin/sh "$GPUAGG_RUN_USER" ||
			die "useradd $GPUAGG_RUN_USER failed"
	fi
	export GPUAGG_RUN_USER
}

# Run a command as GPUAGG_RUN_USER (through runuser when root) from a directory it can enter.
as_pguser() {
	if is_root; then
		(cd "${CLUSTER_DIR:-/}" && runuser -u "$GPUAGG_RUN_USER" -- \
			env LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" "$@")
	else
		"$@"
	fi
}

# Run psql as the server user against the throwaway cluster: psql_as DB [psql args...].
psql_as() {
	local db=$1
	shift
	as_pguser "$PG_BINDIR/psql" -X -v ON_ERROR_STOP=1 -h "$CLUSTER_DIR" -p "$PGPORT_CLUSTER" -d "$db" "$@"
}

# ---------------------------------------------------------------- the throwaway cluster

# Print a TCP port that nothing listens on (the server itself listens only on a socket).
free_port() {
	local port i
	for i in $(seq 1 50); do
		port=$((20000 + (RANDOM * 32768 + RANDOM + i) % 40000))
		# /proc/net/tcp*: field 2 is ADDR:PORT in hex, field 4 the state (0A = LISTEN)
		if ! cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
			awk -v p="$(printf '%04X' "$port")" '$4 == "0A" && substr($2, length($2) - 3) == p { found = 1 } END { exit !found }'; then
			echo "$port"
			return 0
		fi
	done
	echo 54329
}

# Print a shared_buffers size in MB: $1 = test|demo, $2 = bytes the demo table needs.
shared_buffers_mb() {
	local mem quarter want
	mem=$(mem_total_mb)
	if [ "$1" = test ]; then
		echo 256
		return 0
	fi
	quarter=$((mem / 4))
	if [ "$quarter" -gt 8192 ]; then quarter=8192; fi
	want=$(( ${2:-0} * 115 / 100 / 1048576 + 256 ))
	if [ "$want" -lt "$quarter" ]; then want=$quarter; fi
	if [ "$want" -gt $((mem / 2)) ]; then want=$((mem / 2)); fi
	if [ "$want" -lt 128 ]; then want=128; fi
	echo "$want"
}

# Print the postgresql.conf lines of a profile: $1 = test|demo, $2 = demo table bytes.
cluster_conf() {
	local profile=$1 cores sb mem wm
	cores=$(ncores)
	sb=${SHARED_BUFFERS_MB:-$(shared_buffers_mb "$profile" "${2:-0}")}
	cat <<CONF
# ---- gpuagg throwaway cluster ($profile profile), written by test/lib/common.sh
shared_preload_libraries = 'gpuagg'
listen_addresses = ''
unix_socket_directories = '$CLUSTER_DIR'
port = $PGPORT_CLUSTER
shared_buffers = ${sb}MB
fsync = off
synchronous_commit = off
full_page_writes = off
logging_collector = off
log_line_prefix = '%m [%p] '
lc_messages = 'C'
CONF
	# Docker-like hosts give /dev/shm 64MB: parallel query's DSM then fails
	if [ "$(df -Pm /dev/shm 2>/dev/null | awk 'NR == 2 { print $2 }')" -lt 1024 ] 2>/dev/null; then
		echo "dynamic_shared_memory_type = mmap"
	fi
	if [ "$profile" = test ]; then
		# planner-relevant settings stay at PostgreSQL's defaults so the suite's
		# expected plans are those of a stock server
		cat <<CONF
work_mem = 4MB
max_parallel_workers_per_gather = 2
CONF
	else
		mem=$(mem_total_mb)
		wm=$((mem / (4 * (cores + 1))))
		if [ "$wm" -gt 1024 ]; then wm=1024; fi
		if [ "$wm" -lt 64 ]; then wm=64; fi
		cat <<CONF
work_mem = ${WORK_MEM_MB:-$wm}MB
max_parallel_workers_per_gather = $cores
max_parallel_workers = $cores
max_worker_processes = $((cores + 8))
wal_level = minimal
max_wal_senders = 0
max_wal_size = 8GB
checkpoint_timeout = 30min
CONF
	fi
	if [ -n "${GPUAGG_EXTRA_CONF:-}" ]; then
		printf '# GPUAGG_EXTRA_CONF\n%s\n' "$GPUAGG_EXTRA_CONF"
	fi
}

# Create, configure and start a throwaway cluster: start_cluster test|demo [demo table bytes].
start_cluster() {
	local profile=$1 initlog
	choose_run_user
	install_exit_trap
	CLUSTER_DIR=$(mktemp -d "${GPUAGG_TMPDIR:-/tmp}/gpuagg.XXXXXX")
	PGPORT_CLUSTER=$(free_port)
	export CLUSTER_DIR PGPORT_CLUSTER
	chmod 700 "$CLUSTER_DIR"
	if is_root; then chown "$GPUAGG_RUN_USER:" "$CLUSTER_DIR"; fi
	log "initdb as '$GPUAGG_RUN_USER' in $CLUSTER_DIR/data"
	if ! initlog=$(as_pguser "$PG_BINDIR/initdb" -D "$CLUSTER_DIR/data" -A trust -E UTF8 \
		--locale=C --no-sync 2>&1); then
		printf '%s\n' "$initlog" >&2
		die "initdb failed"
	fi
	cluster_conf "$profile" "${2:-0}" | as_pguser tee -a "$CLUSTER_DIR/data/postgresql.conf" >/dev/null
	log "starting PostgreSQL ($profile profile) on socket $CLUSTER_DIR port $PGPORT_CLUSTER"
	if ! as_pguser "$PG_BINDIR/pg_ctl" -D "$CLUSTER_DIR/data" -l "$CLUSTER_DIR/server.log" \
		-w -t 120 start >/dev/null; then
		echo "---- server log ($CLUSTER_DIR/server.log) ----" >&2
		tail -n 60 "$CLUSTER_DIR/server.log" >&2 || true
		die "PostgreSQL did not start (server log above)"
	fi
	CLUSTER_RUNNING=1
	log "PostgreSQL is up: $(psql_as postgres -At -c "SHOW server_version")," \
		"shared_buffers $(psql_as postgres -At -c "SHOW shared_buffers")"
}

# Stop the cluster and remove its directory; with KEEP_CLUSTER=1 leave both and say how to reach them.
stop_cluster() {
	[ -n "$CLUSTER_DIR" ] || return 0
	if [ "${KEEP_CLUSTER:-0}" = 1 ]; then
		if [ "$CLUSTER_RUNNING" = 1 ]; then
			log "KEEP_CLUSTER=1: the cluster keeps running. Connect with:"
			log "  $(is_root && echo "runuser -u $GPUAGG_RUN_USER -- ")$PG_BINDIR/psql -h $CLUSTER_DIR -p $PGPORT_CLUSTER postgres"
			log "stop and remove it with:"
			log "  $(is_root && echo "runuser -u $GPUAGG_RUN_USER -- ")$PG_BINDIR/pg_ctl -D $CLUSTER_DIR/data stop; rm -rf $CLUSTER_DIR"
		else
			log "KEEP_CLUSTER=1: kept $CLUSTER_DIR"
		fi
		CLUSTER_DIR=""
		return 0
	fi
	if [ "$CLUSTER_RUNNING" = 1 ]; then
		as_pguser "$PG_BINDIR/pg_ctl" -D "$CLUSTER_DIR/data" -m fast -w -t 60 stop >/dev/null 2>&1 ||
			as_pguser "$PG_BINDIR/pg_ctl" -D "$CLUSTER_DIR/data" -m immediate -w -t 30 stop >/dev/null 2>&1 ||
			warn "could not stop the server in $CLUSTER_DIR"
		CLUSTER_RUNNING=0
	fi
	rm -rf "$CLUSTER_DIR"
	CLUSTER_DIR=""
}

# Remember a background process started by this script, to be ended at exit.
track_bg_pid() { GA_BG_PIDS+=("$1"); }

# EXIT handler: end tracked background processes, run the script's on_exit_hook (which may
# set GA_EXIT_RC), stop the cluster, exit with GA_EXIT_RC.
ga_on_exit() {
	local rc=$? pid
	set +e
	for pid in "${GA_BG_PIDS[@]}"; do
		kill "$pid" 2>/dev/null
	done
	GA_EXIT_RC=$rc
	if declare -F on_exit_hook >/dev/null; then
		on_exit_hook "$rc"
	fi
	stop_cluster
	exit "$GA_EXIT_RC"
}

# Install the EXIT/INT/TERM traps (once).
install_exit_trap() {
	trap ga_on_exit EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# ---------------------------------------------------------------- gpuagg

# Print how many usable GPUs gpuagg_devices() lists in database $1 (rows of a CPU device are not counted).
count_usable_gpus() {
	psql_as "$1" -At -c "SELECT count(*) FROM gpuagg_devices() d
		WHERE d.usable AND coalesce(to_jsonb(d)->>'kind', '') <> 'cpu' AND d.name NOT ILIKE 'cpu%'"
}
