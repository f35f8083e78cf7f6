#if canImport(Glibc)
import Glibc
#endif

/// A function run in a forked child with a lowered descriptor limit, so the test process's
/// own limit (and the tests running beside it) are untouched. The child only runs `body`
/// and exits with its result; the parent waits for it with a deadline and kills it by pid
/// if the deadline passes.
enum ForkedChild {
    static func run(descriptorLimit: rlim_t, deadline seconds: Int = 30, _ body: () -> Int32) -> Int32? {
        let pid = fork()
        if pid == 0 {
            var limit = rlimit()
            getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
            limit.rlim_cur = min(descriptorLimit, limit.rlim_max)
            guard setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { _exit(99) }
            _exit(body())
        }
        guard pid > 0 else { return nil }
        var status: Int32 = 0
        for _ in 0..<(seconds * 100) {
            if waitpid(pid, &status, WNOHANG) == pid {
                // WIFEXITED / WEXITSTATUS, which Swift does not import.
                return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            }
            _ = poll(nil, 0, 10)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
        return nil
    }
}
