/*-------------------------------------------------------------------------
 *
 * service/supervisor.c
 *	  The GPU service's background worker: it forks the service process,
 *	  which owns the devices, and starts it again whenever it dies.
 *
 * PostgreSQL treats the death of any of its own children by a signal, or
 * with an exit status other than 0 or 1, as a crash and restarts every
 * backend.  Code that may fault (the CUDA driver, a kernel that traps)
 * must therefore not run in a postmaster child.  The background worker
 * registered here is such a child, but it only supervises: it forks the
 * service process, which is the background worker's child, not the
 * postmaster's, and runs no PostgreSQL code of its own.  When that process
 * ends, however it ends, the supervisor fails the requests it had in
 * flight (their backends finish on their own CPU devices), logs why, and
 * starts a new one; nothing else in the cluster notices.
 *
 * The service process inherits the postmaster's shared memory at the same
 * address, which is all it shares with PostgreSQL.  It replaces every
 * signal handler the background worker had (they would touch the
 * supervisor's state), dies with its supervisor (PR_SET_PDEATHSIG), leaves
 * with _exit() so that no PostgreSQL exit callback runs, and stops on
 * SIGTERM, which the supervisor sends at shutdown.
 *
 * The supervisor also carries gpuagg.gpu_memory_budget, a setting that a
 * reload changes, into the service's shared header (ga_service_set_gpu_budget),
 * where the service process reads it at each admission: that process runs
 * no PostgreSQL code, and so reads no configuration of its own.
 *
 * A service process that dies soon after it started is started again
 * after a delay that doubles, up to SUPERVISOR_MAX_DELAY_MS, so that a
 * device that cannot be opened does not make it spin.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/ps_status.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "devices.h"
#include "guc.h"
#include "service/service.h"

/* A service process that lived less than this is restarted after a delay. */
#define SUPERVISOR_STABLE_MS 10000
#define SUPERVISOR_FIRST_DELAY_MS 100
#define SUPERVISOR_MAX_DELAY_MS 10000
/* How long the service process gets to stop at shutdown before SIGKILL. */
#define SUPERVISOR_STOP_MS 5000

static volatile sig_atomic_t got_sigterm = false;

/* The service of the running service process (its signal handler's). */
static GaService *serving = NULL;

/* SIGTERM in the supervisor: stop the service process, then exit. */
static void
supervisor_sigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	got_sigterm = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

/* SIGCHLD in the supervisor: the service process ended. */
static void
supervisor_sigchld(SIGNAL_ARGS)
{
	int			save_errno = errno;

	SetLatch(MyLatch);
	errno = save_errno;
}

/* SIGTERM in the service process: finish the requests in hand and stop. */
static void
service_sigterm(int signo)
{
	if (serving != NULL)
		ga_service_stop(serving);
}

/*
 * A line of the service process for the server log, on its standard error
 * (it runs no PostgreSQL code, so no ereport).
 */
static void
service_log(const char *message)
{
	fprintf(stderr, "LOG:  gpuagg: %s\n", message);
	fflush(stderr);
}

/*
 * The service process: serve until stopped, then leave without running
 * any of PostgreSQL's exit code.  Never returns.
 */
static void
service_process_main(GaService *service, pid_t supervisor)
{
	static const int ignored[] = {SIGHUP, SIGINT, SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM, SIGURG};
	GaServiceConfig config;
	GaStatus	status;
	sigset_t	none;
	int			i;

	for (i = 0; i < lengthof(ignored); i++)
		signal(ignored[i], SIG_IGN);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	serving = service;
	signal(SIGTERM, service_sigterm);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	/* die with the supervisor, even if it died before this line */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != supervisor)
		_exit(1);
	set_ps_display("service process");

	memset(&config, 0, sizeof(config));
	config.threads = gpuagg_service_threads;
	config.run_cpu = 1;
	config.ngpus = GpuAggUsableGpuOrdinals(config.gpu_ordinals, GA_MAX_GPUS);
	config.tune_dir = DataDir;
	config.version = GPUAGG_MODULE_VERSION;
	config.log = service_log;

	if (ga_service_serve(service, &config, &status) != 0)
	{
		fprintf(stderr, "gpuagg service process %d: %s\n", (int) getpid(), status.message);
		_exit(2);
	}
	_exit(0);
}

/* Fork the service process; its pid, or 0 when the fork failed. */
static pid_t
supervisor_start(GaService *service)
{
	pid_t		supervisor = getpid();
	pid_t		pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
	{
		ereport(LOG,
				(errmsg("gpuagg: could not fork the GPU service process: %m")));
		return 0;
	}
	if (pid == 0)
		service_process_main(service, supervisor);
	ereport(DEBUG1,
			(errmsg_internal("gpuagg: GPU service process %d started", (int) pid)));
	return pid;
}

