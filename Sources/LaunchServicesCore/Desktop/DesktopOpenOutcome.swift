extension OpenOutcome {
    /// What the caller of an open hears when desktop entry `id` was launched for it with
    /// `launch`: opened for `delivered`, `running` and `forwarded` (as far as anything can be
    /// known of an app with no check-in), and a named failure otherwise, never "opened":
    ///
    /// - `exited` (within the grace, not status 0): `crashed`, with the status, the pid and
    ///   the last lines of its stderr;
    /// - `failedToStart`: `launchFailed` (what failed, the path and errno; no terminal; an
    ///   Exec line that cannot be used); over D-Bus, `launchFailed` when the bus could not
    ///   start the app or there is no bus, `notHandled` when the app itself answered with an
    ///   error, `timeout` when no answer came; `unavailable` when the daemon could not take
    ///   the launch (too many running, stopping).
    public static func desktop(_ id: String, _ launch: DesktopLaunchOutcome) -> OpenOutcome {
        var kept = launch
        kept.failure = nil
        var outcome = OpenOutcome(app: id, launched: launch.pid != nil, handlerKind: .desktop, desktop: kept)
        let shown = TerminalText.escapingControls(id)
        switch launch.kind {
        case .delivered, .running, .forwarded:
            return outcome
        case .exited:
            var message = "\(shown) " + (launch.exitStatus.map { "\($0)" } ?? "ended (its status is unknown)")
            message += " within the grace" + (launch.pid.map { " (pid \($0))" } ?? "") + ", so the URL may not have reached it"
            if launch.stderrTail.isEmpty {
                message += "; no stderr lines were kept to show (see its log)"
            } else {
                message += "; its last lines on stderr:\n" + launch.stderrTail.map { "  " + $0 }.joined(separator: "\n")
            }
            outcome.error = OpenError(.crashed, message)
        case .failedToStart:
            let failure = launch.failure
            let code: OpenErrorCode
            var message = "could not start \(shown): " + (failure.map { "\($0)" } ?? "the reason is unknown")
            switch failure {
            case .dbus(let call)?:
                message = "\(shown) did not get the URL over D-Bus: \(call)"
                switch call {
                case .errorReply(let name, _) where !name.hasPrefix("org.freedesktop.DBus.Error."): code = .notHandled
                case .noReply: code = .timeout
                case .tooManyCalls, .stopping: code = .unavailable
                default: code = .launchFailed
                }
            case .tooManyRunning?, .stopping?:
                code = .unavailable
            default:
                code = .launchFailed
            }
            outcome.error = OpenError(code, message)
        }
        return outcome
    }

    /// The outcome of opening several processes' worth of one entry (an Exec line that runs
    /// one process per URL, started for one URL runs one): the first failure, else the first.
    public static func combining(_ launches: [DesktopLaunchOutcome]) -> DesktopLaunchOutcome {
        launches.first { !$0.kind.isSuccess } ?? launches.first ?? .failed(.stopping)
    }
}
