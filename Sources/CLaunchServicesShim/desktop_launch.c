#define _GNU_SOURCE
#include "desktop_launch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Why a waiter process, and why a sibling.
 *
 * A desktop app must outlive the daemon, and the daemon is a child subreaper that ends what
 * it adopts when it stops. A child of the daemon, or anything reparented to it (a double
 * fork's grandchild lands on the nearest subreaper: the daemon), would be adopted and ended,
 * and so would everything the app itself lets go. So nothing of the app may descend from the
 * daemon: the waiter is created with CLONE_PARENT, a sibling of the daemon, and the app is
 * the waiter's child.
 *
 * The waiter also keeps the exit status honest. Only a parent can read a child's status
 * (waitid), and under systemd the daemon's parent (the user manager) reaps a sibling at
 * once; Linux before 6.15 then has no way to tell the daemon how it ended. The waiter is the
 * app's parent for the grace, reads the status without reaping it (WNOWAIT), reports it and
 * exits; the app, alive or a zombie, then passes to the daemon's parent's subreaper or init.
 *
 * The waiter is a fork of the daemon (no exec: there is no program to exec), alive at most
 * for the grace; it makes only system calls, as a child of a threaded process must. */

#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define LS_DESKTOP_WITH_FORK 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define LS_DESKTOP_WITH_FORK 1
#endif

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

#define LS_STACK_SIZE (256 * 1024)

int ls_desktop_launch_uses_siblings(void) {
#ifdef LS_DESKTOP_WITH_FORK
    return 0;
#else
    return 1;
#endif
}

struct ls_waiter_context {
    const struct ls_desktop_process *app;
    const struct ls_desktop_process *forwarder;
    int fallback;
    int report_fd;
    int grace_ms;
    /* The stack the waiter's own children run on while it waits for their exec. */
    void *child_stack;
};

/* What one child needs; its failure comes back on `error_fd` (close-on-exec: at exec the
 * waiter reads end of file). */
struct ls_child_context {
    const struct ls_desktop_process *process;
    int stderr_override;
    int error_fd;
};

static void ls_close_range(int low, int high) {
    if (low > high) return;
    if (syscall(SYS_close_range, (unsigned)low, (unsigned)high, 0) == 0) return;
    struct rlimit limit;
    long top = 65535;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < (1 << 20)) top = (long)limit.rlim_cur - 1;
    if (high < top) top = high;
    for (long fd = low; fd <= top; fd++) close((int)fd);
}

/* Closes every descriptor from 3 up except those in `keep` (-1 entries ignored). */
static void ls_close_all_but(const int *keep, int count) {
    int sorted[16];
    int n = 0;
    for (int i = 0; i < count && n < 16; i++) {
        if (keep[i] < 3) continue;
        int j = n;
        while (j > 0 && sorted[j - 1] > keep[i]) {
            sorted[j] = sorted[j - 1];
            j--;
        }
        sorted[j] = keep[i];
        n++;
    }
    int low = 3;
    for (int i = 0; i < n; i++) {
        if (sorted[i] >= low) ls_close_range(low, sorted[i] - 1);
        if (sorted[i] + 1 > low) low = sorted[i] + 1;
    }
    ls_close_range(low, ~0U >> 1);
}

static void ls_child_fail(int error_fd, int stage, int error) {
    int32_t message[2] = {stage, error};
    while (write(error_fd, message, sizeof(message)) < 0 && errno == EINTR) {}
    _exit(127);
}

/* The child, between clone and execve: descriptors placed, the pid written into its
 * variable, signals back to their defaults, then exec. */
