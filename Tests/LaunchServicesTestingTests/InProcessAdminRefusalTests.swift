import LaunchServicesCore
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// What an app may not administer is refused with a message that names what it asked for.
@Suite struct InProcessAdminRefusalTests {
    /// A peer that speaks as `com.example.notes` (a process of the running app).
    func appPeer(_ daemon: InProcessDaemon) -> InProcessClient? {
        guard daemon.connect().open("notes://today")?.opened == true, let pid = daemon.app("com.example.notes")?.pid else { return nil }
        return daemon.connect(pid: pid)
    }

    @Test("an app's quit is refused naming quitting, not default handlers")
    func quitRefusalNamesQuit() throws {
        let daemon = InProcessDaemon(apps: [.simulated("com.example.notes", schemes: ["notes"])])
        let app = try #require(appPeer(daemon))
        let id = app.send(.command(verb: AdminVerb.quit.verb, arguments: ["com.example.notes"]))
        guard case .failure(let error)? = app.answer(to: id) else {
            Issue.record("an app's quit was not refused")
            return
        }
        #expect(error.code == .notPermitted)
        #expect(error.message.contains("only the user quits apps"), "\(error.message)")
        #expect(!error.message.contains("default handlers"), "\(error.message)")
    }

    @Test("an app's default is refused naming default handlers")
    func defaultRefusalNamesDefaults() throws {
        let daemon = InProcessDaemon(apps: [.simulated("com.example.notes", schemes: ["notes"])])
        let app = try #require(appPeer(daemon))
        let id = app.send(.command(verb: AdminVerb.default.verb, arguments: ["notes", "com.example.notes"]))
        guard case .failure(let error)? = app.answer(to: id) else {
            Issue.record("an app's default was not refused")
            return
        }
        #expect(error.code == .notPermitted)
        #expect(error.message.contains("only the user sets default handlers"), "\(error.message)")
    }
}
