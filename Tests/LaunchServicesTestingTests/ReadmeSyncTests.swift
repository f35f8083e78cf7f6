import Foundation
import Testing

/// Keeps README.md's "Testing your app" snippet honest: ReadmeExampleTests.swift must be
/// exactly its two Swift blocks (so the README's code is the code that compiles and runs).
@Suite struct ReadmeSyncTests {
    @Test func readmeExampleMatchesTheTestFile() throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let readme = try String(contentsOf: tests.appendingPathComponent("../../README.md").standardized, encoding: .utf8)
        let example = try String(contentsOf: tests.appendingPathComponent("ReadmeExampleTests.swift"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "\n## Testing your app\n").dropFirst().first?.components(separatedBy: "\n## ").first)
        let blocks = section.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```").first ?? "" }
        #expect(blocks.count == 2)
        #expect(blocks.joined(separator: "\n") == example)
    }
}
