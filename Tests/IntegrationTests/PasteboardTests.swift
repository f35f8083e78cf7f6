import Foundation
import GRDB
import Testing
import LaunchServicesProtocol

/// The daemon's pasteboards through the real `lsctl pasteboard` and shell pipes.
@Suite("Pasteboards")
struct PasteboardTests {
    @Test("echo hi | lsctl pasteboard copy --name test1, then paste prints hi")
    func shellPipe() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        let copy = try h.shell(#"echo hi | "$LSCTL" pasteboard copy --name test1"#)
        #expect(copy.status == 0, "\(copy.stderr)")
        let paste = try h.lsctl("pasteboard", "paste", "--name", "test1")
        #expect(paste.status == 0)
        #expect(paste.stdout == "hi\n")
        // A full pipe: copy from one command, paste into another.
        let piped = try h.shell(#"printf 'a b c' | "$LSCTL" pasteboard copy && "$LSCTL" pasteboard paste | tr a-z A-Z"#)
        #expect(piped.stdout == "A B C")
    }

    @Test("general and named pasteboards, change counts, typed items, clear and list")
    func typesCountsAndList() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        #expect(try h.lsctl("pasteboard", "copy", "--text", "one").status == 0)
        let second = try h.lsctl("pasteboard", "copy", "--text", "two", "--json")
        #expect(second.json?["name"] as? String == "general")
        #expect(second.json?["changeCount"] as? Int == 2)
        #expect(try h.lsctl("pasteboard", "paste").stdout == "two")

        let json = try h.lsctl("pasteboard", "copy", "--name", "doc", "--type", "public.json", "--text", #"{"a": [1, 2]}"#)
        #expect(json.status == 0, "\(json.stderr)")
        #expect(try h.lsctl("pasteboard", "paste", "--name", "doc", "--type", "public.text").stdout == #"{"a": [1, 2]}"#,
                "public.json conforms to public.text")
        let wrongType = try h.lsctl("pasteboard", "paste", "--name", "doc", "--type", "public.png")
        #expect(wrongType.status == 1)
        #expect(wrongType.stderr.contains("has no item of type public.png; it holds public.json"))
        let badJSON = try h.lsctl("pasteboard", "copy", "--name", "doc", "--type", "public.json", "--text", "{nope")
        #expect(badJSON.status == 1)
        #expect(badJSON.stderr.contains("not valid JSON"))

        // Binary data survives byte for byte.
        let bytes: [UInt8] = (0..<256).map { UInt8($0) } + [0, 0xFF, 0x80]
        let file = h.root + "/binary.in"
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        #expect(try h.lsctl("pasteboard", "copy", "--name", "bin", "--type", "public.data", stdin: file).status == 0)
        let notText = try h.lsctl("pasteboard", "copy", "--name", "bin2", stdin: file)
        #expect(notText.status == 1)
        #expect(notText.stderr.contains("not valid UTF-8"))
        let pasted = try h.lsctl("pasteboard", "paste", "--name", "bin", "--json")
        let item = try #require((pasted.json?["items"] as? [[String: Any]])?.first)
        #expect(item["type"] as? String == "public.data")
        #expect((item["base64"] as? String).flatMap { Data(base64Encoded: $0) }.map(Array.init) == bytes)

        let list = try h.lsctl("pasteboard", "list", "--json")
        let boards = try list.decode([PasteboardReport].self)
        #expect(boards.map(\.name) == ["bin", "doc", "general"])
        #expect(!list.stdout.contains("two"), "list never shows data")

        let clear = try h.lsctl("pasteboard", "clear", "--name", "doc", "--json")
        #expect(clear.json?["changeCount"] as? Int == 2)
        let empty = try h.lsctl("pasteboard", "paste", "--name", "doc")
        #expect(empty.status == 1)
        #expect(empty.stderr.contains("pasteboard 'doc' is empty"))
    }

