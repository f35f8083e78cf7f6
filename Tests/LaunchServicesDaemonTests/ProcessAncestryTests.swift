import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import LaunchServicesDaemon
import Testing

/// Who a peer's pid is, read from procfs: an ended process is never the user, whatever
/// still holds the connection it made.
@Suite("Process ancestry")
struct ProcessAncestryTests {
    /// The pid of a child that has run and been reaped: it names no process now.
    private func endedPID() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    @Test("an ended process is .gone, not the user")
    func endedIsGone() throws {
        let pid = try endedPID()
        #expect(ProcessAncestry.statFields(of: pid) == nil, "pid \(pid) was reused already")
        #expect(ProcessAncestry.origin(of: pid, daemon: getpid()) { _ in nil } == .gone)
    }

    @Test("a live process: itself an app, below the daemon an orphan, else the user")
    func liveProcess() {
        let me = getpid(), parent = getppid()
        #expect(ProcessAncestry.origin(of: me, daemon: 0) { $0 == me ? "test.me" : nil } == .app("test.me"))
        #expect(ProcessAncestry.origin(of: me, daemon: 0) { $0 == parent ? "test.parent" : nil } == .app("test.parent"))
        #expect(ProcessAncestry.origin(of: me, daemon: parent) { _ in nil } == .orphanOfApp)
        #expect(ProcessAncestry.origin(of: me, daemon: 0) { _ in nil } == .user)
    }
}

/// The `/proc/PID/stat` parser and path, on generated lines: command names with spaces and
/// parentheses, every state letter, parents from 0 to the largest pid; and lines that are not
/// of that shape.
@Suite("ProcessAncestry: /proc/PID/stat parsing")
struct ProcessStatParsingTests {
    func parse(_ line: [UInt8]) -> (state: UInt8, parent: Int32)? {
        line.withUnsafeBytes { ProcessAncestry.parseStat($0) }
    }

    @Test("generated lines: the state and the parent, whatever the command name holds")
    func generated() {
        let seed = UInt64.random(in: 1...UInt64.max)
        var random = SeededGenerator(seed: seed)
        let nameBytes = Array("abc xyz()) (:-_/.".utf8) + [0x09, 0xC3, 0xA9]
        for _ in 0..<5_000 {
            let name = (0..<Int.random(in: 0...15, using: &random)).map { _ in nameBytes.randomElement(using: &random)! }
            let state = Array("RSDZTtWXxKWPI".utf8).randomElement(using: &random)!
            let parent = Int32.random(in: 0...4_194_304, using: &random)
            let pid = Int32.random(in: 1...4_194_304, using: &random)
            let tail = Bool.random(using: &random) ? " 12 34 0 -1 4194560 104 0 0 0 1 0 20 0 1 0 123 4567 89\n" : "\n"
            let line = Array("\(pid) (".utf8) + name + Array(") ".utf8) + [state] + Array(" \(parent)".utf8) + Array(tail.utf8)
            let parsed = parse(line)
            #expect(parsed?.state == state && parsed?.parent == parent, "seed \(seed): \(String(decoding: line, as: UTF8.self))")
        }
    }

    @Test("lines of another shape are refused")
    func malformed() {
        for line in ["", "123 (sh", "123 (sh)", "123 (sh) ", "123 (sh) S", "123 (sh) S ", "123 (sh) S x12 1", "123 (sh) S 1x 1",
                     "123 (sh)S 1 2", "123 (sh)  S 1 2", "123 (sh) S  1 2"] {
            #expect(parse(Array(line.utf8)) == nil, "\(line)")
        }
    }

    @Test("the path: /proc/PID/stat for every number of digits, refused for a negative pid or a small buffer")
    func path() {
        var buffer = [UInt8](repeating: 0xFF, count: 32)
        for pid: Int32 in [0, 7, 10, 99, 12_345, 4_194_304, Int32.max] {
            let made = buffer.withUnsafeMutableBytes { ProcessAncestry.statPath(of: pid, into: $0) }
            #expect(made)
            #expect(String(cString: buffer) == "/proc/\(pid)/stat")
        }
        #expect(!buffer.withUnsafeMutableBytes { ProcessAncestry.statPath(of: -1, into: $0) })
        var small = [UInt8](repeating: 0, count: 12)
        #expect(!small.withUnsafeMutableBytes { ProcessAncestry.statPath(of: 12_345, into: $0) })
    }
}
