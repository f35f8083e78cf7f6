/// Which opens the machine still owes an answer, for a daemon whose caller left: the opens it
/// will still answer (sent to an app, not yet answered) are recorded when they end; the
/// others were withdrawn and are recorded as such at once (`lsctl history`).
extension LaunchStateMachine {
    /// Of `tokens`, those sent to an app and not yet answered: the machine will answer each
    /// one (opened, an error, or `unavailable` at shutdown). Ask after `withdraw(tokens)`,
    /// which drops the ones still queued; the rest were never the machine's or are answered.
    public func owed(among tokens: Set<LaunchToken>) -> Set<LaunchToken> {
        guard !tokens.isEmpty else { return [] }
        var owed: Set<LaunchToken> = []
        for record in apps.values {
            for transaction in record.inFlight where !transaction.replied && tokens.contains(transaction.request.token) {
                owed.insert(transaction.request.token)
            }
        }
        return owed
    }
}
