import LaunchServicesCore
import LaunchServicesProtocol
import Logging
import NIOCore

/// What the daemon keeps of opens: those it owes an answer (`ledger`) and those answered
/// lately (`history`, for `lsctl history`). It writes each answer: the caller's `openResult`
/// with the total time, the history row, and the outcome's log line. Confined to the loop.
final class OpenRecords {
    private let loop: EventLoop
    private let logger: Logger
    private let connections: ConnectionTable
    /// The opens owed an answer.
    var ledger = OpenLedger()
    /// The recent answers, for `lsctl history`.
    var history = OpenHistory()

    init(loop: EventLoop, logger: Logger, connections: ConnectionTable) {
        self.loop = loop
        self.logger = logger
        self.connections = connections
    }

    /// Answers the open `token` stands for with `outcome`; the connection answered, if its
    /// caller is still there. The outcome is taken (`consuming`) and moved on into the
    /// answer's envelope: each copy of it on the way retained and released all its fields.
    func answer(_ token: LaunchToken, _ outcome: consuming OpenOutcome) -> ClientConnection? {
        let entry = ledger.finish(token)
        // The log line is built only when it will be written: on the open path, at the
        // usual `warning` level, its metadata and phase list cost more than the rest of
        // the answer's bookkeeping.
        if logger.logLevel <= (outcome.error == nil ? .info : .notice) {
            log(outcome, entry)
        }
        guard let entry else { return nil }
        var answered = outcome
        let now = loop.now.uptimeNanoseconds
        answered.totalNanoseconds = now >= entry.received ? now - entry.received : 0
        if answered.handlerKind == nil, answered.app != nil { answered.handlerKind = entry.kind }
        history.record(source: entry.source, via: entry.connection.via, scheme: entry.scheme, answered, callerLeft: entry.callerLeft)
        guard !entry.callerLeft else { return nil }
        connections.send(Envelope(id: entry.id, .openResult(consume answered)), to: entry.connection)
        return entry.connection
    }

    /// Answers an open the daemon decided itself, before any app had it (no handler, a
    /// refusal, a limit): the caller's answer and the history row.
    func answerAtOnce(_ outcome: OpenOutcome, id: UInt32, scheme: URLScheme, to connection: ClientConnection) {
        history.record(source: connection.identity, via: connection.via, scheme: scheme, outcome)
        connections.send(Envelope(id: id, .openResult(outcome)), to: connection)
    }

    /// The caller of `tokens` disconnected: those the machine still owes (`owed`) are
    /// recorded when they end; the others are recorded as withdrawn now.
    func callerLeft(_ tokens: Set<LaunchToken>, owed: Set<LaunchToken>) {
        for entry in ledger.callerLeft(tokens, owed: owed) {
            history.recordWithdrawn(source: entry.source, via: entry.connection.via, scheme: entry.scheme, app: entry.app)
        }
    }

    private func log(_ outcome: OpenOutcome, _ entry: OpenLedger.Entry?) {
        var metadata: Logger.Metadata = ["bundle_id": "\(outcome.app ?? "-")", "outcome": "\(outcome.error?.code.rawValue ?? "opened")"]
        if let entry {
            metadata["url_scheme"] = "\(entry.scheme)"
            metadata["source_application"] = "\(entry.source)"
        }
        if let phase = outcome.error?.phase { metadata["phase"] = "\(phase.rawValue)" }
        if let error = outcome.error, let desktop = outcome.desktop {
            // A desktop app's failure as the log keeps it: what happened, never its stderr lines
            // or a D-Bus error's message, which may quote the URL in any form redaction cannot
            // recognise (its stderr has its own destination: the journal or its log file).
            metadata["desktop_outcome"] = "\(desktop.kind.rawValue)"
            if let pid = desktop.pid { metadata["pid"] = "\(pid)" }
            let status = desktop.exitStatus.map { ": \($0)" } ?? ""
            logger.notice("open failed in \(outcome.app ?? "?") (desktop app: \(desktop.kind.rawValue)\(status); \(error.code.rawValue))", metadata: metadata)
        } else if let error = outcome.error {
            logger.notice("open failed: \(LogRedaction.redact(error.message, urls: entry.map { [$0.url] } ?? []))", metadata: metadata)
        } else if let desktop = outcome.desktop {
            let asked = entry.map { "\($0.scheme): for \($0.source) " } ?? ""
            logger.info("opened \(asked)in \(outcome.app ?? "?") (desktop app: \(desktop))", metadata: metadata)
        } else {
            // Who asked, what opened, and each phase: the line a person reads in the journal.
            let asked = entry.map { "\($0.scheme): for \($0.source) " } ?? ""
            let phases = outcome.timings.map { "\($0.phase.rawValue) \(Milliseconds.text($0.nanoseconds, decimals: 2)) ms" }.joined(separator: ", ")
            // The launch state in lsopen's words (cold, warm, resumed, hot), so the two agree.
            let state = (outcome.launchState ?? (outcome.launched ? .cold : .warm)).rawValue
            logger.info("opened \(asked)in \(outcome.app ?? "?") via \(outcome.method?.rawValue ?? "?") (\(state): \(phases))", metadata: metadata)
        }
    }
}
