import Foundation
import LaunchServicesCore
import LaunchServicesProtocol
@testable import LaunchServicesDaemon
@testable import LaunchServicesSystemd
import NIOCore
import NIOEmbedded
import Testing

@Suite("Frame decoder (NIO, embedded channel)")
struct FrameDecoderTests {
    func channel(limit: Int = 64) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(maximumLength: limit)))
        return channel
    }

    func body(_ channel: EmbeddedChannel) throws -> [UInt8]? {
        guard var buffer = try channel.readInbound(as: ByteBuffer.self) else { return nil }
        return buffer.readBytes(length: buffer.readableBytes)
    }

    @Test("a frame split across writes comes out whole, once")
    func split() throws {
        let c = try channel()
        let frame = Frame.encode(Envelope(id: 3, .canOpen(url: "x:y")))
        for byte in frame.dropLast() {
            try c.writeInbound(c.allocator.buffer(bytes: [byte]))
            #expect(try body(c) == nil)
        }
        try c.writeInbound(c.allocator.buffer(bytes: [frame.last!]))
        let got = try #require(try body(c))
        #expect(try Envelope.decode(got) == Envelope(id: 3, .canOpen(url: "x:y")))
        #expect(try body(c) == nil)
    }

    @Test("several frames in one write come out one by one")
    func several() throws {
        let c = try channel()
        let frames = (1...3).map { Frame.encode(Envelope(id: UInt32($0), .query(topic: "t\($0)"))) }
        try c.writeInbound(c.allocator.buffer(bytes: frames.flatMap { $0 }))
        for i in 1...3 {
            let got = try #require(try body(c))
            #expect(try Envelope.decode(got).id == UInt32(i))
        }
    }

    @Test("an oversized declared length is refused at once, before the body arrives")
    func oversized() throws {
        let c = try channel(limit: 64)
        #expect(throws: WireError.frameTooLarge(length: 65, limit: 64)) {
            try c.writeInbound(c.allocator.buffer(bytes: [0, 0, 0, 65]))
        }
    }
}

@Suite("Bundle loader")
struct BundleLoaderTests {
    let root: String

    init() throws {
        root = NSTemporaryDirectory() + "lsbundles-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    func bundle(_ folder: String, in parent: String? = nil, plist: String, executable: String? = "app", mode: Int = 0o755) throws {
        let path = (parent ?? root) + "/" + folder
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try plist.write(toFile: path + "/Info.plist", atomically: true, encoding: .utf8)
        if let executable {
            try "#!/bin/sh\n".write(toFile: path + "/" + executable, atomically: true, encoding: .utf8)
            chmod(path + "/" + executable, mode_t(mode))
        }
    }

