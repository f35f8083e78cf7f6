/* Runs a command in a private mount namespace whose /run/systemd/journal/socket is a sink
 * owned by this process, so that dbus-broker-launch, which logs only to the systemd journal
 * and exits without one, can run on machines without systemd-journald. The tmpfs over
 * /run/systemd exists only inside the namespace: the machine's own /run is untouched, and
 * the namespace ends with the command. Journal records are copied to stderr (the bench's
 * bus log). SIGTERM is passed on to the command; exits with the command's status, after
 * reaping every process the command left behind (it is their subreaper), so none outlives it.
 * Needs CAP_SYS_ADMIN (root); written for scripts/bench only. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t child = 0;

static void forward(int signal) {
    if (child > 0) kill(child, signal);
}

static int fail(const char *what) {
    fprintf(stderr, "private_journal: %s: %s\n", what, strerror(errno));
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: private_journal COMMAND [ARG...]\n"); return 2; }
    if (unshare(CLONE_NEWNS) != 0) return fail("unshare(CLONE_NEWNS)");
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return fail("making / private");
    if (mount("tmpfs", "/run/systemd", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) return fail("tmpfs on /run/systemd");
    if (mkdir("/run/systemd/journal", 0755) != 0) return fail("mkdir /run/systemd/journal");
    int sink = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un address = { .sun_family = AF_UNIX, .sun_path = "/run/systemd/journal/socket" };
    if (sink < 0 || bind(sink, (struct sockaddr *)&address, sizeof address) != 0) return fail("binding the journal socket");

    struct sigaction action = { .sa_handler = forward };
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) return fail("PR_SET_CHILD_SUBREAPER");
    pid_t pid = fork();
    if (pid < 0) return fail("fork");
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        _exit(fail(argv[1]) + 126);
    }
    child = pid;
    char record[65536];
    for (;;) {
        int status;
        pid_t done;
        while ((done = waitpid(-1, &status, WNOHANG)) > 0 && done != pid) {}
        if (done == pid) {
            /* Orphans (dbus-broker gets SIGTERM when its launcher dies) are reaped here, for
             * at most 2 s; ECHILD means none is left. */
            for (int tries = 0; tries < 200; tries++) {
                pid_t orphan = waitpid(-1, NULL, WNOHANG);
                if (orphan < 0 && errno == ECHILD) break;
                if (orphan == 0) usleep(10000);
            }
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        struct pollfd readable = { .fd = sink, .events = POLLIN };
        if (poll(&readable, 1, 50) > 0) {
            ssize_t n = recv(sink, record, sizeof record, 0);
            if (n > 0) { fwrite(record, 1, (size_t)n, stderr); fputc('\n', stderr); }
        }
    }
}
