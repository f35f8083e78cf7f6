@testable import LaunchServicesDaemon
import LaunchServicesProtocol
import Testing

/// The kept damaged databases as the state folder's names show them (`lsctl status` at
/// every start): which names are kept files, which file names each, and when.
@Suite("Kept databases, from the state folder's names")
struct KeptDatabasesTests {
    @Test("a kept file with its -wal/-shm is one entry, named by the file; a kept log alone is named by the log")
    func groups() {
        let names = [
            "registry.sqlite", "registry.sqlite-wal", "launchservicesd.lock", "logs",
            "registry.sqlite.damaged-20261125T102533Z", "registry.sqlite.damaged-20261125T102533Z-wal",
            "registry.sqlite.damaged-20261125T102533Z-shm",
            "pasteboard.sqlite.damaged-20261124T090000Z-2-wal",
        ]
        let kept = KeptDatabases.kept(names, in: "/s")
        #expect(kept == [
            KeptDatabase(file: "/s/pasteboard.sqlite", keptAs: "/s/pasteboard.sqlite.damaged-20261124T090000Z-2-wal", time: "2026-11-24T09:00:00Z"),
            KeptDatabase(file: "/s/registry.sqlite", keptAs: "/s/registry.sqlite.damaged-20261125T102533Z", time: "2026-11-25T10:25:33Z"),
        ])
    }

    @Test("names that are not kept databases are not taken for them", arguments: [
        "registry.sqlite.damaged-", "registry.sqlite.damaged-2026", "registry.sqlite.damaged-20261125T102533Z-",
        "registry.sqlite.damaged-20261125T102533Z-x", "registry.sqlite.damaged-20261125X102533Z", "notes.txt.damaged-20261125T102533Z",
        ".damaged-20261125T102533Z", "registry.sqlite.damaged-20261125T102533Z.bak",
    ])
    func notKept(name: String) {
        #expect(KeptDatabases.parse(name) == nil)
    }

    @Test("status: a file set aside at this start has what was found and lost; one from an earlier start points to that start's log")
    func reports() {
        let now = DamagedDatabase(file: "/s/registry.sqlite", keptAs: "/s/registry.sqlite.damaged-20261125T102533Z", keptFile: true, companions: [],
                                  reason: "SQLite: corrupt", lost: "2 apps", time: 1_795_602_333_123)
        let earlier = KeptDatabase(file: "/s/pasteboard.sqlite", keptAs: "/s/pasteboard.sqlite.damaged-20261124T090000Z", time: "2026-11-24T09:00:00Z")
        let current = KeptDatabase(file: "/s/registry.sqlite", keptAs: now.keptAs, time: "2026-11-25T10:25:33Z")
        let reports = KeptDatabases.reports(kept: [earlier, current], setAsideNow: [now]) ?? []
        #expect(reports.map(\.keptAs) == [earlier.keptAs, now.keptAs])
        #expect(reports.last == now.report)
        #expect(reports.first?.time == "2026-11-24T09:00:00Z" && reports.first?.lost.contains("2026-11-24T09:00:00Z") == true, "\(reports)")
        // Removed by the user: not named, even if it was set aside at this start.
        #expect(KeptDatabases.reports(kept: [earlier], setAsideNow: [now])?.map(\.keptAs) == [earlier.keptAs])
        #expect(KeptDatabases.reports(kept: [], setAsideNow: [now]) == nil)
    }

    @Test("the basic time stamp of a kept file's name, back to ISO-8601")
    func times() {
        #expect(ClaimTime.extended(basic: "20261125T102533Z") == "2026-11-25T10:25:33Z")
        #expect(ClaimTime.extended(basic: ClaimTime.basic(1_767_323_045_006)) == "2026-01-02T03:04:05Z")
        #expect(ClaimTime.extended(basic: "2026112T102533Z") == nil)
        #expect(ClaimTime.extended(basic: "20261125T10253３Z") == nil)
    }
}
