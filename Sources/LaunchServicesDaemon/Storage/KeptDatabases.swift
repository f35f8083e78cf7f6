import Foundation
import LaunchServicesProtocol

/// A damaged database kept in the state folder, as the folder's listing shows it: what
/// `lsctl status` names at every start until the user removes it (a restart or a reboot does
/// not make the daemon forget it). The name says which database and when it was set aside
/// (`registry.sqlite.damaged-20261125T102533Z`, `-2` … for a second one in the same second);
/// what was found and lost is in the log of that start, and is not read again from the kept
/// file: a start lists the folder, it does not read kept files, however large.
struct KeptDatabase: Equatable, Sendable {
    /// Where the database was, e.g. `STATE/registry.sqlite`.
    var file: String
    /// The kept file: the database itself, or its `-wal` when only the log was there.
    var keptAs: String
    /// When it was set aside, to the second (ISO-8601 UTC, from the name).
    var time: String

    /// The report of a file kept at an earlier start (one set aside at this start has its own,
    /// `DamagedDatabase.report`, with what was found and lost; this one stands in for it only
    /// if the user moved part of it away meanwhile, so it names the start by its time).
    var report: DamagedDatabaseReport {
        DamagedDatabaseReport(file: file, keptAs: keptAs,
                              reason: "found damaged by the daemon that started at \(time); the log of that start says why",
                              lost: "as the daemon's log of \(time) says (an error naming this file; journalctl --user -u launchservicesd)",
                              time: time)
    }
}

/// The state folder's kept databases: found by their names, and reported with what this
/// start knows of them.
enum KeptDatabases {
    /// The kept databases in `folder`, oldest first; none when it cannot be listed.
    static func list(in folder: String) -> [KeptDatabase] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return kept(names, in: folder)
    }

    /// The kept databases among `names` (a folder's entries): each kept name with its
    /// `-wal`/`-shm` is one, named by the database file if it is there, else by its log.
    static func kept(_ names: [String], in folder: String) -> [KeptDatabase] {
        var groups: [String: (database: String, time: String, suffixes: Set<String>)] = [:]
        for name in names {
            guard let parsed = parse(name) else { continue }
            groups[parsed.kept, default: (parsed.database, parsed.time, [])].suffixes.insert(parsed.suffix)
        }
        return groups.map { kept, group in
            let suffix = ["", "-wal", "-shm"].first { group.suffixes.contains($0) } ?? ""
            return KeptDatabase(file: folder + "/" + group.database, keptAs: folder + "/" + kept + suffix, time: group.time)
        }.sorted { ($0.time, $0.keptAs) < ($1.time, $1.keptAs) }
    }

    /// `registry.sqlite.damaged-20261125T102533Z-2-wal` → the database's name
    /// (`registry.sqlite`), the kept name without the companion's suffix, the time
    /// (`2026-11-25T10:25:33Z`) and the suffix (`-wal`); `nil` for any other name.
    static func parse(_ name: String) -> (database: String, kept: String, time: String, suffix: String)? {
        let marker = ".damaged-"
        // Only the daemon's own kind of file: `NAME.sqlite.damaged-…`.
        guard let range = name.range(of: marker, options: .backwards), name[..<range.lowerBound].hasSuffix(".sqlite") else { return nil }
        var rest = name[range.upperBound...]
        var suffix = ""
        for companion in ["-wal", "-shm"] where rest.hasSuffix(companion) {
            suffix = companion
            rest = rest.dropLast(companion.count)
        }
        let parts = rest.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 1 || (parts.count == 2 && !parts[1].isEmpty && parts[1].allSatisfy(\.isASCII) && parts[1].allSatisfy(\.isNumber)),
              let time = ClaimTime.extended(basic: parts[0]) else { return nil }
        return (String(name[..<range.lowerBound]), String(name.dropLast(suffix.count)), time, suffix)
    }

    /// What `status` says: every kept database in the folder now, each set aside at this start
    /// with what was found and lost (`now`), the others as their names tell.
    static func reports(kept: [KeptDatabase], setAsideNow now: [DamagedDatabase]) -> [DamagedDatabaseReport]? {
        let reports = kept.map { kept in now.first { $0.keptAs == kept.keptAs }?.report ?? kept.report }
        return reports.isEmpty ? nil : reports
    }
}
