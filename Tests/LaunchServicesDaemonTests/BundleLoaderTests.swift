import Foundation
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Testing

/// `BundleLoader.scan` and `load` on real folders made for each test and removed after it.
@Suite("BundleLoader on temporary folders")
struct BundleLoaderFolderTests {
    /// An XML Info.plist; `urlTypes` and `extra` are raw XML inserted in the top dictionary.
    static func plist(
        id: String? = "com.example.app", executable: String? = "app",
        urlTypes: String? = "<array><dict><key>CFBundleURLName</key><string>n</string><key>CFBundleURLSchemes</key><array><string>demo</string></array></dict></array>",
        extra: String = ""
    ) -> String {
        var body = ""
        if let id { body += "<key>CFBundleIdentifier</key><string>\(id)</string>\n" }
        if let executable { body += "<key>CFBundleExecutable</key><string>\(executable)</string>\n" }
        if let urlTypes { body += "<key>CFBundleURLTypes</key>\(urlTypes)\n" }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict>
            \(body)\(extra)</dict></plist>
            """
    }

    static func schemes(_ schemes: String...) -> String {
        "<array><dict><key>CFBundleURLSchemes</key><array>" + schemes.map { "<string>\($0)</string>" }.joined() + "</array></dict></array>"
    }

    /// Makes a bundle folder at `path` with `plist` as its Info.plist and, unless `executable`
    /// is nil, an executable file with `mode`.
    @discardableResult
    func makeBundle(at path: String, plist: String, executable: String? = "app", mode: mode_t = 0o755) throws -> String {
        try writeFile(plist, to: path + "/Info.plist")
        if let executable {
            let file = path + "/" + executable
            try writeFile("#!/bin/sh\nexit 0\n", to: file)
            #expect(chmod(file, mode) == 0)
        }
        return path
    }

    /// The refusal `load(bundleAt:)` throws, or `nil` when the bundle loads.
    func loadError(_ path: String) -> BundleError? {
        do {
            _ = try BundleLoader.load(bundleAt: path)
            return nil
        } catch {
            return error
        }
    }

    @Test("a valid bundle loads with every field")
    func validBundle() throws {
        try TemporaryFolder.with { root in
            let path = try makeBundle(at: root + "/Demo.app", plist: Self.plist(
                id: "com.example.Demo",
                urlTypes: Self.schemes("Demo", "demo-two"),
                extra: "<key>CFBundleName</key><string>Demo App</string><key>LSApplicationQueriesSchemes</key><array><string>tel</string></array>"))
            let bundle = try BundleLoader.load(bundleAt: path)
            #expect(bundle.id == "com.example.Demo")
            #expect(bundle.name == "Demo App")
            #expect(bundle.path == path)
            #expect(bundle.executable == "app")
            #expect(bundle.executablePath == path + "/app")
            #expect(bundle.schemes.map(\.normalized) == ["demo", "demo-two"])
            #expect(bundle.queriesSchemes.map(\.normalized) == ["tel"])
            #expect(FileManager.default.isExecutableFile(atPath: bundle.executablePath))
        }
    }

    @Test("a binary property list loads too")
    func binaryPlist() throws {
        try TemporaryFolder.with { root in
            let path = root + "/Binary.app"
            let object: [String: Any] = [
                "CFBundleIdentifier": "com.example.binary",
                "CFBundleExecutable": "app",
                "CFBundleURLTypes": [["CFBundleURLSchemes": ["bin"]]],
            ]
            let data = try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
            #expect(data.starts(with: Array("bplist".utf8)))
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try data.write(to: URL(fileURLWithPath: path + "/Info.plist"))
            try writeFile("#!/bin/sh\n", to: path + "/app")
            #expect(chmod(path + "/app", 0o755) == 0)
            let bundle = try BundleLoader.load(bundleAt: path)
            #expect(bundle.id == "com.example.binary")
            #expect(bundle.schemes.map(\.normalized) == ["bin"])
        }
    }

    @Test("malformed XML is refused as not a valid property list, naming the bundle")
    func malformedXML() throws {
        try TemporaryFolder.with { root in
            let path = try makeBundle(at: root + "/Broken.app", plist: "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>CFBundleIdentifier</key><string>x")
            let error = try #require(loadError(path))
            #expect(error.path == path)
            #expect(error.key == nil)
            #expect(error.problem.hasPrefix("Info.plist is not a valid property list"), "\(error)")
            #expect(error.description.hasPrefix("bundle \(path): Info.plist is not a valid property list"))
        }
    }

    @Test("a bundle without an Info.plist cannot be loaded")
    func noInfoPlist() throws {
        try TemporaryFolder.with { root in
            try FileManager.default.createDirectory(atPath: root + "/Empty.app", withIntermediateDirectories: true)
            let error = try #require(loadError(root + "/Empty.app"))
            #expect(error == BundleError(path: root + "/Empty.app", key: nil, problem: "has no readable Info.plist"))
        }
    }

    @Test("a key of the wrong type is named, with the type expected", arguments: [
        ("CFBundleURLTypes is a string", BundleLoaderFolderTests.plist(urlTypes: "<string>nope</string>"), "CFBundleURLTypes", "has the wrong type (expected an array)"),
        ("CFBundleURLSchemes is a string", BundleLoaderFolderTests.plist(urlTypes: "<array><dict><key>CFBundleURLSchemes</key><string>demo</string></dict></array>"),
         "CFBundleURLTypes[0].CFBundleURLSchemes", "has the wrong type (expected an array)"),
        ("second URL type's schemes hold a number", BundleLoaderFolderTests.plist(urlTypes: "<array><dict><key>CFBundleURLSchemes</key><array><string>a</string></array></dict><dict><key>CFBundleURLSchemes</key><array><integer>1</integer></array></dict></array>"),
         "CFBundleURLTypes[1].CFBundleURLSchemes[0]", "has the wrong type (expected a string)"),
        ("CFBundleIdentifier is a number", BundleLoaderFolderTests.plist(id: nil, extra: "<key>CFBundleIdentifier</key><integer>7</integer>"), "CFBundleIdentifier", "has the wrong type (expected a string)"),
        ("a URL type is a string", BundleLoaderFolderTests.plist(urlTypes: "<array><string>demo</string></array>"), "CFBundleURLTypes[0]", "has the wrong type (expected a dictionary)"),
        ("LSApplicationQueriesSchemes is a dictionary", BundleLoaderFolderTests.plist(extra: "<key>LSApplicationQueriesSchemes</key><dict/>"), "LSApplicationQueriesSchemes", "has the wrong type (expected an array)"),
        ("second URL type's CFBundleURLName is a number", BundleLoaderFolderTests.plist(urlTypes: "<array><dict><key>CFBundleURLName</key><string>a.b</string><key>CFBundleURLSchemes</key><array><string>a</string></array></dict><dict><key>CFBundleURLName</key><integer>3</integer><key>CFBundleURLSchemes</key><array><string>b</string></array></dict></array>"),
         "CFBundleURLTypes[1].CFBundleURLName", "has the wrong type (expected a string)"),
        ("CFBundleURLName is an array", BundleLoaderFolderTests.plist(urlTypes: "<array><dict><key>CFBundleURLName</key><array><string>a.b</string></array><key>CFBundleURLSchemes</key><array><string>a</string></array></dict></array>"),
         "CFBundleURLTypes[0].CFBundleURLName", "has the wrong type (expected a string)"),
    ] as [(String, String, String, String)])
    func wrongType(label: String, plist: String, key: String, problem: String) throws {
        try TemporaryFolder.with { root in
            let path = try makeBundle(at: root + "/Typed.app", plist: plist)
            let error = try #require(loadError(path), "\(label)")
            #expect(error.path == path, "\(label)")
            #expect(error.key == key, "\(label): \(error)")
            #expect(error.problem == problem, "\(label): \(error)")
        }
    }

    @Test("CFBundleURLName is read from each URL type, and is optional")
    func urlNames() throws {
        try TemporaryFolder.with { root in
            let path = try makeBundle(at: root + "/Named.app", plist: Self.plist(urlTypes: """
                <array><dict><key>CFBundleURLName</key><string>com.acme.todolist</string><key>CFBundleURLSchemes</key><array><string>TodoList</string><string>todo</string></array></dict>\
                <dict><key>CFBundleURLSchemes</key><array><string>plain</string></array></dict></array>
                """))
            let bundle = try BundleLoader.load(bundleAt: path)
            #expect(bundle.urlTypes.map(\.name) == ["com.acme.todolist", nil])
            #expect(bundle.urlTypes.map { $0.schemes.map(\.normalized) } == [["todolist", "todo"], ["plain"]])
            #expect(bundle.kind(of: try URLScheme(validating: "todo")) == "com.acme.todolist")
            #expect(bundle.kind(of: try URLScheme(validating: "plain")) == nil)
        }
    }

    static let arrayAtTopLevel = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><array><string>x</string></array></plist>"

    @Test("an Info.plist whose top level is not a dictionary says so, without an empty key")
    func topLevelNotDictionary() throws {
        try TemporaryFolder.with { root in
            let path = try makeBundle(at: root + "/Top.app", plist: Self.arrayAtTopLevel)
            let error = try #require(loadError(path))
            #expect(error.path == path)
            #expect(error.key == nil, "\(error)")
            #expect(error.problem == "Info.plist must hold a dictionary at its top level (<dict> with CFBundleIdentifier, CFBundleExecutable, …)", "\(error)")
            #expect(!error.description.contains(":  "), "\(error)")
        }
    }

    @Test("validation errors from the core come through, naming the key and the bundle")
    func validationError() throws {
        try TemporaryFolder.with { root in
            let noExecutableKey = try makeBundle(at: root + "/NoKey.app", plist: Self.plist(executable: nil))
            #expect(loadError(noExecutableKey)?.key == "CFBundleExecutable")
            #expect(loadError(noExecutableKey)?.path == noExecutableKey)
            let badScheme = try makeBundle(at: root + "/BadScheme.app", plist: Self.plist(urlTypes: Self.schemes("ok", "not ok")))
            #expect(loadError(badScheme)?.key == "CFBundleURLTypes[0].CFBundleURLSchemes")
            let badID = try makeBundle(at: root + "/BadID.app", plist: Self.plist(id: "com example"))
            #expect(loadError(badID)?.key == "CFBundleIdentifier")
        }
    }

    @Test("a missing executable is refused, naming CFBundleExecutable")
    func missingExecutable() throws {
        try TemporaryFolder.with { root in
            let path = try makeBundle(at: root + "/NoExec.app", plist: Self.plist(executable: "runme"), executable: nil)
            let error = try #require(loadError(path))
            #expect(error == BundleError(path: path, key: "CFBundleExecutable", problem: "names 'runme', which does not exist in the bundle",
                                         declaredSchemes: [try URLScheme(validating: "demo")]), "a refused bundle keeps the schemes it declares, for lsctl explain")
        }
    }

    @Test("a file without execute permission is refused, naming CFBundleExecutable", arguments: [mode_t(0o644), 0o600, 0o444])
    func notExecutable(mode: mode_t) throws {
        try TemporaryFolder.with { root in
            let path = try makeBundle(at: root + "/NotExec.app", plist: Self.plist(), mode: mode)
            let error = try #require(loadError(path))
            #expect(error == BundleError(path: path, key: "CFBundleExecutable", problem: "names 'app', which is not executable (chmod +x it)", declaredSchemes: [try URLScheme(validating: "demo")]))
        }
    }

    @Test("an executable that is a folder is refused")
    func executableIsFolder() throws {
        try TemporaryFolder.with { root in
            let path = try makeBundle(at: root + "/Folder.app", plist: Self.plist(), executable: nil)
            try FileManager.default.createDirectory(atPath: path + "/app", withIntermediateDirectories: true)
            let error = try #require(loadError(path))
            #expect(error == BundleError(path: path, key: "CFBundleExecutable", problem: "names 'app', which is a folder, not an executable file", declaredSchemes: [try URLScheme(validating: "demo")]))
        }
    }

    @Test("scan: valid bundles from several folders, in sorted order")
    func scanValid() throws {
        try TemporaryFolder.with { root in
            try makeBundle(at: root + "/one/b.app", plist: Self.plist(id: "com.b", urlTypes: Self.schemes("bee")))
            try makeBundle(at: root + "/one/a.app", plist: Self.plist(id: "com.a", urlTypes: Self.schemes("ay")))
            try makeBundle(at: root + "/two/c.app", plist: Self.plist(id: "com.c", urlTypes: nil))
            let result = BundleLoader.scan(folders: [root + "/one", root + "/two"])
            #expect(result.errors.isEmpty)
            #expect(result.bundles.map(\.id) == ["com.a", "com.b", "com.c"])
            #expect(result.bundles.map(\.path) == [root + "/one/a.app", root + "/one/b.app", root + "/two/c.app"])
        }
    }

    @Test("scan: one bad bundle of each kind does not stop the others")
    func scanMixed() throws {
        try TemporaryFolder.with { root in
            try makeBundle(at: root + "/a-good.app", plist: Self.plist(id: "com.good.a", urlTypes: Self.schemes("ga")))
            try makeBundle(at: root + "/b-malformed.app", plist: "<plist><dict><key>")
            try makeBundle(at: root + "/c-wrongtype.app", plist: Self.plist(id: "com.wrong", urlTypes: "<string>x</string>"))
            try makeBundle(at: root + "/d-noexec.app", plist: Self.plist(id: "com.noexec"), executable: nil)
            try makeBundle(at: root + "/e-notexec.app", plist: Self.plist(id: "com.notexec"), mode: 0o644)
            try makeBundle(at: root + "/f-invalid.app", plist: Self.plist(id: nil))
            try makeBundle(at: root + "/g-good.app", plist: Self.plist(id: "com.good.g", urlTypes: Self.schemes("gg")))
            let result = BundleLoader.scan(folders: [root])
            #expect(result.bundles.map(\.id) == ["com.good.a", "com.good.g"])
            #expect(result.errors.map(\.path) == ["b-malformed", "c-wrongtype", "d-noexec", "e-notexec", "f-invalid"].map { root + "/\($0).app" })
            #expect(result.errors.map(\.key) == [nil, "CFBundleURLTypes", "CFBundleExecutable", "CFBundleExecutable", "CFBundleIdentifier"])
        }
    }

    @Test("scan: a bundle id seen in an earlier folder is refused in a later one; the first is kept")
    func duplicateAcrossFolders() throws {
        try TemporaryFolder.with { root in
            let first = try makeBundle(at: root + "/first/Same.app", plist: Self.plist(id: "com.same", urlTypes: Self.schemes("one")))
            let second = try makeBundle(at: root + "/second/Same.app", plist: Self.plist(id: "com.same", urlTypes: Self.schemes("two")))
            let result = BundleLoader.scan(folders: [root + "/first", root + "/second"])
            #expect(result.bundles.count == 1)
            #expect(result.bundles.first?.path == first)
            #expect(result.bundles.first?.schemes.map(\.normalized) == ["one"])
            #expect(result.errors == [BundleError(
                path: second, key: "CFBundleIdentifier",
                problem: "'com.same' is already registered from \(first); bundle identifiers must be unique",
                declaredSchemes: [try URLScheme(validating: "two")])])

            // The folder order decides, not the names.
            let reversed = BundleLoader.scan(folders: [root + "/second", root + "/first"])
            #expect(reversed.bundles.first?.path == second)
            #expect(reversed.errors.first?.path == first)
        }
    }

    @Test("scan: a duplicate within one folder keeps the first in sorted order")
    func duplicateInOneFolder() throws {
        try TemporaryFolder.with { root in
            try makeBundle(at: root + "/b.app", plist: Self.plist(id: "com.dup", urlTypes: Self.schemes("bee")))
            try makeBundle(at: root + "/a.app", plist: Self.plist(id: "com.dup", urlTypes: Self.schemes("ay")))
            let result = BundleLoader.scan(folders: [root])
            #expect(result.bundles.map(\.path) == [root + "/a.app"])
            #expect(result.errors.map(\.path) == [root + "/b.app"])
        }
    }

    @Test("scan skips hidden entries, folders without Info.plist, plain files and missing folders")
    func scanSkips() throws {
        try TemporaryFolder.with { root in
            try makeBundle(at: root + "/apps/.Hidden.app", plist: Self.plist(id: "com.hidden"))
            try makeBundle(at: root + "/apps/Real.app", plist: Self.plist(id: "com.real"))
            try FileManager.default.createDirectory(atPath: root + "/apps/NoPlist.app", withIntermediateDirectories: true)
            try writeFile("not a bundle", to: root + "/apps/README")
            try writeFile("a file, not a folder", to: root + "/file-not-folder")
            let result = BundleLoader.scan(folders: [root + "/missing", root + "/file-not-folder", root + "/apps"])
            #expect(result.bundles.map(\.id) == ["com.real"])
            #expect(result.errors.isEmpty)
            #expect(BundleLoader.scan(folders: []).bundles.isEmpty)
        }
    }
}

/// `BundleLoader.load` against hostile bundles: what anyone who can write into an apps folder
/// or run `lsctl register` could put there must be refused with a named error, never crash or
/// hang the daemon.
@Suite("BundleLoader: hostile bundles")
struct BundleLoaderHostileTests {
    let helper = BundleLoaderFolderTests()

    func loadError(_ path: String) -> BundleError? { helper.loadError(path) }

    @Test("an Info.plist nested 10,000 levels deep is refused before Foundation parses it", arguments: ["<array>", "<dict><key>k</key>"])
    func deepPlist(open: String) throws {
        let close = open == "<array>" ? "</array>" : "</dict>"
        try TemporaryFolder.with { root in
            let deep = String(repeating: open, count: 10_000) + "<true/>" + String(repeating: close, count: 10_000)
            let path = try helper.makeBundle(at: root + "/Deep.app", plist: BundleLoaderFolderTests.plist(extra: "<key>Deep</key>" + deep))
            let error = try #require(loadError(path))
            #expect(error == BundleError(path: path, key: nil, problem: "Info.plist \(PropertyListBoundsError.tooDeep(limit: 32))"))
            #expect(error.description.contains("nesting depth > 32"), "\(error)")
        }
    }

    @Test("an Info.plist over the size limit is refused, naming the file, its size and the limit")
    func hugePlist() throws {
        try TemporaryFolder.with { root in
            let padding = String(repeating: " ", count: 2 << 20)
            let path = try helper.makeBundle(at: root + "/Huge.app", plist: BundleLoaderFolderTests.plist() + padding)
            let size = try FileManager.default.attributesOfItem(atPath: path + "/Info.plist")[.size] as! Int
            let error = try #require(loadError(path))
            #expect(error.path == path)
            #expect(error.problem == "Info.plist is \(size) bytes, more than the limit of \(1 << 20) bytes; keep only the keys Launch Services reads (real Info.plists are a few KB)", "\(error)")
            // A smaller limit applies the same way, through the bounded read.
            let small = try helper.makeBundle(at: root + "/Small.app", plist: BundleLoaderFolderTests.plist())
            let limits = PropertyListLimits(maximumSize: 100, maximumDepth: 32, maximumObjects: 1_000)
            #expect(throws: BundleError.self) { try BundleLoader.load(bundleAt: small, limits: limits) }
        }
    }

    @Test("a FIFO, a folder or a device named Info.plist is refused at once", .timeLimit(.minutes(1)))
    func specialInfoPlist() throws {
        try TemporaryFolder.with { root in
            let fifo = root + "/Fifo.app"
            try FileManager.default.createDirectory(atPath: fifo, withIntermediateDirectories: true)
            #expect(mkfifo(fifo + "/Info.plist", 0o644) == 0)
            #expect(loadError(fifo) == BundleError(path: fifo, key: nil, problem: "Info.plist is a FIFO, not a regular file; make it a plain file"))

            let folder = root + "/Folder.app"
            try FileManager.default.createDirectory(atPath: folder + "/Info.plist", withIntermediateDirectories: true)
            #expect(loadError(folder)?.problem == "Info.plist is a folder, not a regular file; make it a plain file")

            let device = root + "/Device.app"
            try FileManager.default.createDirectory(atPath: device, withIntermediateDirectories: true)
            #expect(symlink("/dev/zero", device + "/Info.plist") == 0)
            #expect(loadError(device)?.problem == "Info.plist is a device, not a regular file; make it a plain file")
        }
    }

    @Test("an executable that is a symbolic link out of the bundle is refused; one inside is fine")
    func executableOutsideBundle() throws {
        try TemporaryFolder.with { root in
            let outside = try helper.makeBundle(at: root + "/Outside.app", plist: BundleLoaderFolderTests.plist(), executable: nil)
            try writeFile("#!/bin/sh\n", to: root + "/elsewhere/tool")
            #expect(chmod(root + "/elsewhere/tool", 0o755) == 0)
            #expect(symlink(root + "/elsewhere/tool", outside + "/app") == 0)
            let error = try #require(loadError(outside))
            #expect(error == BundleError(path: outside, key: "CFBundleExecutable", problem: "names 'app', which resolves to \(root)/elsewhere/tool, outside the bundle; put the executable itself in the bundle folder", declaredSchemes: [try URLScheme(validating: "demo")]))

            let relative = try helper.makeBundle(at: root + "/Relative.app", plist: BundleLoaderFolderTests.plist(), executable: nil)
            #expect(symlink("../elsewhere/tool", relative + "/app") == 0)
            #expect(loadError(relative)?.key == "CFBundleExecutable")

            let inside = try helper.makeBundle(at: root + "/Inside.app", plist: BundleLoaderFolderTests.plist(), executable: "real")
            #expect(symlink("real", inside + "/app") == 0)
            #expect(loadError(inside) == nil)
        }
    }

    @Test("bundle paths are made canonical; relative paths are refused")
    func canonicalPaths() throws {
        try TemporaryFolder.with { root in
            let real = try helper.makeBundle(at: root + "/apps/Demo.app", plist: BundleLoaderFolderTests.plist())
            try FileManager.default.createDirectory(atPath: root + "/other", withIntermediateDirectories: true)
            #expect(try BundleLoader.load(bundleAt: root + "/other/../apps/./Demo.app").path == real)
            #expect(try BundleLoader.load(bundleAt: real + "/").path == real)
            #expect(symlink(root + "/apps", root + "/link") == 0)
            let viaLink = try BundleLoader.load(bundleAt: root + "/link/Demo.app")
            #expect(viaLink.path == real)
            #expect(viaLink.executablePath == real + "/app")
            #expect(loadError("apps/Demo.app") == BundleError(path: "apps/Demo.app", key: nil, problem: "is not an absolute path; give the bundle folder's full path"))
            #expect(loadError(root + "/apps/Missing.app")?.problem == "has no readable Info.plist: the folder does not exist")
            #expect(loadError(real + "/Info.plist")?.problem == "is not a folder; a bundle is a folder holding Info.plist and the executable")
        }
    }
}