    static func plist(id: String, scheme: String = "demo", extra: String = "") -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict>
        <key>CFBundleIdentifier</key><string>\(id)</string><key>CFBundleExecutable</key><string>app</string>
        <key>CFBundleURLTypes</key><array><dict><key>CFBundleURLName</key><string>n</string>
        <key>CFBundleURLSchemes</key><array><string>\(scheme)</string></array></dict></array>\(extra)
        </dict></plist>
        """
    }

    @Test("one bad bundle of each kind is refused with a named error; the good one loads")
    func mixed() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        try bundle("good.app", plist: Self.plist(id: "com.good"))
        try bundle("malformed.app", plist: "<plist><dict><key>x")
        try bundle("wrongtype.app", plist: """
            <?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>CFBundleIdentifier</key><string>w</string>
            <key>CFBundleExecutable</key><string>app</string><key>CFBundleURLTypes</key><string>nope</string></dict></plist>
            """)
        try bundle("noexec.app", plist: Self.plist(id: "com.noexec", scheme: "ne"), executable: nil)
        try bundle("notexec.app", plist: Self.plist(id: "com.notexec", scheme: "nx"), mode: 0o644)
        try FileManager.default.createDirectory(atPath: root + "/not-a-bundle", withIntermediateDirectories: true)
        let result = BundleLoader.scan(folders: [root, root + "/missing-folder"])
        #expect(result.bundles.map(\.id) == ["com.good"])
        let errors = result.errors.map(\.description)
        #expect(errors.count == 4, "\(errors)")
        #expect(errors.contains { $0.contains("malformed.app") && $0.contains("not a valid property list") })
        #expect(errors.contains { $0.contains("wrongtype.app") && $0.contains("CFBundleURLTypes") && $0.contains("wrong type") })
        #expect(errors.contains { $0.contains("noexec.app") && $0.contains("does not exist") })
        #expect(errors.contains { $0.contains("notexec.app") && $0.contains("not executable") })
    }

    @Test("a bundle id seen in an earlier folder is refused in a later one; the first is kept")
    func duplicate() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/one", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/two", withIntermediateDirectories: true)
        try bundle("a.app", in: root + "/one", plist: Self.plist(id: "com.same", scheme: "first"))
        try bundle("b.app", in: root + "/two", plist: Self.plist(id: "com.same", scheme: "second"))
        let result = BundleLoader.scan(folders: [root + "/one", root + "/two"])
        #expect(result.bundles.count == 1)
        #expect(result.bundles.first?.schemes.map(\.normalized) == ["first"])
        #expect(result.errors.first?.description.contains("already registered from \(root)/one/a.app") == true)
    }
}

@Suite("Daemon configuration")
struct ConfigurationTests {
    func load(_ json: String) throws -> DaemonConfiguration {
        let path = NSTemporaryDirectory() + "lsconfig-\(UUID().uuidString).json"
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try DaemonConfiguration.load(file: path)
    }

    func problem(_ json: String) -> String {
        do {
            _ = try load(json)
            return "accepted"
        } catch {
            return "\(error)"
        }
    }

    @Test("a file overrides only the keys it names")
    func overrides() throws {
        let c = try load(#"{"deadlines": {"openURL": 0.5}, "appsFolders": ["/x"], "maximumPendingOpensPerApp": 3}"#)
        #expect(c.deadlines.openURL == .milliseconds(500))
        #expect(c.deadlines.launch == PhaseDeadlines().launch)
        #expect(c.appsFolders == ["/x"])
        #expect(c.connectionLimits.maximumPendingRequests == 3)
        #expect(c.maximumFrameLength == DaemonConfiguration().maximumFrameLength)
    }

    @Test("the shipped config/launchservicesd.json is valid and equals the built-in defaults")
    func shipped() throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let c = try DaemonConfiguration.load(file: repo + "/config/launchservicesd.json")
        let d = DaemonConfiguration()
        // Every setting, not a sample: only the apps folder depends on the environment.
        var shipped = c
        shipped.appsFolders = d.appsFolders
        #expect(shipped == d)
        #expect(c.connectionLimits == d.connectionLimits)
        #expect(c.pasteboardLimits == d.pasteboardLimits)
    }

    @Test("bad files name the file and the key")
    func refused() {
        #expect(problem(#"{"deadline": {}}"#).contains("unknown key 'deadline'"))
        #expect(problem(#"{"deadlines": {"openUrl": 1}}"#).contains("deadlines.openUrl"))
        #expect(problem(#"{"deadlines": {"launch": -1}}"#).contains("deadlines.launch"))
        #expect(problem(#"{"maximumFrameLength": 10}"#).contains("maximumFrameLength"))
        #expect(problem(#"{"appsFolders": "x"}"#).contains("appsFolders"))
        #expect(problem(#"{"#).contains("not valid JSON"))
        #expect(problem("[1]").contains("JSON object"))
        #expect(problem(#"{"x": 1}"#).contains("lsconfig-"), "the message names the file")
    }
}

@Suite("Journal fields")
struct JournalFieldTests {
    @Test("metadata keys become valid journal field names")
    func fieldNames() {
        #expect(JournalLogHandler.fieldName("bundle_id") == "BUNDLE_ID")
        #expect(JournalLogHandler.fieldName("url-scheme") == "URL_SCHEME")
        #expect(JournalLogHandler.fieldName("_private") == "PRIVATE")
        #expect(JournalLogHandler.fieldName("1abc") == nil)
        #expect(JournalLogHandler.fieldName("") == nil)
        #expect(JournalLogHandler.priority(.warning) == 4)
        #expect(JournalLogHandler.priority(.debug) == 7)
    }
}

@Suite("Registry store")
struct RegistryStoreTests {
    @Test("10,000 apps and 50,000 schemes round-trip through SQLite and resolve by lookup")
    func scale() throws {
        let folder = NSTemporaryDirectory() + "lsstore-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var store: RegistryStore? = try RegistryStore(folder: folder)
        let apps = (0..<10_000).map { i in
            AppBundle(id: "scale.app\(i)", name: "App \(i)", path: "/p/\(i).app", executable: "x",
                      schemes: (0..<5).map { try! URLScheme(validating: "s\(i)x\($0)") },
                      queriesSchemes: i == 7 ? [try! URLScheme(validating: "q")] : [])
        }
        try store?.replaceFolderApps(apps[0..<5_000].map { ($0, 1) })
        for app in apps[5_000...] { try store?.save(app, source: .manual, registeredAt: 2) }
        try store?.setDefault("scale.app3", for: try URLScheme(validating: "s3x0"))
        // One connection at a time: the store holds its file exclusively until it is closed.
        // Closed explicitly: dropping the last reference left the close to GRDB's deinit, and
        // under load (the full suite on two busy cores) the reopen found the file still locked.
        try store?.close()
        store = nil

        let reopened = try RegistryStore(folder: folder)
        let (stored, defaults) = try reopened.load()
        #expect(stored.count == 10_000)
        #expect(stored.filter { $0.source == .manual }.count == 5_000)
        var registry = Registry()
        for entry in stored { registry.register(entry.app, at: entry.registeredAt) }
        for (scheme, id) in defaults { registry.setDefault(id, for: scheme) }
        #expect(registry.claimants.count == 50_000)
        #expect(registry.handler(for: try URLScheme(validating: "s9999x4"))?.id == "scale.app9999")
        #expect(registry.resolve(try URLScheme(validating: "s3x0"))?.reason == .userDefault)
        #expect(registry.apps["scale.app7"]?.queriesSchemes.count == 1)
        #expect(registry.apps["scale.app42"] == apps[42])

        try reopened.delete("scale.app9999")
        try reopened.replaceFolderApps([])
        #expect(try reopened.load().apps.count == 4_999)
    }
}

@Suite("Socket folder safety")
struct SocketFolderTests {
    @Test("a private folder, a sticky shared one and root's are accepted; open, linked or foreign ones are refused")
    func folders() throws {
        let root = NSTemporaryDirectory() + "lssock-\(getpid())-\(UUID().uuidString.prefix(8))"
        let fm = FileManager.default
        try fm.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? fm.removeItem(atPath: root) }
        for (name, mode) in [("private", 0o700), ("open", 0o777), ("sticky", 0o1777), ("group", 0o770)] {
            try fm.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: false)
            chmod(root + "/" + name, mode_t(mode))
        }
        try fm.createSymbolicLink(atPath: root + "/link", withDestinationPath: root + "/private")
        #expect(throws: Never.self) { try SocketListener.checkSocketFolder(root + "/private") }
        #expect(throws: Never.self) { try SocketListener.checkSocketFolder(root + "/sticky") }
        #expect(throws: Never.self) { try SocketListener.checkSocketFolder("/tmp") }
        for (name, words) in [("open", "writable by others (mode 777)"), ("group", "writable by others (mode 770)"), ("link", "is not a folder"), ("missing", "cannot inspect")] {
            let error = #expect(throws: DaemonError.self) { try SocketListener.checkSocketFolder(root + "/" + name) }
            #expect(error?.description.contains(words) == true, "\(error?.description ?? "")")
        }
        if getuid() == 0 {
            try fm.createDirectory(atPath: root + "/foreign", withIntermediateDirectories: false)
            chmod(root + "/foreign", 0o700)
            chown(root + "/foreign", 65534, 65534)
            let error = #expect(throws: DaemonError.self) { try SocketListener.checkSocketFolder(root + "/foreign") }
            #expect(error?.description.contains("belongs to uid 65534, not to you") == true)
        }
    }
}
