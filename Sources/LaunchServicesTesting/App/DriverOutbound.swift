/// What the app asks of the daemon, answered in memory for an `AppDriver`: opens are
/// recorded and answered later with `openResponder`'s outcome, `canOpenURL` is answered from
/// the installed schemes, pasteboard requests hit `MemoryPasteboards`.
import LaunchServicesApp
import LaunchServicesClient
import LaunchServicesCore

@MainActor
final class DriverOutbound: ApplicationOutbound {
    var opens: [AppOpenRequest] = []
    /// Opens sent but not yet answered, by request id, oldest first.
    var pending: [(id: UInt32, request: AppOpenRequest)] = []
    var canOpenQueries: [String] = []
    var installedSchemes: Set<String>
    var openResponder: (AppOpenRequest) -> OpenOutcome
    let pasteboards: MemoryPasteboards
    private var ids = RequestIDs()

    init(installedSchemes: Set<String>, pasteboards: MemoryPasteboards, openResponder: @escaping (AppOpenRequest) -> OpenOutcome) {
        self.installedSchemes = installedSchemes
        self.pasteboards = pasteboards
        self.openResponder = openResponder
    }

    func sendOpen(url: String, annotation: PropertyListValue?, returnTo: String?) throws(ClientError) -> UInt32 {
        let id = ids.take()
        let request = AppOpenRequest(url: url, annotation: annotation, returnTo: returnTo)
        opens.append(request)
        pending.append((id, request))
        return id
    }

    func canOpen(url: String) throws(ClientError) -> Bool {
        canOpenQueries.append(url)
        guard let parsed = try? ParsedURL(url) else { throw .refused(OpenError(.invalidURL, "'\(url)' is not a URL")) }
        return installedSchemes.contains(parsed.scheme.normalized)
    }

    func pasteboard(_ request: PasteboardRequest) throws(ClientError) -> PasteboardSnapshot {
        do {
            return try pasteboards.serve(request)
        } catch {
            throw .refused(OpenError(error.code, error.message))
        }
    }
}
