import LaunchServicesCore
import LaunchServicesProtocol
import LaunchServicesTesting
import Testing

/// The in-process daemon's work off the loop (bundle reads, password hashes) runs on its
/// embedded loop, not on threads: it is done once the daemon has settled, in order, and
/// nothing touches the loop from another thread. (It once ran on the daemon's threads, so
/// the answer was not there after `settle()`.)
@Suite struct InProcessWorkersTests {
    @Test func registeringABundleIsAnsweredOnceTheDaemonHasSettled() throws {
        let folder = try TemporaryFolder(prefix: "ls-kit-register")
        defer { _ = folder.remove() }
        let bundle = folder.path + "/Notes.app"
        try BundleFiles.write(bundle: bundle, infoPlist: BundleFiles.infoPlist(id: "com.example.notes", executable: "true", schemes: ["notes"]),
                              executable: "/bin/true")
        let daemon = InProcessDaemon()
        let client = daemon.connect()
        let id = client.send(.command(verb: AdminVerb.register.verb, arguments: [bundle]))
        let answer = client.answer(to: id)
        guard case .queryResult(let json)? = answer else {
            Issue.record("no answer to register after settling: \(String(describing: answer))")
            return
        }
        #expect(json.contains("com.example.notes"))
        #expect(client.open("notes://today")?.opened == true)
    }

    @Test func pasteboardPasswordWorkIsAnsweredOnceTheDaemonHasSettled() throws {
        let daemon = InProcessDaemon()
        let client = daemon.connect()
        let copy = client.send(.pasteboard(PasteboardRequest(.copy, name: "secrets", items: [PasteboardItem(text: "s3cret")], password: "pw")))
        guard case .pasteboardResult(let snapshot)? = client.answer(to: copy) else {
            Issue.record("no answer to a copy with a password after settling")
            return
        }
        #expect(snapshot.passwordProtected)
        let paste = client.send(.pasteboard(PasteboardRequest(.paste, name: "secrets", password: "pw")))
        guard case .pasteboardResult(let pasted)? = client.answer(to: paste) else {
            Issue.record("no answer to a paste with the password after settling")
            return
        }
        #expect(pasted.items == [PasteboardItem(text: "s3cret")])
        // A wrong password is answered after its delay: the test's clock, not a thread.
        let wrong = client.send(.pasteboard(PasteboardRequest(.paste, name: "secrets", password: "nope")))
        #expect(client.answer(to: wrong) == nil)
        daemon.advance(by: .seconds(2))
        guard case .failure(let error)? = client.answer(to: wrong) else {
            Issue.record("no answer to a wrong password after its delay")
            return
        }
        #expect(error.code == .notPermitted)
        #expect(client.undecodableFrames.isEmpty)
    }

    /// The wall clock is the test's too: a pasteboard expires when the loop's clock passes
    /// its time, at every run alike (it once read the system clock, which `advance` does not move).
    @Test func pasteboardsExpireWithTheLoopsClock() throws {
        let daemon = InProcessDaemon()
        let client = daemon.connect()
        let copy = client.send(.pasteboard(PasteboardRequest(.copy, name: "brief", items: [PasteboardItem(text: "soon gone")], expireSeconds: 5)))
        guard case .pasteboardResult? = client.answer(to: copy) else {
            Issue.record("no answer to a copy after settling")
            return
        }
        daemon.advance(by: .seconds(6))
        let paste = client.send(.pasteboard(PasteboardRequest(.paste, name: "brief")))
        guard case .pasteboardResult(let pasted)? = client.answer(to: paste) else {
            Issue.record("no answer to a paste after settling")
            return
        }
        #expect(pasted.items.isEmpty)
    }

    /// The apps folders' watcher is the test's: a change it reports is rescanned on the
    /// loop's clock, without inotify or a thread.
    @Test func aFolderChangeIsRescannedOnTheLoopsClock() throws {
        let folder = try TemporaryFolder(prefix: "ls-kit-watch")
        defer { _ = folder.remove() }
        var configuration = InProcessDaemon.defaultConfiguration
        configuration.appsFolders = [folder.path]
        configuration.watchAppsFolders = true
        let daemon = InProcessDaemon(configuration: configuration)
        try daemon.loadAppsFolders()
        let client = daemon.connect()
        #expect(client.open("notes://today")?.error?.code == .noHandler)
        try BundleFiles.write(bundle: folder.path + "/Notes.app", infoPlist: BundleFiles.infoPlist(id: "com.example.notes", executable: "true", schemes: ["notes"]),
                              executable: "/bin/true")
        daemon.appsFoldersChanged()
        daemon.advance(by: .milliseconds(300))
        #expect(client.open("notes://today")?.opened == true)
    }
}
