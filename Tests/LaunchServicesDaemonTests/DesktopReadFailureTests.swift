import Foundation
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Testing

/// The reader names what it could not read now (`DesktopLayoutReader.Result.unreadable`),
/// apart from what is not there: the room keeps what was read there before.
@Suite("DesktopLayoutReader: what could not be read now")
struct DesktopReadFailureTests {
    /// In a forked child: lowers the descriptor limit to what is open now plus `more`, so
    /// every open beyond those fails with EMFILE. Measured in the child, after the fork: the
    /// parent's other tests open and close descriptors meanwhile.
    static func allowDescriptors(_ more: Int32) -> Bool {
        let free = dup(0)
        guard free >= 0 else { return false }
        close(free)
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = rlim_t(free + more)
        return setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0
    }

    @Test("out of descriptors: the configuration and applications folders are named unreadable, with the system's reason")
    func descriptorLimit() throws {
        try TemporaryFolder.with(prefix: "ls-desktop-unreadable") { root in
            try writeFile("[Default Applications]\nx-scheme-handler/web=a.desktop\n", to: root + "/config/mimeapps.list")
            try writeFile("[Desktop Entry]\nType=Application\nName=a\nExec=a %u\nMimeType=x-scheme-handler/web;\n", to: root + "/data/applications/a.desktop")
            let environment = ["HOME": root, "XDG_CONFIG_HOME": root + "/config", "XDG_CONFIG_DIRS": root + "/etc",
                               "XDG_DATA_HOME": root + "/data", "XDG_DATA_DIRS": root + "/sys", "PATH": root + "/bin"]
            let status = ForkedChild.run(descriptorLimit: 1 << 16) {
                guard Self.allowDescriptors(0) else { return 99 }
                let read = DesktopLayoutReader().read(environment: environment, home: root)
                let unreadable = Set(read.unreadable.map(\.description))
                guard unreadable.contains("desktop entries folder \(root)/data/applications could not be read (Too many open files)") else { return 1 }
                guard unreadable.contains("desktop entries folder \(root)/config could not be read (Too many open files)") else { return 2 }
                guard read.unreadable.allSatisfy({ $0.reason == "Too many open files" }) else { return 3 }
                guard read.layout.folders[2].entries.isEmpty else { return 4 }
                return 0
            }
            #expect(status == 0)
        }
    }

    @Test("a folder that is there but cannot be opened is named once, as a folder, not once for each file it might hold")
    func folderNamedOnce() throws {
        try TemporaryFolder.with(prefix: "ls-desktop-unreadable") { root in
            try writeFile("[Default Applications]\n", to: root + "/config/mimeapps.list")
            let environment = ["HOME": root, "XDG_CONFIG_HOME": root + "/config", "XDG_CONFIG_DIRS": root + "/etc",
                               "XDG_DATA_HOME": root + "/data", "XDG_DATA_DIRS": root + "/sys", "PATH": root + "/bin"]
            let status = ForkedChild.run(descriptorLimit: 1 << 16) {
                // One at a time is enough: a folder is closed before its files are opened.
                guard Self.allowDescriptors(1) else { return 99 }
                let read = DesktopLayoutReader().read(environment: environment, home: root)
                return read.unreadable.isEmpty && read.layout.folders[0].lists.count == 1 ? 0 : 1
            }
            #expect(status == 0)
            let none = ForkedChild.run(descriptorLimit: 1 << 16) {
                guard Self.allowDescriptors(0) else { return 99 }
                let read = DesktopLayoutReader().read(environment: environment, home: root)
                let config = read.unreadable.filter { $0.path.hasPrefix(root + "/config") }
                guard config.map(\.kind) == [.folder], config[0].path == root + "/config" else { return 1 }
                return read.layout.notes.contains("\(root)/config could not be read: Too many open files") ? 0 : 2
            }
            #expect(none == 0)
        }
    }

    @Test("not there is not unreadable: missing folders and files are read as empty, nothing named")
    func absence() throws {
        try TemporaryFolder.with(prefix: "ls-desktop-unreadable") { root in
            let read = DesktopLayoutReader().read(environment: ["HOME": root, "XDG_CONFIG_HOME": root + "/none", "XDG_CONFIG_DIRS": root + "/no",
                                                                "XDG_DATA_HOME": root + "/nothing", "XDG_DATA_DIRS": root + "/nil"], home: root)
            #expect(read.unreadable.isEmpty)
            #expect(read.layout.notes.isEmpty)
            #expect(read.foldersRead == [root + "/none", root + "/no", root + "/nothing/applications", root + "/nil/applications"],
                    "missing folders are still reported, so they are watched for")
        }
    }
}
