/* The URL handler of the gio open and xdg-open peers: the program a private
 * lsbenchpeer-handler.desktop names for x-scheme-handler/lsbenchpeer
 * (Exec=.../lsbenchpeer_handler LOG %u). First thing in main it reads CLOCK_MONOTONIC, then
 * appends "NANOSECONDS PID URL\n" to LOG in one write (O_APPEND) and exits: lsbench times
 * an open from just before it spawns gio or xdg-open until that recorded time (the URL
 * delivered, not the handler's exit), and reaps the handler by the PID on the line.
 * With a third argument "stay" (Exec=.../lsbenchpeer_handler LOG %u stay) it then stays alive,
 * as an app that opens a window does, until a signal ends it (or 60 s pass, so one the bench
 * could not stop never lingers): the desktop rows' handler that is still running after the
 * daemon's grace. Built by scripts/bench into .build-bench/; plain C, no libraries. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    int stay = argc == 4 && strcmp(argv[3], "stay") == 0;
    if (argc != 3 && !stay) { fprintf(stderr, "usage: lsbenchpeer_handler LOG URL [stay]\n"); return 2; }
    char line[4096];
    int n = snprintf(line, sizeof line, "%llu %d %s\n",
                     (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec, (int)getpid(), argv[2]);
    if (n <= 0 || n >= (int)sizeof line) return 1;
    int fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return 1;
    int ok = write(fd, line, (size_t)n) == n;
    close(fd);
    if (ok && stay) {
        /* Not a busy wait: sleep returns early only for a signal that is caught, and none is. */
        for (int left = 60; left > 0; left = (int)sleep((unsigned)left)) {}
    }
    return ok ? 0 : 1;
}