    @Test("size limits, bad names and a password are refused with named errors")
    func limitsAndPasswords() throws {
        let h = try DaemonHarness(apps: [], config: #"{"pasteboard": {"maximumBytes": 1000, "maximumPasteboards": 2}}"#)
        defer { h.stop() }
        let big = h.root + "/big.in"
        try Data(repeating: 0x61, count: 5000).write(to: URL(fileURLWithPath: big))
        let tooBig = try h.lsctl("pasteboard", "copy", "--name", "big", stdin: big)
        #expect(tooBig.status == 1)
        #expect(tooBig.stderr.contains("pasteboard 'big' would hold 5022 bytes; the limit is 1000"))
        #expect(try h.lsctl("pasteboard", "paste", "--name", "big").stderr.contains("is empty"), "nothing was stored")
        let huge = h.root + "/huge.in"
        try Data(repeating: 0x61, count: 2_000_000).write(to: URL(fileURLWithPath: huge))
        let tooHuge = try h.lsctl("pasteboard", "copy", "--name", "big", stdin: huge)
        #expect(tooHuge.status == 1)
        #expect(tooHuge.stderr.contains("2000000 bytes are more than launchservicesd accepts in one message"), "\(tooHuge.stderr)")

        #expect(try h.lsctl("pasteboard", "copy", "--name", "p1", "--text", "1").status == 0)
        #expect(try h.lsctl("pasteboard", "copy", "--name", "p2", "--text", "2").status == 0)
        let third = try h.lsctl("pasteboard", "copy", "--name", "p3", "--text", "3")
        #expect(third.status == 1)
        #expect(third.stderr.contains("2 pasteboards already hold items"))

        let badName = try h.lsctl("pasteboard", "copy", "--name", "", "--text", "x")
        #expect(badName.status == 1)
        #expect(badName.stderr.contains("the pasteboard name is empty"))
        let badType = try h.lsctl("pasteboard", "copy", "--type", "not a type", "--text", "x")
        #expect(badType.stderr.contains("'not a type' is not a type identifier"))

        #expect(try h.lsctl("pasteboard", "clear", "--name", "p2").status == 0)
        #expect(try h.lsctl("pasteboard", "copy", "--name", "secret", "--password", "foobar", "--text", "s3cret").status == 0)
        let noPassword = try h.lsctl("pasteboard", "paste", "--name", "secret")
        #expect(noPassword.status == 1)
        #expect(noPassword.stderr.contains("protected by a password"))
        let wrong = try h.lsctl("pasteboard", "paste", "--name", "secret", "--password", "foobaz")
        #expect(wrong.stderr.contains("wrong password for pasteboard 'secret'"))
        #expect(try h.lsctl("pasteboard", "copy", "--name", "secret", "--text", "overwritten").status == 1, "replacing needs the password too")
        #expect(try h.lsctl("pasteboard", "paste", "--name", "secret", "--password", "foobar").stdout == "s3cret")
        // The password can stay off the command line: a file, or the environment.
        try "foobar\n".write(toFile: h.root + "/pw", atomically: true, encoding: .utf8)
        #expect(try h.lsctl("pasteboard", "paste", "--name", "secret", "--password-file", h.root + "/pw").stdout == "s3cret")
        #expect(try h.shell(#"LSCTL_PASTEBOARD_PASSWORD=foobar "$LSCTL" pasteboard paste --name secret"#).stdout == "s3cret")
        let missingFile = try h.lsctl("pasteboard", "paste", "--name", "secret", "--password-file", h.root + "/nope")
        #expect(missingFile.status == 64)
        #expect(missingFile.stderr.contains("--password-file \(h.root)/nope cannot be read"))
        #expect(!(try h.lsctl("pasteboard", "list").stdout.contains("public.utf8-plain-text (6 bytes)")), "a protected pasteboard's contents stay private")
    }

    @Test("expiry empties a pasteboard and counts as a change")
    func expiry() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        #expect(try h.lsctl("pasteboard", "copy", "--name", "brief", "--expire", "3", "--text", "soon gone").status == 0)
        #expect(try h.lsctl("pasteboard", "paste", "--name", "brief").stdout == "soon gone")
        try h.eventually("the items expire", within: 15) {
            try h.lsctl("pasteboard", "paste", "--name", "brief").stderr.contains("is empty")
        }
        let list = try h.lsctl("pasteboard", "list", "--json")
        let board = try #require(try list.decode([PasteboardReport].self).first)
        #expect(board.changeCount == 2)
        let badExpiry = try h.lsctl("pasteboard", "copy", "--expire", "0", "--text", "x")
        #expect(badExpiry.stderr.contains("out of range"))
    }

