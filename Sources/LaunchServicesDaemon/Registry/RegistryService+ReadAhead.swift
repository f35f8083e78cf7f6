import LaunchServicesCore
import NIOCore

/// While the registry loads after the socket serves, an open or `canOpen` of one scheme
/// need not wait for every app: that scheme's part of the registry is read ahead on `files`
/// (between two parts of the load, `finish(_:inPartsOn:done:)`) from the rows the load reads,
/// so it resolves as the whole registry will (`RegistryStore.preview(of:)`), and the
/// requests that wait for it alone are answered (`RegistryLoadGate`).
extension RegistryService {
    /// Reads `scheme`'s part ahead of the load (asked by `loadGate`). A read that fails
    /// leaves its requests to the load.
    func readAhead(_ scheme: URLScheme) {
        loop.assertInEventLoop()
        guard isLoading, let store else { return }
        let service = NIOLoopBound(self, eventLoop: loop)
        let loop = self.loop
        files.async { [logger] in
            do {
                let preview = try store.preview(of: scheme)
                loop.execute { service.value.takeReadAhead(preview) }
            } catch {
                logger.warning("could not read '\(scheme)' ahead of the registry's load: \(error); its requests wait for the load")
            }
        }
    }
}
