import Foundation
import Testing

/// Keeps README.md's "Testing your app" snippet honest: ReadmeExampleTests.swift must be
/// exactly its first two Swift blocks, and the third is InProcessLifecycleTests.readmeExample
/// (so the README's code is the code that compiles and runs).
@Suite struct ReadmeSyncTests {
    @Test func readmeExampleMatchesTheTestFile() throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let readme = try String(contentsOf: tests.appendingPathComponent("../../README.md").standardized, encoding: .utf8)
        let example = try String(contentsOf: tests.appendingPathComponent("ReadmeExampleTests.swift"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "\n## Testing your app\n").dropFirst().first?.components(separatedBy: "\n## ").first)
        let blocks = section.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```").first ?? "" }
        #expect(blocks.count == 3)
        #expect(blocks.prefix(2).joined(separator: "\n") == example)
        // The third, the InProcessDaemon example, is the body of InProcessLifecycleTests.readmeExample.
        let lifecycle = try String(contentsOf: tests.appendingPathComponent("InProcessLifecycleTests.swift"), encoding: .utf8)
        for line in (blocks.dropFirst(2).first ?? "").split(separator: "\n") {
            #expect(lifecycle.contains("        " + line + "\n"), "README line not in InProcessLifecycleTests.readmeExample: \(line)")
        }
    }
}
