import Foundation
import Testing

/// Keeps README.md's testing snippets honest: ReadmeExampleTests.swift must be exactly the
/// two Swift blocks of "Testing your app", and the block of "Testing lifecycle scenarios
/// in-process" is InProcessLifecycleTests.readmeExample (so the README's code is the code
/// that compiles and runs).
@Suite struct ReadmeSyncTests {
    let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    func swiftBlocks(ofSection title: String) throws -> [String] {
        let readme = try String(contentsOf: tests.appendingPathComponent("../../README.md").standardized, encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "\n## \(title)\n").dropFirst().first?.components(separatedBy: "\n## ").first)
        return section.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```").first ?? "" }
    }

    @Test func readmeExampleMatchesTheTestFile() throws {
        let example = try String(contentsOf: tests.appendingPathComponent("ReadmeExampleTests.swift"), encoding: .utf8)
        let blocks = try swiftBlocks(ofSection: "Testing your app")
        #expect(blocks.count == 2)
        #expect(blocks.joined(separator: "\n") == example)
    }

    @Test func inProcessExampleIsATest() throws {
        let blocks = try swiftBlocks(ofSection: "Testing lifecycle scenarios in-process")
        #expect(blocks.count == 1)
        let lifecycle = try String(contentsOf: tests.appendingPathComponent("InProcessLifecycleTests.swift"), encoding: .utf8)
        for line in (blocks.first ?? "").split(separator: "\n") {
            #expect(lifecycle.contains("        " + line + "\n"), "README line not in InProcessLifecycleTests.readmeExample: \(line)")
        }
    }
}
