#define _GNU_SOURCE
#include "shim.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* ThreadSanitizer's and AddressSanitizer's runtimes cannot follow a child that shares the
 * parent's memory (TSan aborts in its clone interceptor). Sanitizer builds (scripts/sanitize)
 * spawn with a plain fork instead: the same child, the same death signal before exec; only a
 * failed exec shows as the app exiting with status 127 rather than as launchFailed. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define LS_SPAWN_WITH_FORK 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define LS_SPAWN_WITH_FORK 1
#endif

/* Why not posix_spawn: the death signal must be armed in the child before exec, and
 * posix_spawn has no way to call prctl there. An app that is suspended (SIGSTOP) or has not
 * yet reached its own runtime must still die with the daemon, so the signal is set before
 * the app's first instruction runs, and it is SIGKILL, the one a stopped process cannot
 * leave pending. */

/* What the child needs, and where it reports a failed exec: with CLONE_VM the child writes
 * into the parent's memory, and CLONE_VFORK holds the parent until the child has exec'd or
 * exited, so `error` is final when clone returns. */
struct ls_app_spawn {
    const char *path;
    char *const *argv;
    char *const *envp;
    int child_fd;
    int out_fd;
    int err_fd;
    pid_t parent;
    volatile int error;
};

/* The real-time signals whose disposition is not the default, read once, at the first
 * spawn. Each sigaction costs about a microsecond on a VM and the child makes them while
 * the caller waits in clone (CLONE_VFORK), so the child resets every standard signal
 * (1-31: NIO's SIGPIPE, the stop signals service-lifecycle handles, the Swift runtime's
 * crash handlers) and glibc's own two (32, 33) at every spawn, but the thirty-odd
 * real-time ones only where this process had changed them at its first spawn: nothing here
 * sets one later, and a handler set later is reset by execve anyway (only an ignored one
 * would outlive it). */
static int ls_realtime_changed[64];
static int ls_realtime_count;
static pthread_once_t ls_realtime_once = PTHREAD_ONCE_INIT;

static void ls_read_realtime_dispositions(void) {
    for (int sig = SIGRTMIN; sig < _NSIG && ls_realtime_count < 64; sig++) {
        struct sigaction current;
        if (sigaction(sig, NULL, &current) != 0) continue;
        if (current.sa_handler != SIG_DFL || (current.sa_flags & SA_SIGINFO)) ls_realtime_changed[ls_realtime_count++] = sig;
    }
}

/* The child's stack, one per calling thread, kept for the next spawn: mapping, touching
 * and unmapping 256 KiB cost tens of microseconds per spawn. CLONE_VFORK returns only once
 * the child has exec'd or exited, so a thread's spawns never share it. */
static __thread void *ls_child_stack;
static const size_t ls_child_stack_size = 256 * 1024;

/* Closes every descriptor from `lowest` up. close_range needs Linux 5.9; older kernels get
 * a loop up to the descriptor limit. */
static void ls_close_from(int lowest) {
    if (syscall(SYS_close_range, (unsigned)lowest, ~0U, 0) == 0) return;
    struct rlimit limit;
    long highest = 65536;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < (1 << 20)) {
        highest = (long)limit.rlim_cur;
    }
    for (long fd = lowest; fd < highest; fd++) close((int)fd);
}

/* The child, between clone and execve. It shares the daemon's memory, so it makes only
 * system calls (async-signal-safe) and never returns: on failure it records errno and
 * _exits. */
