#define _GNU_SOURCE
#include "desktop_launch.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The exit status of a process that is not the caller's child (a desktop app, see
 * desktop_launch.c): only its parent can wait for it, so the status comes from what the
 * kernel shows others. */

/* PIDFD_GET_INFO (Linux 6.13) and PIDFD_INFO_EXIT (6.15), declared here for older headers. */
struct ls_pidfd_info {
    uint64_t mask;
    uint64_t cgroupid;
    uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
    int32_t exit_code;
    uint32_t coredump_mask;
    uint32_t spare;
};
#define LS_PIDFD_GET_INFO _IOWR(0xFF, 11, struct ls_pidfd_info)
#define LS_PIDFD_INFO_EXIT (1ULL << 3)

/* The exit status from PIDFD_GET_INFO, when this kernel keeps it. */
static int ls_pidfd_info_exit(int pidfd, int *status) {
    struct ls_pidfd_info info;
    memset(&info, 0, sizeof(info));
    info.mask = LS_PIDFD_INFO_EXIT;
    if (ioctl(pidfd, LS_PIDFD_GET_INFO, &info) != 0) return 0;
    if ((info.mask & LS_PIDFD_INFO_EXIT) == 0) return 0;
    *status = info.exit_code;
    return 1;
}

int ls_pidfd_exit_status(int pidfd, pid_t pid, int *status) {
    if (ls_pidfd_info_exit(pidfd, status)) return 1;
    /* A zombie's status is field 52 of /proc/PID/stat (Linux 3.5), after the command name in
     * parentheses, which may itself hold spaces and parentheses. */
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int found = 0;
    int code = 0;
    if (fd >= 0) {
        char buffer[2048];
        ssize_t got = read(fd, buffer, sizeof(buffer) - 1);
        close(fd);
        if (got > 0) {
            buffer[got] = '\0';
            char *end = strrchr(buffer, ')');
            if (end != NULL && end[1] == ' ' && end[2] == 'Z') {
                int field = 2;
                for (char *p = end + 1; *p != '\0'; p++) {
                    if (*p != ' ') continue;
                    field++;
                    if (field == 52) {
                        code = 0;
                        for (char *q = p + 1; *q >= '0' && *q <= '9'; q++) code = code * 10 + (*q - '0');
                        found = 1;
                        break;
                    }
                }
            }
        }
    }
    /* Reaped meanwhile: a newer kernel may now know it. */
    if (ls_pidfd_info_exit(pidfd, status)) return 1;
    if (!found) return 0;
    /* Still a zombie after the read (a signal 0 reaches it), so the pid was not reused and
     * the line read was this process's. */
    if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) != 0) return 0;
    *status = code;
    return 1;
}
