import Foundation
import Testing

/// A folder under the system temporary directory that exists only for the duration of `body`.
/// It is removed afterwards whether `body` returns or throws, and the removal is checked.
func withTemporaryFolder<T>(sourceLocation: SourceLocation = #_sourceLocation, _ body: (String) throws -> T) throws -> T {
    let root = (NSTemporaryDirectory() as NSString).appendingPathComponent("ls-unit-\(UUID().uuidString)")
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    defer {
        try? FileManager.default.removeItem(atPath: root)
        #expect(!FileManager.default.fileExists(atPath: root), "temporary folder \(root) was not removed", sourceLocation: sourceLocation)
    }
    return try body(root)
}

/// Writes `text` to `path`, creating the folders on the way.
func writeFile(_ text: String, to path: String) throws {
    try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try text.write(toFile: path, atomically: true, encoding: .utf8)
}
