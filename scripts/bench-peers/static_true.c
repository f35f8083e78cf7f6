/* The physical floor of starting a program: built by scripts/bench with `cc -static -O2`
 * (no dynamic loader, no libraries to map), it only returns 0. lsbench times posix_spawn +
 * waitpid of it beside starting the app executable and the cold open. */
int main(void) { return 0; }
