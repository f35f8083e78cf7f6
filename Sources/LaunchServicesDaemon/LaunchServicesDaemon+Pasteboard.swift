import Foundation
import LaunchServicesCore
import LaunchServicesProtocol
import Logging

/// The pasteboards (SPEC §5): the pure rules live in `Pasteboards`; here they meet the clock,
/// JSON validation and the store. A change is saved before it is answered and before it
/// takes effect in memory, so a failed save changes nothing.
extension LaunchServicesDaemon {
    var unixNow: UInt64 { UInt64(max(0, time(nil))) }

    func pasteboard(_ request: PasteboardRequest, from connection: ClientConnection) -> Message {
        loop.assertInEventLoop()
        for item in request.items where request.operation == .copy && PasteboardType.conforms(item.type, to: PasteboardType.json) {
            // JSONSerialization recurses per level: nesting is bounded before it parses.
            do {
                try JSONDepth.check(item.data)
            } catch {
                return .failure(OpenError(.invalidRequest, "the \(item.type) item for pasteboard '\(request.name ?? Pasteboards.general)' \(error); copy it as \(PasteboardType.plainText) or flatten it"))
            }
            guard (try? JSONSerialization.jsonObject(with: Data(item.data), options: [.fragmentsAllowed])) != nil else {
                return .failure(OpenError(.invalidRequest, "the \(item.type) item for pasteboard '\(request.name ?? Pasteboards.general)' is not valid JSON; copy it as \(PasteboardType.plainText) or fix it"))
            }
        }
        var next = pasteboards
        let result: (snapshot: PasteboardSnapshot, changed: Pasteboard?)
        do {
            result = try next.apply(request, now: unixNow)
        } catch {
            logger.info("pasteboard \(request.operation.rawValue) refused: \(error.message)", metadata: ["peer": "\(connection.identity)"])
            return .failure(OpenError(error.code, error.message))
        }
        if let changed = result.changed {
            do {
                try pasteboardStore?.record(changed)
            } catch {
                logger.error("could not save pasteboard '\(changed.name)': \(error)")
                return .failure(OpenError(.unavailable, "pasteboard '\(changed.name)' could not be saved (\(error)); nothing was changed"))
            }
        }
        pasteboards = next
        if request.operation != .paste {
            logger.info("pasteboard '\(result.snapshot.name)' \(request.operation == .copy ? "copied" : "cleared") by \(connection.identity): \(result.snapshot.items.count) items, change \(result.snapshot.changeCount)\(result.snapshot.persistent ? ", persistent" : "")")
        }
        return .pasteboardResult(result.snapshot)
    }

    /// Empties expired pasteboards and forgets the persistent ones among them.
    func expirePasteboards() {
        for board in pasteboards.expireAll(now: unixNow) {
            logger.info("pasteboard '\(board.name)' expired")
            try? pasteboardStore?.record(board)
        }
    }
}
