import Foundation
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Testing

/// The reader names what it could not read now (`DesktopLayoutReader.Result.unreadable`),
/// apart from what is not there: the room keeps what was read there before.
@Suite("DesktopLayoutReader: what could not be read now")
struct DesktopReadFailureTests {
    @Test("out of descriptors: the applications folders and the association files are named unreadable, with the system's reason")
    func descriptorLimit() throws {
        try TemporaryFolder.with(prefix: "ls-desktop-unreadable") { root in
            try writeFile("[Default Applications]\nx-scheme-handler/web=a.desktop\n", to: root + "/config/mimeapps.list")
            try writeFile("[Desktop Entry]\nType=Application\nName=a\nExec=a %u\nMimeType=x-scheme-handler/web;\n", to: root + "/data/applications/a.desktop")
            let environment = ["HOME": root, "XDG_CONFIG_HOME": root + "/config", "XDG_CONFIG_DIRS": root + "/etc",
                               "XDG_DATA_HOME": root + "/data", "XDG_DATA_DIRS": root + "/sys", "PATH": root + "/bin"]
            // Every descriptor from the lowest free one up is over the limit: each open fails.
            let free = dup(0)
            close(free)
            let status = ForkedChild.run(descriptorLimit: rlim_t(free)) {
                let read = DesktopLayoutReader().read(environment: environment, home: root)
                let unreadable = Set(read.unreadable.map(\.description))
                guard unreadable.contains("desktop entries folder \(root)/data/applications could not be read (Too many open files)") else { return 1 }
                guard unreadable.contains("association file \(root)/config/mimeapps.list could not be read (Too many open files)") else { return 2 }
                guard read.unreadable.allSatisfy({ $0.reason == "Too many open files" }) else { return 3 }
                guard read.layout.folders[2].entries.isEmpty else { return 4 }
                return 0
            }
            #expect(status == 0)
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