    @Test("a kept pasteboard whose save fails: the copy is refused by name and the pasteboard is as it was")
    func failedSaveChangesNothing() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        #expect(try h.lsctl("pasteboard", "copy", "--name", "kept", "--persistent", "--text", "one").status == 0)
        // The disk refuses from the next start on: every write to the pasteboard table aborts.
        // (The daemon holds its database exclusively, so the trigger goes in while it is stopped.)
        let file = h.root + "/state/pasteboard.sqlite"
        try h.restart(signal: SIGTERM) {
            let db = try DatabaseQueue(path: file)
            try db.write { try $0.execute(sql: "CREATE TRIGGER refuse BEFORE INSERT ON pasteboard BEGIN SELECT RAISE(ABORT, 'the disk says no'); END") }
            try db.close()
        }
        let refused = try h.lsctl("pasteboard", "copy", "--name", "kept", "--persistent", "--text", "two")
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("could not be saved") && refused.stderr.contains("nothing was changed"), "\(refused.stderr)")
        #expect(refused.stderr.contains(file) && refused.stderr.contains("the disk says no"), "names the file and SQLite's reason: \(refused.stderr)")
        #expect(try h.lsctl("pasteboard", "paste", "--name", "kept").stdout == "one")
        try h.restart(signal: SIGTERM) {
            let db = try DatabaseQueue(path: file)
            try db.write { try $0.execute(sql: "DROP TRIGGER refuse") }
            try db.close()
        }
        #expect(try h.lsctl("pasteboard", "paste", "--name", "kept").stdout == "one", "the refused copy changed nothing on disk either")
        #expect(try h.lsctl("pasteboard", "copy", "--name", "kept", "--persistent", "--text", "three").status == 0)
        #expect(try h.lsctl("pasteboard", "paste", "--name", "kept").stdout == "three")
    }

    @Test("persistent pasteboards survive SIGKILL and restart; the others do not")
    func persistence() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        #expect(try h.lsctl("pasteboard", "copy", "--name", "kept", "--persistent", "--password", "pw", "--text", "still here").status == 0)
        #expect(try h.lsctl("pasteboard", "copy", "--name", "kept", "--persistent", "--password", "pw", "--text", "still here, v2").status == 0)
        #expect(try h.lsctl("pasteboard", "copy", "--name", "lost", "--text", "gone").status == 0)
        try h.restart(signal: SIGKILL)
        let status = try h.query(.status, as: StatusReport.self)
        #expect(status.pasteboards == 1, "only the persistent one came back")
        #expect(status.persistentPasteboards == 1)
        let kept = try h.lsctl("pasteboard", "paste", "--name", "kept", "--password", "pw", "--json")
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(kept.json?["changeCount"] as? Int == 2)
        #expect(kept.json?["persistent"] as? Bool == true)
        #expect(((kept.json?["items"] as? [[String: Any]])?.first?["text"] as? String) == "still here, v2")
        #expect(try h.lsctl("pasteboard", "paste", "--name", "kept").status == 1, "the password survives too")
        #expect(try h.lsctl("pasteboard", "paste", "--name", "lost").stderr.contains("is empty"))

        // Clearing a persistent pasteboard forgets it on disk as well.
        #expect(try h.lsctl("pasteboard", "clear", "--name", "kept", "--password", "pw").status == 0)
        try h.restart(signal: SIGTERM)
        #expect(try h.lsctl("pasteboard", "paste", "--name", "kept").stderr.contains("is empty"))
    }
}
