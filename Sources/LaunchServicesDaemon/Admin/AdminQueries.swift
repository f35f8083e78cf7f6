#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import LaunchServicesProtocol
import NIOCore

/// The inspections (`AdminQuery`: `lsctl status`, `apps`, `schemes`, `conflicts`, `running`,
/// `history`, `pasteboards`): JSON documents of the daemon's state (AdminReports.swift),
/// filtered for apps. `schemes` and `conflicts` count desktop entries as handlers too.
extension AdminService {
    /// The schemes an app may learn about: those in its `LSApplicationQueriesSchemes` (the
    /// iOS 9 rule, which every query obeys, not only canOpenURL) and those it declares itself
    /// (an app sees itself: which of its schemes it opens, and who does instead); `nil` for
    /// the user's tools.
    func visibleSchemes(for connection: ClientConnection) -> Set<URLScheme>? {
        guard connection.identity != LaunchServicesDaemon.shellIdentity else { return nil }
        guard let app = registry.registry.apps[connection.identity] else { return [] }
        return app.queriesSchemes.union(app.schemes)
    }

    func answer(_ query: AdminQuery, for connection: ClientConnection) -> Message {
        let registry = registry.registry
        let machine = lifecycle.machine
        let visible = visibleSchemes(for: connection)
        let queryable = visible == nil ? nil : registry.apps[connection.identity]?.queriesSchemes ?? []
        /// Whether an app may be listed: the asker itself, or a handler of a scheme it may
        /// query (the holder of a scheme it only declares is named in that scheme's row).
        func listed(_ app: AppBundle?) -> Bool {
            guard let queryable else { return true }
            guard let app else { return false }
            return app.id == connection.identity || app.schemes.contains { queryable.contains($0) && registry.handler(for: $0)?.id == app.id }
        }
        switch query {
        case .history:
            // Which app opened what for whom is the user's to read, not another app's.
            guard visible == nil else {
                return .failure(OpenError(.notPermitted, "\(connection.identity) is an app; only the user reads the open history (lsctl history)"))
            }
            return .queryResult(json: JSONDocument.encode(records.history.entries))
        case .status:
            return .queryResult(json: JSONDocument.encode(StatusReport(
                version: LaunchServicesDaemon.version, pid: getpid(), socket: socketPath,
                uptimeSeconds: Double(lifecycle.now - started.uptimeNanoseconds) / 1e9,
                appsRegistered: self.registry.counts.apps, schemesRegistered: self.registry.counts.schemes,
                appsRunning: machine.running.count, appsSuspended: machine.running.filter { $0.record.state == .suspended }.count,
                opensServed: records.ledger.served,
                pasteboards: pasteboards.boards.values.filter { !$0.items.isEmpty }.count,
                persistentPasteboards: pasteboards.boards.values.filter { !$0.items.isEmpty && $0.persistent }.count,
                frontmost: machine.frontmost,
                appsFolders: visible == nil ? configuration.appsFolders : [], refusedBundles: visible == nil ? self.registry.refused.map(\.description) : [],
                appLogs: visible == nil ? appLogs : nil,
                // Where the user's files are and what they lost is the user's to read, not an app's.
                damagedDatabases: visible == nil ? storage.reports : nil,
                storageProblems: visible == nil && !storage.problems.isEmpty ? storage.problems : nil,
                unreadableInAppsFolders: visible == nil && !self.registry.unreadable.isEmpty ? self.registry.unreadable.map(\.description) : nil,
                desktopEntries: visible == nil ? DesktopEntriesReport(desktop.statusSummary) : nil)))
        case .apps:
            return .queryResult(json: JSONDocument.encode(registry.apps.values.filter(listed).sorted { $0.id < $1.id }.map { app in
                let own = visible == nil || app.id == connection.identity
                return AppReport(id: app.id, name: app.name, path: app.path, executable: app.executable,
                                 schemes: app.schemes.filter { own || visible!.contains($0) }.map(\.normalized),
                                 queriesSchemes: own ? app.queriesSchemes.map(\.normalized).sorted() : [],
                                 // Another app's URL types: only their visible schemes, and only the types that have one.
                                 urlTypes: app.urlTypes.compactMap { type in
                                     let schemes = type.schemes.filter { own || visible!.contains($0) }
                                     return schemes.isEmpty ? nil : URLTypeReport(name: type.name, schemes: schemes.map(\.normalized))
                                 })
            }))
        case .schemes, .conflicts:
            // Both kinds: a scheme an app declares or a desktop entry can open; a conflict is
            // one more than one handler, of either kind, can open.
            let explanation = SchemeExplanation(self.registry, desktop: desktop)
            let rows = explanation.schemes.compactMap { scheme -> SchemeReport? in
                guard visible?.contains(scheme) ?? true else { return nil }
                guard var row = explanation.row(scheme, onlyConflicts: query == .conflicts) else { return nil }
                // Where the user's files are is the user's to read, not an app's.
                if visible != nil { row.desktopDecidedBy = nil }
                return row
            }
            return .queryResult(json: JSONDocument.encode(rows))
        case .pasteboards:
            return .queryResult(json: JSONDocument.encode(pasteboards.list().map(PasteboardReport.init)))
        case .running:
            var rows = machine.running.filter { listed(registry.apps[$0.app]) }.map {
                RunningReport(id: $0.app, state: $0.record.state.rawValue, pid: $0.record.pid, frontmost: machine.frontmost == $0.app,
                              pendingOpens: $0.record.pendingOpens, phase: $0.record.currentPhase?.rawValue, kind: HandlerKind.native.rawValue)
            }
            // Desktop apps: shown to the user only (an app sees only what it may list).
            if visible == nil {
                rows += desktopRunning().map {
                    RunningReport(id: $0.desktopID, state: "running", pid: $0.pid, frontmost: false, pendingOpens: 0, phase: nil,
                                  kind: HandlerKind.desktop.rawValue, scope: $0.scope)
                }
            }
            return .queryResult(json: JSONDocument.encode(rows))
        }
    }
}