static int ls_app_child(void *context) {
    struct ls_app_spawn *spawn = context;
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
        spawn->error = errno;
        _exit(127);
    }
    /* The daemon may have died before prctl: then the signal would never come. */
    if (getppid() != spawn->parent) {
        spawn->error = ESRCH;
        _exit(127);
    }
    /* Every disposition back to its default (NIO ignores SIGPIPE; a handler of the daemon
     * must never run here, on memory the daemon shares) while all signals are still
     * blocked. glibc refuses its internal signals with EINVAL, which is fine. */
    struct sigaction standard;
    memset(&standard, 0, sizeof(standard));
    standard.sa_handler = SIG_DFL;
    sigemptyset(&standard.sa_mask);
    for (int sig = 1; sig < SIGRTMIN; sig++) {
        if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &standard, NULL);
    }
    /* glibc keeps 32 and 33 for itself and refuses them (EINVAL, no system call), but an
     * ignored one outlives execve: the kernel is asked directly. */
    struct { void *handler; unsigned long flags; void *restorer; unsigned long mask; } kernel_default = {SIG_DFL, 0, NULL, 0};
    for (int sig = 32; sig < SIGRTMIN; sig++) syscall(SYS_rt_sigaction, sig, &kernel_default, NULL, sizeof(kernel_default.mask));
    for (int i = 0; i < ls_realtime_count; i++) sigaction(ls_realtime_changed[i], &standard, NULL);
    /* Each descriptor the app gets (fd 3, and 1 and 2 when given) is first copied above 3,
     * so that placing one cannot overwrite another (the daemon's pipe may itself be fd 1-3);
     * dup2 then gives the copies their places without FD_CLOEXEC. */
    int sources[3] = {spawn->out_fd, spawn->err_fd, spawn->child_fd};
    int targets[3] = {1, 2, 3};
    int copies[3] = {-1, -1, -1};
    for (int i = 0; i < 3; i++) {
        if (sources[i] < 0) continue;
        copies[i] = fcntl(sources[i], F_DUPFD_CLOEXEC, 4);
        if (copies[i] < 0) {
            spawn->error = errno;
            _exit(127);
        }
    }
    for (int i = 0; i < 3; i++) {
        if (copies[i] >= 0 && dup2(copies[i], targets[i]) != targets[i]) {
            spawn->error = errno;
            _exit(127);
        }
    }
    ls_close_from(spawn->child_fd >= 0 ? 4 : 3);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(spawn->path, spawn->argv, spawn->envp);
    spawn->error = errno;
    _exit(127);
}

int ls_spawn_app(pid_t *pid, const char *path, char *const argv[], char *const envp[], int child_fd) {
    return ls_spawn_app_output(pid, path, argv, envp, child_fd, -1, -1);
}

int ls_spawn_app_output(pid_t *pid, const char *path, char *const argv[], char *const envp[], int child_fd, int out_fd, int err_fd) {
    return ls_spawn_app_pidfd(pid, NULL, path, argv, envp, child_fd, out_fd, err_fd);
}

int ls_spawn_app_pidfd(pid_t *pid, int *pidfd, const char *path, char *const argv[], char *const envp[], int child_fd, int out_fd, int err_fd) {
    pthread_once(&ls_realtime_once, ls_read_realtime_dispositions);
    /* The child's own stack: it runs while the calling thread waits inside clone, so it
     * must not use that thread's stack. Exec or exit gives it back before clone returns. */
    if (ls_child_stack == NULL) {
        void *stack = mmap(NULL, ls_child_stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (stack == MAP_FAILED) return errno;
        ls_child_stack = stack;
    }
    struct ls_app_spawn spawn = {
        .path = path, .argv = argv, .envp = envp, .child_fd = child_fd, .out_fd = out_fd, .err_fd = err_fd, .parent = getpid(), .error = 0,
    };
    /* Blocked until the child has reset its dispositions, so no handler of the daemon runs
     * in the child. */
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    int descriptor = -1;
#ifdef LS_SPAWN_WITH_FORK
    pid_t child = fork();
    if (child == 0) ls_app_child(&spawn);
    if (child > 0 && pidfd != NULL) descriptor = (int)syscall(SYS_pidfd_open, child, 0);
#else
    /* CLONE_PIDFD: the pidfd comes with the clone, with no pidfd_open after it. */
    pid_t child = clone(ls_app_child, (char *)ls_child_stack + ls_child_stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD | (pidfd != NULL ? CLONE_PIDFD : 0),
                        &spawn, pidfd != NULL ? &descriptor : NULL);
#endif
    int clone_error = child < 0 ? errno : 0;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (child < 0) return clone_error;
    if (spawn.error != 0) {
        /* The child has already exited (CLONE_VFORK): this reaps it without waiting. */
        int status;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
        if (descriptor >= 0) close(descriptor);
        return spawn.error;
    }
    if (pidfd != NULL) {
        if (descriptor < 0) {
            int code = errno;
            kill(child, SIGKILL);
            int status;
            while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
            return code != 0 ? code : ESRCH;
        }
        *pidfd = descriptor;
    }
    *pid = child;
    return 0;
}
