import Foundation
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Testing

/// "Is this program installed", as GLib's g_find_program_in_path answers it.
@Suite("ProgramFinder: programs on PATH, as GLib finds them")
struct ProgramFinderTests {
    @Test("the first PATH folder holding an executable file of that name; folders, files without execute bits and missing folders are passed over")
    func search() throws {
        try TemporaryFolder.with { root in
            try writeFile("#!/bin/sh\n", to: root + "/a/tool")
            try writeFile("#!/bin/sh\n", to: root + "/b/tool")
            try writeFile("#!/bin/sh\n", to: root + "/a/plain")
            try FileManager.default.createDirectory(atPath: root + "/a/dir", withIntermediateDirectories: true)
            try writeFile("#!/bin/sh\n", to: root + "/b/dir")
            #expect(chmod(root + "/a/tool", 0o755) == 0 && chmod(root + "/b/tool", 0o755) == 0 && chmod(root + "/b/dir", 0o755) == 0)
            #expect(chmod(root + "/a/plain", 0o644) == 0)
            #expect(symlink(root + "/b/tool", root + "/a/link") == 0)
            var finder = ProgramFinder(path: "\(root)/missing:\(root)/a:\(root)/b")
            #expect(finder.find("tool") == .found(root + "/a/tool"))
            #expect(finder.find("dir") == .found(root + "/b/dir"))
            #expect(finder.find("plain") == .notFound)
            #expect(finder.find("link") == .found(root + "/a/link"), "links are followed")
            #expect(finder.find("nothing") == .notFound)
            #expect(finder.find("") == .notFound)
            #expect(finder.find(root + "/b/tool") == .found(root + "/b/tool"), "a path is that file")
            #expect(finder.find(root + "/a/dir") == .notFound)
            #expect(finder.lookups.count == 8)
        }
    }

    @Test("no PATH at all: GLib's /bin:/usr/bin:.")
    func unset() {
        let finder = ProgramFinder(path: nil)
        #expect(finder.searchPath == "/bin:/usr/bin:.")
        var copy = finder
        #expect(copy.find("sh") == .found("/bin/sh"))
    }
}
