import LaunchServicesClient
import LaunchServicesProtocol

/// The one place that decides what each message from the daemon does: which delegate method
/// runs for a phase, what the app answers, how notifications move the state, how replies to
/// the app's own opens reach their completions. The socket runtime and the testing kit's
/// driver both feed messages through `handle(_:)`, so they cannot drift apart.
extension Application {
    /// Handles one message from the daemon and returns the reply to send under the same id:
    /// a `phaseResult` for `launchMethod` and `deliver`, `nil` for everything else. Throws
    /// for a `failure` with id 0 (the daemon refused the connection) and for messages only
    /// an app sends (a protocol violation).
    package func handle(_ envelope: Envelope) throws(ClientError) -> Message? {
        switch envelope.message {
        case .launchMethod(let phase, let delivery):
            guard let delegate else { return nil }
            var options = LaunchOptions(urlString: delivery.url, sourceApplication: delivery.sourceApplication, annotation: delivery.annotation)
            options.inBackground = delivery.background
            let accepted = phase == .willFinishLaunching
                ? delegate.willFinishLaunching(self, options: options)
                : delegate.didFinishLaunching(self, options: options)
            if !accepted { launchVetoed = true }
            return .phaseResult(accepted: accepted, method: nil)
        case .deliver(let delivery):
            guard let delegate else { return nil }
            // Written at the hello, before the daemon read the NO: not for the delegate.
            if delivery.ofLaunch && launchVetoed { return nil }
            deliveryTrace = DeliveryTrace()
            var accepted = false
            currentDeliveryWarning = delivery.warning
            // Opened in the background (`lsopen --background`): the app is not frontmost.
            openedInBackground = delivery.background
            if delivery.background, state != .active { state = .background }
            if let url = try? ParsedURL(delivery.url) {
                accepted = delegate.open(self, url: url, sourceApplication: delivery.sourceApplication, annotation: delivery.annotation)
            }
            currentDeliveryWarning = nil
            openedInBackground = false
            let method: DeliveryMethod = !deliveryTrace.modernIsDefault ? .open : (!deliveryTrace.legacyIsDefault ? .handleOpen : .none)
            return .phaseResult(accepted: accepted, method: method)
        case .notify(let notification):
            guard let delegate else { return nil }
            switch notification {
            case .didBecomeActive:
                state = .active
                delegate.didBecomeActive(self)
            case .willResignActive:
                state = .inactive
                delegate.willResignActive(self)
            case .didEnterBackground:
                state = .background
                delegate.didEnterBackground(self)
            case .willEnterForeground:
                state = .inactive
                delegate.willEnterForeground(self)
            }
            return nil
        case .openResult(let outcome):
            openCompletions.removeValue(forKey: envelope.id)?(outcome)
            return nil
        case .failure(let error):
            if envelope.id == 0 { throw .refused(error) }
            openCompletions.removeValue(forKey: envelope.id)?(.failure(error))
            return nil
        case .welcome(_, let identity):
            bundleIdentifier = identity
            if declaredBundlePath != nil { state = .background }
            return nil
        case .canOpenResult, .queryResult, .callbackAddress, .callback, .pasteboardResult:
            return nil
        case .hello, .open, .canOpen, .query, .command, .phaseResult, .awaitCallback, .pasteboard:
            throw .protocolViolation("the daemon sent an app-to-daemon message (\(envelope.message.kindName))")
        }
    }

    /// The daemon closed the connection: the app is about to exit (`willTerminate`).
    package func connectionClosed() {
        state = .notRunning
        delegate?.willTerminate(self)
    }
}

extension Message {
    /// Daemon-initiated messages, whose ids are the daemon's, not replies to the app.
    var isDaemonCommand: Bool {
        switch self {
        case .launchMethod, .deliver, .notify: return true
        default: return false
        }
    }
}
