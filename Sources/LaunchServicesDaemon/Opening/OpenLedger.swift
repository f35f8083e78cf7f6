import LaunchServicesCore

/// The opens the daemon owes an answer: for each request token, the caller and request id
/// to answer, and the scheme, source and URL for the outcome's log line (the URL only to
/// redact it from error texts; it is never logged).
struct OpenLedger {
    struct Entry {
        let connection: ClientConnection
        let id: UInt32
        let scheme: URLScheme
        let source: String
        let url: String
        /// When the daemon received the request (the loop's clock), for the answer's total.
        let received: UInt64
        /// The app the open was handed to.
        var app: String?
        /// Its kind: a native app, or a desktop entry (`app` is then its desktop file ID).
        var kind: HandlerKind = .native
        /// The caller disconnected while the app still had the open: its end is recorded in
        /// `lsctl history`, and nobody is answered.
        var callerLeft = false
    }

    private var entries: [LaunchToken: Entry] = [:]
    private var tokens = LaunchToken.Counter()
    /// Opens answered since the daemon started (`lsctl status`).
    private(set) var served = 0

    /// Records an open and returns its token.
    mutating func begin(_ entry: Entry) -> LaunchToken {
        let token = tokens.take()
        entries[token] = entry
        entry.connection.waiting.insert(token)
        return token
    }

    /// The open `token` answers, now answered (`callerLeft` when nobody waits for it any
    /// more); nil when it is unknown.
    mutating func finish(_ token: LaunchToken) -> Entry? {
        served += 1
        guard let entry = entries.removeValue(forKey: token) else { return nil }
        entry.connection.waiting.remove(token)
        return entry
    }

    /// The caller of `tokens` disconnected. Those the machine still owes (`owed`: sent to an
    /// app) stay, marked `callerLeft`, so their end is still recorded when it comes; the
    /// others (withdrawn from the queue, never delivered) are forgotten and returned.
    mutating func callerLeft(_ tokens: Set<LaunchToken>, owed: Set<LaunchToken>) -> [Entry] {
        var withdrawn: [Entry] = []
        for token in tokens.sorted() {
            if owed.contains(token) {
                entries[token]?.callerLeft = true
            } else if let entry = entries.removeValue(forKey: token) {
                withdrawn.append(entry)
            }
        }
        return withdrawn
    }
}
