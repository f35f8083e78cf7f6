/* The demo's desktop app: a small program scripts/demo compiles and describes with desktop
 * entries in a private XDG data folder, as the apps a user already has are described.
 *
 *   lsdemo_handler NOTES URL            appends "PID URL" to NOTES, then stays alive as an
 *                                       app with a window does, until SIGTERM (at most 120 s,
 *                                       so a demo interrupted by SIGKILL leaves nothing behind)
 *   lsdemo_handler --broken URL         says on stderr why it cannot open URL and exits 3, as an
 *                                       app with a broken installation does
 *
 * Plain C, no libraries. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: lsdemo_handler NOTES URL | lsdemo_handler --broken URL\n");
        return 2;
    }
    if (strcmp(argv[1], "--broken") == 0) {
        fprintf(stderr, "lsdemo: cannot open %s\n", argv[2]);
        fprintf(stderr, "lsdemo: its settings file is missing; reinstall lsdemo\n");
        return 3;
    }
    FILE *notes = fopen(argv[1], "a");
    if (notes == NULL) {
        perror(argv[1]);
        return 1;
    }
    fprintf(notes, "%d %s\n", (int)getpid(), argv[2]);
    fclose(notes);
    printf("lsdemo: opened %s\n", argv[2]);
    fflush(stdout);
    /* sleep returns early only for a caught signal, and none is caught: SIGTERM ends it. */
    for (unsigned left = 120; left > 0; left = sleep(left)) {}
    return 0;
}
