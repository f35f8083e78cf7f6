import Foundation
import LaunchServicesTesting
import Testing

/// The real-process helpers (Processes/): children stopped by PID and reaped, output
/// captured, scratch folders removed.
@Suite("Process helpers")
struct ProcessesTests {
    @Test("stop() ends a child with SIGTERM and reaps it")
    func stopTerminates() throws {
        try TemporaryFolder.with { root in
            let child = try ChildProcess("/bin/sleep", ["30"], stdout: root + "/out")
            #expect(child.isRunning)
            #expect(child.wait(timeout: 0.05) == nil)
            child.stop()
            #expect(child.exitStatus == 128 + SIGTERM)
            #expect(kill(child.pid, 0) == -1)
        }
    }

    @Test("a child that ignores SIGTERM is killed after the grace period")
    func stopKillsAfterGrace() throws {
        try TemporaryFolder.with { root in
            let child = try ChildProcess("/bin/sh", ["-c", "trap '' TERM; echo ready; exec sleep 30"], stdout: root + "/out")
            try #require(waitFor { ((try? String(contentsOfFile: root + "/out", encoding: .utf8)) ?? "").contains("ready") })
            child.stop(grace: 0.3)
            #expect(child.exitStatus == 128 + SIGKILL)
        }
    }

    @Test("run() returns the exit status and both outputs, and removes its capture files")
    func runCaptures() throws {
        try TemporaryFolder.with { root in
            let run = try ChildProcess.run("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"], scratch: root, timeout: 10)
            #expect(run.status == 3)
            #expect(run.stdout == "out\n")
            #expect(run.stderr == "err\n")
            #expect(try FileManager.default.contentsOfDirectory(atPath: root).isEmpty)
        }
    }

    @Test("a temporary folder is removed after its work, whether that returns or throws")
    func temporaryFolderRemoved() throws {
        let kept = try TemporaryFolder.with { root in
            try writeFile("x", to: root + "/a/b")
            return root
        }
        #expect(!FileManager.default.fileExists(atPath: kept))
        var thrownIn = ""
        #expect(throws: CancellationError.self) {
            try TemporaryFolder.with { root in
                thrownIn = root
                throw CancellationError()
            }
        }
        #expect(!thrownIn.isEmpty && !FileManager.default.fileExists(atPath: thrownIn))
    }

    private func waitFor(_ condition: () -> Bool) -> Bool {
        for _ in 0..<500 where !condition() { usleep(10_000) }
        return condition()
    }
}