/* Describe how a process ended, from its wait status. */
static char *
supervisor_exit_reason(int wstatus)
{
	if (WIFSIGNALED(wstatus))
		return psprintf("it was terminated by signal %d: %s", WTERMSIG(wstatus),
						pg_strsignal(WTERMSIG(wstatus)));
	if (WIFEXITED(wstatus))
		return psprintf("it exited with status %d", WEXITSTATUS(wstatus));
	return psprintf("it ended with wait status %d", wstatus);
}

/*
 * Reap the service process if it ended: fail its requests and log it.
 * Returns whether it did (service_pid is then 0).
 */
static bool
supervisor_reap(GaService *service, pid_t *service_pid, bool stopping)
{
	int			wstatus;
	pid_t		pid;
	bool		reaped = false;

	while ((pid = waitpid(-1, &wstatus, WNOHANG)) > 0)
	{
		char	   *why;

		if (pid != *service_pid)
			continue;
		why = supervisor_exit_reason(wstatus);
		ga_service_lost(service, (int) pid, why);
		if (!stopping || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0)
			ereport(LOG,
					(errmsg("gpuagg: the GPU service process %d ended; %s", (int) pid,
							stopping ? "not restarting (shutdown)" : "starting another"),
					 errdetail("%s.", why)));
		pfree(why);
		*service_pid = 0;
		reaped = true;
	}
	return reaped;
}

/* Stop the service process at shutdown: SIGTERM, then SIGKILL. */
static void
supervisor_stop(GaService *service, pid_t *service_pid)
{
	TimestampTz deadline;

	if (*service_pid == 0)
		return;
	kill(*service_pid, SIGTERM);
	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), SUPERVISOR_STOP_MS);
	while (*service_pid != 0 && GetCurrentTimestamp() < deadline)
	{
		if (supervisor_reap(service, service_pid, true))
			break;
		pg_usleep(10000);
	}
	if (*service_pid != 0)
	{
		kill(*service_pid, SIGKILL);
		while (*service_pid != 0 && !supervisor_reap(service, service_pid, true))
			pg_usleep(10000);
	}
}

/* Write gpuagg.gpu_memory_budget into the service's shared header. */
static void
supervisor_set_budget(GaService *service)
{
	ga_service_set_gpu_budget(service, (int64_t) gpuagg_gpu_memory_budget * 1024 * 1024);
}

/*
 * The background worker: keep one service process running until the
 * server shuts down, and hand it the memory budget at start and on each
 * reload.
 */
void
GpuAggServiceMain(Datum arg)
{
	GaService  *service = GpuAggService();
	pid_t		service_pid = 0;
	TimestampTz started = 0;
	TimestampTz next_start = 0;
	long		delay_ms = 0;
	char		note[GA_MESSAGE_LEN];
	int			old_pid;

	pqsignal(SIGTERM, supervisor_sigterm);
	pqsignal(SIGCHLD, supervisor_sigchld);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	if (service == NULL)
		proc_exit(0);			/* its shared memory could not be set up */
	supervisor_set_budget(service);

	/* a service process of an earlier supervisor is gone with it */
	if (ga_service_state(service, &old_pid, note, sizeof(note)) != GA_SERVICE_STOPPED)
		ga_service_lost(service, old_pid, "the GPU service's supervisor restarted");

	for (;;)
	{
		TimestampTz now;
		long		timeout = 1000;

		if (service_pid != 0 && supervisor_reap(service, &service_pid, got_sigterm))
		{
			/* restart at once after a long life, later after a short one */
			now = GetCurrentTimestamp();
			if (TimestampDifferenceExceeds(started, now, SUPERVISOR_STABLE_MS))
				delay_ms = 0;
			else
				delay_ms = Min(Max(delay_ms * 2, SUPERVISOR_FIRST_DELAY_MS),
							   SUPERVISOR_MAX_DELAY_MS);
			next_start = TimestampTzPlusMilliseconds(now, delay_ms);
		}
		if (got_sigterm)
		{
			supervisor_stop(service, &service_pid);
			proc_exit(0);
		}
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			supervisor_set_budget(service);
		}
		now = GetCurrentTimestamp();
		if (service_pid == 0)
		{
			if (now >= next_start)
			{
				service_pid = supervisor_start(service);
				started = now;
				if (service_pid == 0)
					next_start = TimestampTzPlusMilliseconds(now, SUPERVISOR_MAX_DELAY_MS);
			}
			if (service_pid == 0)
			{
				long		secs;
				int			usecs;

				TimestampDifference(now, next_start, &secs, &usecs);
				timeout = Max(1, Min(1000, secs * 1000 + usecs / 1000));
			}
		}

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 timeout, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}
