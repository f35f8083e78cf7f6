import Foundation
import LaunchServicesCore
import LaunchServicesProtocol

// The report types themselves (StatusReport, AppReport, …) are shared with lsctl and the
// tests: LaunchServicesProtocol/AdminReports.swift. Here: how the daemon encodes them and
// builds them from its own values.

enum JSONDocument {
    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }
}

extension PasteboardReport {
    init(_ snapshot: PasteboardSnapshot) {
        // A protected pasteboard's types and sizes stay private too.
        self.init(name: snapshot.name, changeCount: snapshot.changeCount,
                  items: snapshot.passwordProtected ? [] : snapshot.items.map { Item(type: $0.type, bytes: $0.data.count) },
                  bytes: snapshot.passwordProtected ? 0 : snapshot.items.reduce(0) { $0 + $1.data.count },
                  expiresInSeconds: snapshot.expiresInSeconds, persistent: snapshot.persistent,
                  passwordProtected: snapshot.passwordProtected)
    }
}

extension AppReport {
    init(_ app: AppBundle) {
        self.init(id: app.id, name: app.name, path: app.path, executable: app.executable,
                  schemes: app.schemes.map(\.normalized), queriesSchemes: app.queriesSchemes.map(\.normalized).sorted(),
                  urlTypes: app.urlTypes.map(URLTypeReport.init))
    }
}

extension URLTypeReport {
    init(_ type: AppBundle.URLType) {
        self.init(name: type.name, schemes: type.schemes.map(\.normalized))
    }
}

extension ClaimReport {
    /// A claim as reports show it: its time as ISO-8601 in UTC.
    init(_ claim: Registry.Claim) {
        self.init(app: claim.app, since: ClaimTime.iso8601(claim.since))
    }
}