static int ls_child(void *argument) {
    struct ls_child_context *context = argument;
    const struct ls_desktop_process *process = context->process;
    struct sigaction standard;
    memset(&standard, 0, sizeof(standard));
    standard.sa_handler = SIG_DFL;
    sigemptyset(&standard.sa_mask);
    for (int sig = 1; sig < _NSIG; sig++) {
        if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &standard, NULL);
    }
    if (process->ignore_sigpipe) {
        struct sigaction ignore = standard;
        ignore.sa_handler = SIG_IGN;
        sigaction(SIGPIPE, &ignore, NULL);
    }
    int sources[4] = {process->fds[0], process->fds[1], process->fds[2], process->fds[3]};
    if (context->stderr_override >= 0) sources[2] = context->stderr_override;
    /* Each source first copied above 3, so placing one cannot overwrite another. */
    int copies[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4; i++) {
        if (sources[i] < 0) continue;
        copies[i] = fcntl(sources[i], F_DUPFD_CLOEXEC, 4);
        if (copies[i] < 0) ls_child_fail(context->error_fd, LS_DESKTOP_STAGE_SETUP, errno);
    }
    int null_fd = -1;
    for (int i = 0; i < 3; i++) {
        if (copies[i] >= 0) continue;
        if (null_fd < 0) {
            null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
            if (null_fd < 0) ls_child_fail(context->error_fd, LS_DESKTOP_STAGE_SETUP, errno);
            int high = fcntl(null_fd, F_DUPFD_CLOEXEC, 4);
            if (high < 0) ls_child_fail(context->error_fd, LS_DESKTOP_STAGE_SETUP, errno);
            null_fd = high;
        }
        copies[i] = null_fd;
    }
    int error_fd = fcntl(context->error_fd, F_DUPFD_CLOEXEC, 4);
    if (error_fd < 0) ls_child_fail(context->error_fd, LS_DESKTOP_STAGE_SETUP, errno);
    int placed = copies[3] >= 0 ? 4 : 3;
    for (int i = 0; i < placed; i++) {
        if (dup2(copies[i], i) != i) ls_child_fail(error_fd, LS_DESKTOP_STAGE_SETUP, errno);
    }
    /* Everything else goes, but the error pipe, moved just above what was placed. */
    if (error_fd != placed) {
        if (dup3(error_fd, placed, O_CLOEXEC) != placed) ls_child_fail(error_fd, LS_DESKTOP_STAGE_SETUP, errno);
        error_fd = placed;
    }
    ls_close_range(placed + 1, ~0U >> 1);
    if (process->pid_env_index >= 0) {
        char *entry = process->envp[process->pid_env_index];
        char *value = strchr(entry, '=');
        if (value != NULL) {
            value++;
            char digits[16];
            int count = 0;
            for (pid_t pid = getpid(); pid > 0 && count < 16; pid /= 10) digits[count++] = (char)('0' + pid % 10);
            for (int i = 0; i < count; i++) value[i] = digits[count - 1 - i];
            value[count] = '\0';
        }
    }
    if (process->directory != NULL && chdir(process->directory) != 0) ls_child_fail(error_fd, LS_DESKTOP_STAGE_CHDIR, errno);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(process->path, process->argv, process->envp);
    ls_child_fail(error_fd, LS_DESKTOP_STAGE_EXEC, errno);
    return 127;
}

/* Starts one child of the waiter. 0 and its pid (and pidfd when asked), else the errno with
 * `stage` set. */
