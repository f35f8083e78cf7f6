#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore
import LaunchServicesProtocol

/// The administrative plane: every `query` and `command` is parsed into an `AdminRequest`
/// (LaunchServicesProtocol/AdminRequest.swift) and routed here, in one place: inspections
/// to `answer(_:for:)` (+Queries), commands to `execute(_:id:from:)` (+Commands), and the
/// test-only hooks to `debug(_:id:from:)` below.
extension LaunchServicesDaemon {
    func admin(_ envelope: Envelope, from connection: ClientConnection) {
        guard let parsed = AdminRequest.parse(envelope.message) else { return }
        switch parsed {
        case .failure(let error):
            // An app's register or unregister is refused as not permitted whatever its
            // arguments, as it always was; any other ill-formed request is invalid.
            if let verb = error.knownVerb, verb == .register || verb == .unregister, let refusal = refusal(of: verb, from: connection) {
                return send(Envelope(id: envelope.id, refusal), to: connection)
            }
            send(Envelope(id: envelope.id, .failure(OpenError(.invalidRequest, error.description))), to: connection)
        case .success(.query(let query)):
            send(Envelope(id: envelope.id, answer(query, for: connection)), to: connection)
        case .success(.command(let command)):
            execute(command, id: envelope.id, from: connection)
        case .success(.debug(let hook)):
            debug(hook, id: envelope.id, from: connection)
        }
    }

    /// Test-only hooks, each refused unless the daemon was started with its switch.
    private func debug(_ hook: DebugHook, id: UInt32, from connection: ClientConnection) {
        switch hook {
        case .stall:
            // Blocks the event loop for good, so that tests can show the watchdog restarting
            // a stalled daemon. Only with `LAUNCHSERVICES_DEBUG_STALL=1` in the daemon's environment.
            guard configuration.allowDebugStall else {
                send(Envelope(id: id, .failure(OpenError(.notPermitted, "debug-stall is disabled; start launchservicesd with LAUNCHSERVICES_DEBUG_STALL=1 to allow it"))), to: connection)
                return
            }
            logger.warning("debug-stall requested: the event loop stops now")
            // Written by hand, as it always was: `{"stalling": true}` (a `DebugStallReport`).
            send(Envelope(id: id, .queryResult(json: "{\"stalling\": true}")), to: connection)
            flushPending()
            loop.execute { while true { sleep(3600) } }
        }
    }
}
