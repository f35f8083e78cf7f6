import Foundation
import NIOConcurrencyHelpers

/// `/run/systemd/system`, which a `systemd --user` manager checks for when it starts (it is
/// how systemd tells it booted the machine). Where PID 1 is not systemd (a CI container) the
/// test's managers need it made. Suites run in parallel, so one manager's end must not take
/// it away while another starts: the first manager of this process that needs it makes it,
/// and the last one done removes it, only if this process made it.
public enum SystemdRunMarker {
    public static let path = "/run/systemd/system"
    private static let state = NIOLockedValueBox((users: 0, made: false))

    /// Makes the folder if no one has; pair each call with one `release()`.
    public static func acquire() throws {
        try state.withLockedValue { state in
            if state.users == 0 && !FileManager.default.fileExists(atPath: path) {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
                state.made = true
            }
            state.users += 1
        }
    }

    /// The last user of this process removes the folder if this process made it.
    public static func release() {
        state.withLockedValue { state in
            guard state.users > 0 else { return }
            state.users -= 1
            if state.users == 0 && state.made {
                try? FileManager.default.removeItem(atPath: path)
                state.made = false
            }
        }
    }
}
