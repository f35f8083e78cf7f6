import Foundation
import Testing
import LaunchServicesProtocol

/// The seed scenarios (README: the demo apps) with the demo apps as shipped: the lite-to-full migration,
/// the tweeter service and the paste service.
@Suite("Seed scenarios")
struct ScenarioAppTests {
    @Test("lite to full: detected with canOpenURL, handed over on a pasteboard, imported exactly once")
    func liteToFull() throws {
        let h = try DaemonHarness(apps: [try .demo("liteapp"), try .demo("fullapp")])
        defer { h.stop() }
        let first = try h.lsopen("--wait", "fullapp://x-callback-url/migrate")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == "imported=3\n")
        let log = h.appOutput
        #expect(log.contains("[fullapp] the lite version is installed: thanks for upgrading! asking it for its data"))
        #expect(log.contains("[liteapp] exported 3 notes to pasteboard 'com.example.numerology.import'; telling the full version"))
        #expect(log.contains("[fullapp] imported 3 notes from the lite version"))
        let notes = try String(contentsOfFile: h.dataHome + "/com.example.numerology/notes", encoding: .utf8)
        #expect(notes.split(separator: "\n").count == 3)
        #expect(try h.lsctl("pasteboard", "paste", "--name", "com.example.numerology.import").stderr.contains("is empty"),
                "the full version clears the hand-over pasteboard")

        let second = try h.lsopen("--wait", "fullapp://x-callback-url/migrate")
        #expect(second.stdout == "imported=0\nreason=alreadyImported\n")
        // The flag is kept in the app's own defaults: a restarted daemon (and app) still knows.
        try h.restart(signal: SIGTERM)
        #expect(try h.lsopen("fullapp://launch").status == 0)
        let third = try h.lsopen("--wait", "fullapp://x-callback-url/migrate")
        #expect(third.stdout == "imported=0\nreason=alreadyImported\n")
        #expect(try String(contentsOfFile: h.dataHome + "/com.example.numerology/notes", encoding: .utf8) == notes, "nothing imported twice")
    }

    @Test("lite to full: no lite version installed; only the full version may ask for an export")
    func liteToFullRefusals() throws {
        let h = try DaemonHarness(apps: [try .demo("fullapp")])
        defer { h.stop() }
        let alone = try h.lsopen("--wait", "fullapp://x-callback-url/migrate")
        #expect(alone.stdout == "imported=0\nreason=noLiteVersion\n")

        let other = try DaemonHarness(apps: [try .demo("liteapp")])
        defer { other.stop() }
        let export = try other.lsopen("--json", "liteapp://export")
        #expect(export.status == 67)
        #expect(export.errorCode == "notHandled")
        #expect(other.appOutput.contains("[liteapp] refusing to export to org.swift-launch-services.lsopen"))
        #expect(try other.lsctl("pasteboard", "list").stdout == "no pasteboards\n")
    }

    @Test("tweeter posts a prefilled message; the credentials never leave the service app")
    func tweeter() throws {
        let h = try DaemonHarness(apps: [try .demo("tweeter")])
        defer { h.stop() }
        let post = try h.lsopen("tweeter://post?message=Hello%20from%20the%20shell")
        #expect(post.status == 0, "\(post.stderr)")
        let reply = try h.lsopen("--wait", "--json", "tweeter://x-callback-url/post?message=second%20post")
        #expect(reply.status == 0)
        let parameters = try #require(reply.json?["parameters"] as? [String: Any])
        #expect(parameters["postId"] as? String == "2")
        #expect(parameters["account"] as? String == "@demo")

        let folder = h.dataHome + "/com.example.tweeter"
        let credentials = try String(contentsOfFile: folder + "/credentials", encoding: .utf8)
        let token = try #require(credentials.split(separator: "\n").first { $0.hasPrefix("token=") }.map { String($0.dropFirst(6)) })
        #expect(token.count >= 16)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: folder + "/credentials")[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        let outbox = try String(contentsOfFile: folder + "/outbox", encoding: .utf8)
        #expect(outbox.contains("1\t@demo\torg.swift-launch-services.lsopen\tHello%20from%20the%20shell"))
        #expect(outbox.contains("second%20post"))
        for text in [outbox, reply.stdout, post.stdout, h.daemonOutput, h.appOutput] {
            #expect(!text.contains(token), "the token stays in the service app's credentials file")
        }

        let empty = try h.lsopen("--json", "tweeter://post?message=")
        #expect(empty.status == 67)
        #expect(empty.errorCode == "notHandled")
        let tooLong = try h.lsopen("--wait", "tweeter://x-callback-url/post?message=" + String(repeating: "a", count: 281))
        #expect(tooLong.status == 70)
        #expect(tooLong.stderr.contains("errorCode tooLong"))
    }

    @Test("the paste service: the cookbook URL puts 'hello world' on test1, protected and expiring")
    func pasteService() throws {
        let h = try DaemonHarness(apps: [try .demo("x-sadun-services")])
        defer { h.stop() }
        let run = try h.lsopen("x-sadun-services:paste?scheme=iping&data=hello+world&clipboard=test1&password=foobar&expire=1500")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try h.lsctl("pasteboard", "paste", "--name", "test1", "--password", "foobar").stdout == "hello world")
        #expect(try h.lsctl("pasteboard", "paste", "--name", "test1").status == 1)
        let list = try h.lsctl("pasteboard", "list", "--json")
        let board = try #require(try list.decode([PasteboardReport].self).first)
        #expect(board.passwordProtected)
        #expect((board.expiresInSeconds ?? 0) > 1400)
        // lsopen owns no scheme 'iping' (and nothing handles it): the return is refused.
        try h.eventually("the service reports the refused return") { h.appOutput.contains("[x-sadun-services] did not return to org.swift-launch-services.lsopen at iping") }

        let copy = try h.lsopen("--wait", "x-sadun-services://x-callback-url/copy?clipboard=test1&password=foobar")
        #expect(copy.stdout == "data=hello world\n")
        let missing = try h.lsopen("--wait", "x-sadun-services://x-callback-url/paste?clipboard=x")
        #expect(missing.status == 70)
        #expect(missing.stderr.contains("errorCode missingData"))
    }
}
