import LaunchServicesCore
import Logging
import NIOCore

/// The opening room's desktop half: an open whose handler is a desktop entry, carried out as
/// `DesktopOpenPlan` says (over D-Bus, or by the entry's Exec line as the user's process) and
/// answered with what is known (`OpenOutcome.desktop`). It never waits on the app: the
/// launcher answers after its grace, the bus with its reply, each bounded.
///
/// Desktop apps have no lifecycle here (no check-in, no phases, no front): the state machine
/// never hears of them. What the daemon keeps of them is the launcher's watch while they live
/// (`runningApps`, `lsctl running`). Confined to the loop.
final class DesktopOpening {
    private let loop: EventLoop
    private let logger: Logger
    private let records: OpenRecords
    private let connections: ConnectionTable
    private let launcher: any DesktopLaunching
    /// Nil when the daemon has no session bus to speak of: every entry runs its Exec line.
    private let activator: (any DBusActivating)?
    /// Opens handed to a launch and not yet answered.
    private var inFlight: Set<LaunchToken> = []

    init(loop: EventLoop, logger: Logger, records: OpenRecords, connections: ConnectionTable, launcher: any DesktopLaunching,
         activator: (any DBusActivating)?) {
        self.loop = loop
        self.logger = logger
        self.records = records
        self.connections = connections
        self.launcher = launcher
        self.activator = activator
    }

    /// Opens `url` in `candidate` for the open `token` stands for (its ledger entry begun);
    /// answers it exactly once.
    func open(_ url: String, in candidate: DesktopCandidate, token: LaunchToken) {
        inFlight.insert(token)
        let id = candidate.id
        switch DesktopOpenPlan.plan(for: candidate, urls: [url]) {
        case .failure(let failure):
            answer(token, .desktop(id, .failed(failure)))
        case .success(.exec(let request)):
            launch(request, token: token)
        case .success(.dbus(let busName, let fallback)):
            guard let activator else {
                return execInstead(of: busName, fallback: fallback, because: "the daemon has no session bus", id: id, token: token)
            }
            activator.open(busName: busName, urls: [url], platformData: DBusPlatformData()) { [self] outcome in
                if case .dbus(let failure)? = outcome.failure, let request = DesktopOpenPlan.afterDBusFailure(failure, fallback: fallback) {
                    logger.notice("\(id): no session bus (\(failure)); running its Exec line, as GLib does", metadata: ["desktop_id": "\(id)"])
                    return launch(request, token: token)
                }
                answer(token, .desktop(id, outcome))
            }
        }
    }

    /// A D-Bus activatable entry when there is no bus at all: its Exec line, or its failure.
    private func execInstead(of busName: String, fallback: Result<DesktopLaunchRequest, DesktopLaunchFailure>, because reason: String, id: String,
                             token: LaunchToken) {
        switch fallback {
        case .success(let request):
            logger.notice("\(id) is D-Bus activatable (\(busName)) but \(reason): running its Exec line, as GLib does", metadata: ["desktop_id": "\(id)"])
            launch(request, token: token)
        case .failure(let failure):
            answer(token, .desktop(id, .failed(failure)))
        }
    }

    private func launch(_ request: DesktopLaunchRequest, token: LaunchToken) {
        launcher.launch(request) { [self] outcomes in
            answer(token, .desktop(request.desktopID, OpenOutcome.combining(outcomes)))
        }
    }

    private func answer(_ token: LaunchToken, _ outcome: OpenOutcome) {
        guard inFlight.remove(token) != nil else { return }
        let caller = records.answer(token, outcome)
        connections.flushAtEndOfTick()
        if let caller, caller.finishedSending { connections.closeIfDone(caller) }
    }

    /// Of `tokens`, the opens a launch still owes an answer (their callers' leaving does not
    /// withdraw them: the app is being started either way).
    func owed(among tokens: Set<LaunchToken>) -> Set<LaunchToken> { tokens.intersection(inFlight) }

    /// The desktop apps the daemon started that still live.
    var runningApps: [RunningDesktopApp] { launcher.runningApps }

    /// The stop: every launch still owed an answer is answered with what is known (the
    /// launcher's own stop); the apps keep running.
    func shutdown() {
        launcher.shutdown()
    }
}
