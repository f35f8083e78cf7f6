import LaunchServicesClient
import LaunchServicesCore

/// What an app asks of the daemon, as one protocol: the socket runtime (`SocketLink`) sends
/// frames, the testing kit's driver records the requests and answers them in memory.
/// `Application`'s public methods go through it and nothing else, so both run the same code.
@MainActor
package protocol ApplicationOutbound: AnyObject {
    /// Sends an open and returns the request id it went under. The outcome comes back later,
    /// as an `openResult` (or `failure`) under that id, through `Application.handle(_:)`.
    func sendOpen(url: String, annotation: PropertyListValue?, returnTo: String?) throws(ClientError) -> UInt32
    /// Whether some app opens `url`'s scheme (a synchronous request).
    func canOpen(url: String) throws(ClientError) -> Bool
    /// Copies to, pastes from or clears a pasteboard (a synchronous request); a refusal is
    /// thrown as `.refused`.
    func pasteboard(_ request: PasteboardRequest) throws(ClientError) -> PasteboardSnapshot
}
