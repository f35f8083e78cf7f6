#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesClient

/// An app's own files, in its own folder: `$XDG_DATA_HOME/BUNDLE-ID` (else
/// `~/.local/share/BUNDLE-ID`), created owner-only on first use. What an iOS app keeps in
/// its container lives here: its data, its credentials, its defaults. Plain POSIX, so apps
/// start without Foundation.
public struct AppStorage: Sendable {
    public let folder: String
    /// Files larger than this are not read (every buffer has a limit).
    public static let maximumFileSize = 16 << 20

    public init(bundleIdentifier: String) {
        let base: String
        if let data = getenv("XDG_DATA_HOME").map({ String(cString: $0) }), !data.isEmpty {
            base = data
        } else {
            base = (getenv("HOME").map { String(cString: $0) } ?? "/tmp") + "/.local/share"
        }
        folder = base + "/" + bundleIdentifier
    }

    public func path(_ name: String) -> String { folder + "/" + name }

    /// The file's bytes, or `nil` when it does not exist or cannot be read.
    public func read(_ name: String) -> [UInt8]? {
        let fd = open(path(name), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count <= Self.maximumFileSize {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return n == 0 ? bytes : nil }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return nil
    }

    public func readText(_ name: String) -> String? {
        read(name).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Replaces the file atomically (a temporary file, fsync, rename), so a crash leaves the
    /// old contents or the new, never half of either.
    public func write(_ name: String, _ bytes: [UInt8]) throws(ClientError) {
        try makeFolder()
        let target = path(name)
        let temporary = target + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system(call: "creating \(temporary)", errno: errno) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let code = errno
                close(fd)
                unlink(temporary)
                throw .system(call: "writing \(temporary)", errno: code)
            }
            offset += n
        }
        fsync(fd)
        close(fd)
        guard rename(temporary, target) == 0 else {
            let code = errno
            unlink(temporary)
            throw .system(call: "renaming to \(target)", errno: code)
        }
    }

    public func write(_ name: String, text: String) throws(ClientError) {
        try write(name, Array(text.utf8))
    }

    /// Appends one line (a log, an outbox), creating the file when needed.
    public func appendLine(_ name: String, _ line: String) throws(ClientError) {
        try makeFolder()
        let fd = open(path(name), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system(call: "opening \(path(name))", errno: errno) }
        defer { close(fd) }
        let bytes = Array((line + "\n").utf8)
        let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard n == bytes.count else { throw .system(call: "appending to \(path(name))", errno: errno) }
    }

    func makeFolder() throws(ClientError) {
        var current = ""
        for part in folder.split(separator: "/") {
            current += "/" + part
            if mkdir(current, 0o700) != 0 && errno != EEXIST { throw .system(call: "creating \(current)", errno: errno) }
        }
    }
}

/// Small persistent settings, after `NSUserDefaults`: one `key=value` line each (both
/// percent-encoded) in the app's `defaults` file, rewritten atomically on every change.
public struct AppDefaults: Sendable {
    let storage: AppStorage
    static let file = "defaults"

    public init(storage: AppStorage) { self.storage = storage }

    public func string(_ key: String) -> String? { all()[key] }
    public func bool(_ key: String) -> Bool { all()[key] == "true" }

    public func set(_ value: String?, for key: String) throws(ClientError) {
        var values = all()
        values[key] = value
        let text = values.keys.sorted().map { PercentEncoding.encodeComponent($0) + "=" + PercentEncoding.encodeComponent(values[$0]!) }.joined(separator: "\n")
        try storage.write(Self.file, text: text + "\n")
    }

    public func set(_ value: Bool, for key: String) throws(ClientError) { try set(value ? "true" : "false", for: key) }

    func all() -> [String: String] {
        guard let text = storage.readText(Self.file) else { return [:] }
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            values[PercentEncoding.decode(line[..<eq])] = PercentEncoding.decode(line[line.index(after: eq)...])
        }
        return values
    }
}

extension Application {
    /// This app's own folder (see `AppStorage`).
    public var storage: AppStorage { AppStorage(bundleIdentifier: bundleIdentifier) }
    /// This app's persistent settings (see `AppDefaults`).
    public var defaults: AppDefaults { AppDefaults(storage: storage) }
}