static int ls_start_child(struct ls_waiter_context *waiter, const struct ls_desktop_process *process, int stderr_override, pid_t *pid, int *pidfd, int *stage) {
    (void)waiter;
    int error_pipe[2];
    if (pipe2(error_pipe, O_CLOEXEC) != 0) {
        *stage = LS_DESKTOP_STAGE_SETUP;
        return errno;
    }
    struct ls_child_context context = {.process = process, .stderr_override = stderr_override, .error_fd = error_pipe[1]};
#ifdef LS_DESKTOP_WITH_FORK
    pid_t child = fork();
    if (child == 0) ls_child(&context);
    if (pidfd != NULL) *pidfd = child > 0 ? (int)syscall(SYS_pidfd_open, child, 0) : -1;
#else
    int flags = CLONE_VM | CLONE_VFORK | SIGCHLD | (pidfd != NULL ? CLONE_PIDFD : 0);
    pid_t child = clone(ls_child, (char *)waiter->child_stack + LS_STACK_SIZE, flags, &context, pidfd);
#endif
    int clone_error = child < 0 ? errno : 0;
    close(error_pipe[1]);
    if (child < 0) {
        close(error_pipe[0]);
        *stage = LS_DESKTOP_STAGE_SETUP;
        return clone_error;
    }
    int32_t message[2] = {0, 0};
    ssize_t got;
    while ((got = read(error_pipe[0], message, sizeof(message))) < 0 && errno == EINTR) {}
    close(error_pipe[0]);
    if (got == (ssize_t)sizeof(message)) {
        /* The child has exited: reap it here, it never ran the program. */
        int status;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
        if (pidfd != NULL && *pidfd >= 0) close(*pidfd);
        *stage = message[0];
        return message[1];
    }
    *pid = child;
    return 0;
}

static void ls_report(int fd, int32_t kind, int32_t pid, int32_t forwarder_pid, int32_t value, int32_t stage, int pidfd) {
    struct ls_desktop_report report = {.kind = kind, .pid = pid, .forwarder_pid = forwarder_pid, .value = value, .stage = stage};
    struct iovec iov = {.iov_base = &report, .iov_len = sizeof(report)};
    union {
        char buffer[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof(control));
    struct msghdr message;
    memset(&message, 0, sizeof(message));
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    if (pidfd >= 0) {
        message.msg_control = control.buffer;
        message.msg_controllen = sizeof(control.buffer);
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(header), &pidfd, sizeof(int));
    }
    /* A daemon that is gone (EPIPE) changes nothing for the app. */
    while (sendmsg(fd, &message, MSG_NOSIGNAL) < 0 && errno == EINTR) {}
}

static long ls_now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* The waiter: a session of its own, the forwarder, the app, the grace, the report. Every
 * signal stays blocked here (the caller blocked them around the clone). */
static int ls_waiter(void *argument) {
    struct ls_waiter_context *waiter = argument;
    const struct ls_desktop_process *app = waiter->app;
    const struct ls_desktop_process *forwarder = waiter->forwarder;
    setsid();
    int keep[10] = {waiter->report_fd, waiter->fallback, app->fds[0], app->fds[1], app->fds[2], app->fds[3], -1, -1, -1, -1};
    if (forwarder != NULL) {
        for (int i = 0; i < 4; i++) keep[6 + i] = forwarder->fds[i];
    }
    ls_close_all_but(keep, 10);

    pid_t forwarder_pid = 0;
    int forwarder_error = 0;
    int stderr_override = -1;
    int stage = 0;
    if (forwarder != NULL) {
        forwarder_error = ls_start_child(waiter, forwarder, -1, &forwarder_pid, NULL, &stage);
        if (forwarder_error != 0) {
            forwarder_pid = 0;
            stderr_override = waiter->fallback;
        }
    }
    /* The forwarder's descriptors are its own now; only the app's stay here. */
    int app_keep[6] = {waiter->report_fd, app->fds[0], app->fds[1], app->fds[2], app->fds[3], stderr_override};
    ls_close_all_but(app_keep, 6);

    pid_t pid = 0;
    int pidfd = -1;
    int error = ls_start_child(waiter, app, stderr_override, &pid, &pidfd, &stage);
    int report_only[1] = {waiter->report_fd};
    if (error != 0) {
        ls_close_all_but(report_only, 1);
        ls_report(waiter->report_fd, LS_DESKTOP_FAILED, 0, forwarder_pid, error, stage, -1);
        _exit(0);
    }
    int started_keep[2] = {waiter->report_fd, pidfd};
    ls_close_all_but(started_keep, 2);
    ls_report(waiter->report_fd, LS_DESKTOP_STARTED, pid, forwarder_pid, forwarder_error, 0, pidfd);

    long deadline = ls_now_ms() + waiter->grace_ms;
    int exited = 0;
    for (;;) {
        long left = deadline - ls_now_ms();
        if (left < 0) left = 0;
        struct pollfd watch = {.fd = pidfd, .events = POLLIN, .revents = 0};
        int ready = poll(&watch, 1, (int)left);
        if (ready > 0) {
            exited = 1;
            break;
        }
        if (ready == 0 || errno != EINTR) break;
    }
    if (exited) {
        siginfo_t info;
        memset(&info, 0, sizeof(info));
        int32_t status = -1;
        if (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &info, WEXITED | WNOWAIT) == 0) {
            if (info.si_code == CLD_EXITED) {
                status = (info.si_status & 0xff) << 8;
            } else {
                status = (info.si_status & 0x7f) | (info.si_code == CLD_DUMPED ? 0x80 : 0);
            }
        }
        ls_report(waiter->report_fd, LS_DESKTOP_EXITED, pid, forwarder_pid, status, 0, -1);
    } else {
        ls_report(waiter->report_fd, LS_DESKTOP_DETACHED, pid, forwarder_pid, 0, 0, -1);
    }
    _exit(0);
}

