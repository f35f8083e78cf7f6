import Foundation
import LaunchServicesTesting

/// Runs a tool on a real pseudo-terminal (Python's `pty`), answering its first question
/// ("Choose …") with a line (or Ctrl-D, for `<EOF>`), so the terminal chooser is tested as a
/// person meets it; and shows what a tool prints on a terminal, where it escapes what the
/// terminal would act on.
extension DaemonHarness {
    static let ptyScript = #"""
    import os, pty, select, sys, time
    answer, argv = sys.argv[1], sys.argv[2:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(argv[0], argv)
    out, sent, status = b"", False, None
    deadline = time.time() + 30
    while time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                data = os.read(fd, 4096)
            except OSError:
                data = b""
            if not data:
                break
            out += data
            if not sent and b"Choose" in out:
                # "<EOF>" is Ctrl-D at the start of a line: the end of input.
                os.write(fd, b"\x04" if answer == "<EOF>" else (answer + "\n").encode())
                sent = True
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(out.decode(errors="replace"))
    sys.exit(os.waitstatus_to_exitcode(status))
    """#

    /// `lsopen ARGUMENTS` on a terminal; `answer` is typed when it asks.
    func lsopenOnTerminal(answer: String, _ arguments: String...) throws -> ToolRun {
        try run("/usr/bin/env", ["python3", "-c", Self.ptyScript, answer, Self.binary("lsopen")] + arguments, timeout: 40)
    }

    /// `lsctl ARGUMENTS` on a terminal (it asks nothing, so nothing is typed). The terminal
    /// writes each newline as CR LF.
    func lsctlOnTerminal(_ arguments: String...) throws -> ToolRun {
        try run("/usr/bin/env", ["python3", "-c", Self.ptyScript, "", Self.binary("lsctl")] + arguments, timeout: 40)
    }
}
