import Foundation
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Testing

/// The reader names what it could not read now (`DesktopLayoutReader.Result.unreadable`),
/// apart from what is not there: the room keeps what was read there before. What it cannot
/// read is shown by a real daemon held to a folder's mode (`DesktopEntriesWatchTests`): the
/// tests run as root, and a forked child at the descriptor limit would hold copies of every
/// descriptor the other tests have open (and their locks) while it runs.
@Suite("DesktopLayoutReader: what could not be read now")
struct DesktopReadFailureTests {
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