int ls_desktop_launch(const struct ls_desktop_process *app, const struct ls_desktop_process *forwarder, int app_stderr_fallback,
                      int report_fd, int grace_ms, pid_t *waiter_pid, int *sibling) {
    void *stacks = mmap(NULL, 2 * LS_STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stacks == MAP_FAILED) return errno;
    struct ls_waiter_context context = {
        .app = app, .forwarder = forwarder, .fallback = app_stderr_fallback, .report_fd = report_fd,
        .grace_ms = grace_ms < 0 ? 0 : grace_ms, .child_stack = (char *)stacks + LS_STACK_SIZE,
    };
    /* Blocked in the waiter for its whole life, so no handler of the daemon ever runs there;
     * its children restore the defaults before exec. */
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
#ifdef LS_DESKTOP_WITH_FORK
    pid_t child = fork();
    if (child == 0) ls_waiter(&context);
    *sibling = 0;
#else
    /* A copy of the caller's memory (no CLONE_VM), running on the first stack. */
    pid_t child = clone(ls_waiter, (char *)stacks + LS_STACK_SIZE, CLONE_PARENT | SIGCHLD, &context);
    *sibling = 1;
    if (child < 0 && errno == EINVAL) {
        /* The caller is the init of its PID namespace, which has no parent to share. */
        child = clone(ls_waiter, (char *)stacks + LS_STACK_SIZE, SIGCHLD, &context);
        *sibling = 0;
    }
#endif
    int clone_error = child < 0 ? errno : 0;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    munmap(stacks, 2 * LS_STACK_SIZE);
    if (child < 0) return clone_error;
    *waiter_pid = child;
    return 0;
}

int ls_desktop_read_report(int fd, struct ls_desktop_report *report, int *pidfd) {
    *pidfd = -1;
    union {
        char buffer[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct iovec iov = {.iov_base = report, .iov_len = sizeof(*report)};
    struct msghdr message;
    memset(&message, 0, sizeof(message));
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    message.msg_control = control.buffer;
    message.msg_controllen = sizeof(control.buffer);
    ssize_t got;
    while ((got = recvmsg(fd, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {}
    if (got < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
    if (got == 0) return -1;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS && header->cmsg_len == CMSG_LEN(sizeof(int))) {
            memcpy(pidfd, CMSG_DATA(header), sizeof(int));
        }
    }
    if (got != (ssize_t)sizeof(*report)) {
        if (*pidfd >= 0) close(*pidfd);
        *pidfd = -1;
        return -1;
    }
    return 1;
}
