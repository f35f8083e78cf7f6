import Foundation
import GRDB
import LaunchServicesClient
import LaunchServicesCore
import LaunchServicesProtocol
import Testing

/// Pasteboard passwords against a real daemon: kept only as Argon2id verifiers, a wrong one
/// answered late, guessing slowed per connection and per pasteboard, requests per connection
/// bounded, and passwords saved in plain text by earlier versions hashed when loaded.
@Suite("Pasteboard passwords")
struct PasteboardPasswordTests {
    /// A raw connection, greeted, for pipelining several requests in one write.
    func connect(_ h: DaemonHarness) throws -> FrameConnection {
        let connection = try FrameConnection.connect(path: h.socket)
        try connection.send(Envelope(id: 0, .hello(version: Frame.protocolVersion, role: .client, program: "test")))
        return connection
    }

    /// Reads answers until every id in `ids` has one; each with the time it arrived.
    func answers(_ connection: FrameConnection, _ ids: Set<UInt32>, within seconds: Int = 20) throws -> [UInt32: (message: Message, at: ContinuousClock.Instant)] {
        var got: [UInt32: (message: Message, at: ContinuousClock.Instant)] = [:]
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !ids.isSubset(of: Set(got.keys)) {
            let envelope = try connection.receive(waitingFor: "pasteboard answers", deadline: deadline)
            if envelope.id != 0 { got[envelope.id] = (envelope.message, .now) }
        }
        return got
    }

    func failure(_ message: Message?) -> OpenError? {
        if case .failure(let error) = message { return error }
        return nil
    }

    func paste(_ name: String, _ password: String) -> Message {
        .pasteboard(PasteboardRequest(.paste, name: name, password: password))
    }

    @Test("a missing password is refused with the command that would work, verb and name included")
    func passwordHintNamesTheVerb() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        #expect(try h.lsctl("pasteboard", "copy", "--name", "p1", "--text", "hi", "--password", "sekret").status == 0)
        #expect(try h.lsctl("pasteboard", "copy", "--text", "general", "--password", "sekret").status == 0)
        for verb in ["paste", "clear"] {
            let refused = try h.lsctl("pasteboard", verb, "--name", "p1")
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("lsctl pasteboard \(verb) --name p1 --password …"), "\(refused.stderr)")
            #expect(refused.stderr.contains("--password-file") && refused.stderr.contains("LSCTL_PASTEBOARD_PASSWORD"), "\(refused.stderr)")
        }
        let general = try h.lsctl("pasteboard", "paste")
        #expect(general.stderr.contains("lsctl pasteboard paste --password …"), "the general pasteboard needs no --name: \(general.stderr)")
        let replace = try h.lsctl("pasteboard", "copy", "--name", "p1", "--text", "new")
        #expect(replace.stderr.contains("lsctl pasteboard copy --name p1 --password …"), "\(replace.stderr)")
    }

    @Test("the password is kept as an Argon2id verifier: it is in neither pasteboard.sqlite nor its log")
    func storedHashed() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        let password = "Tr0ub4dor-xyzzy-4711"
        #expect(try h.lsctl("pasteboard", "copy", "--name", "vault", "--persistent", "--password", password, "--text", "payload-31337").status == 0)
        let folder = h.root + "/state"
        let bytes = ["/pasteboard.sqlite", "/pasteboard.sqlite-wal"].compactMap { FileManager.default.contents(atPath: folder + $0) }.reduce(Data(), +)
        #expect(bytes.range(of: Data("payload-31337".utf8)) != nil, "the right files were read: the items are there")
        #expect(bytes.range(of: Data(password.utf8)) == nil, "the password is not")
        let verifier = try DatabaseCopy.read(folder + "/pasteboard.sqlite") { db in
            try String.fetchOne(db, sql: "SELECT passwordVerifier FROM pasteboard WHERE name = 'vault'")
        }
        #expect(verifier?.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$") == true, "\(verifier ?? "nil")")
        let pasted = try h.lsctl("pasteboard", "paste", "--name", "vault", "--password", password)
        #expect(pasted.stdout == "payload-31337", "\(pasted.stderr)")
    }

    @Test("a wrong password is refused after a 1 s delay, naming the delay; the right one is answered at once")
    func wrongPasswordDelayed() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        #expect(try h.lsctl("pasteboard", "copy", "--name", "secret", "--password", "foobar", "--text", "s3cret").status == 0)
        let client = try LaunchServicesClient(socketPath: h.socket, program: "test")
        defer { client.close() }
        let clock = ContinuousClock()
        var refusal: ClientError?
        let wrong = clock.measure {
            refusal = #expect(throws: ClientError.self) { try client.pasteboard(PasteboardRequest(.paste, name: "secret", password: "foobaz")) }
        }
        #expect(refusal?.code == .notPermitted)
        #expect(refusal?.description.contains("wrong password for pasteboard 'secret'; answered after a 1 s delay") == true, "\(String(describing: refusal))")
        #expect(wrong >= .milliseconds(1000), "\(wrong)")
        var text: String?
        let right = try clock.measure {
            text = try client.pasteboard(PasteboardRequest(.paste, name: "secret", password: "foobar")).items.first?.text
        }
        #expect(text == "s3cret")
        #expect(right < .milliseconds(900), "\(right): a right password pays only the hash")
    }

    @Test("one connection's guesses, pipelined, are answered a second apart, then its other requests in order")
    func oneConnectionOneGuessPerSecond() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        #expect(try h.lsctl("pasteboard", "copy", "--name", "p", "--password", "right", "--text", "v").status == 0)
        let connection = try connect(h)
        defer { connection.close() }
        let start = ContinuousClock.now
        try connection.send((1...3).flatMap { Frame.encode(Envelope(id: $0, paste("p", "guess\($0)"))) } + Frame.encode(Envelope(id: 4, paste("p", "right"))))
        let got = try answers(connection, [1, 2, 3, 4])
        for id: UInt32 in 1...3 { #expect(failure(got[id]?.message)?.code == .notPermitted) }
        #expect(got[3]!.at - start >= .milliseconds(2900), "three wrong guesses take three seconds: \(got[3]!.at - start)")
        #expect(got[2]!.at - got[1]!.at >= .milliseconds(900))
        guard case .pasteboardResult(let snapshot) = got[4]?.message else {
            Issue.record("the right password still pastes: \(String(describing: got[4]?.message))")
            return
        }
        #expect(snapshot.items.first?.text == "v")
        #expect(got[4]!.at >= got[3]!.at, "answered in order, after the delay")
    }

    @Test("many connections guessing one pasteboard still get about one check a second; the owner gets in afterwards")
    func manyConnectionsOneCheckPerSecond() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        #expect(try h.lsctl("pasteboard", "copy", "--name", "p", "--password", "right", "--text", "v").status == 0)
        final class Tally: @unchecked Sendable {
            let lock = NSLock()
            var wrong = 0, busy = 0, other: [String] = []
            func add(_ error: ClientError) {
                lock.withLock {
                    if error.code == .notPermitted { wrong += 1 } else if error.code == .unavailable { busy += 1 } else { other.append(error.description) }
                }
            }
        }
        let tally = Tally()
        let socket = h.socket
        let end = Date().addingTimeInterval(3)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            guard let client = try? LaunchServicesClient(socketPath: socket, program: "guesser") else { return }
            defer { client.close() }
            var n = 0
            while Date() < end {
                n += 1
                do throws(ClientError) {
                    _ = try client.pasteboard(PasteboardRequest(.paste, name: "p", password: "guess-\(worker)-\(n)"))
                    tally.lock.withLock { tally.other.append("a guess was accepted") }
                } catch {
                    tally.add(error)
                }
            }
        }
        #expect(tally.other.isEmpty, "\(tally.other)")
        #expect(tally.wrong >= 2, "guesses were checked: \(tally.wrong)")
        #expect(tally.wrong <= 6, "8 connections for 3 s got \(tally.wrong) checks; one a second is the design")
        let client = try LaunchServicesClient(socketPath: socket, program: "owner")
        defer { client.close() }
        #expect(try client.pasteboard(PasteboardRequest(.paste, name: "p", password: "right")).items.first?.text == "v")
    }

    @Test("a copy with a password and a paste right behind it on one connection: the paste sees the copy")
    func orderKept() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        let connection = try connect(h)
        defer { connection.close() }
        try connection.send(Frame.encode(Envelope(id: 1, .pasteboard(PasteboardRequest(.copy, name: "o", items: [PasteboardItem(text: "first")], password: "pw"))))
                            + Frame.encode(Envelope(id: 2, paste("o", "pw")))
                            + Frame.encode(Envelope(id: 3, .pasteboard(PasteboardRequest(.paste, name: "o")))))
        let got = try answers(connection, [1, 2, 3])
        guard case .pasteboardResult(let copied) = got[1]?.message, case .pasteboardResult(let pasted) = got[2]?.message else {
            Issue.record("\(got)")
            return
        }
        #expect(copied.passwordProtected)
        #expect(pasted.items.first?.text == "first")
        #expect(failure(got[3]?.message)?.message.contains("protected by a password") == true, "the copy's password holds for the next request")
    }

    @Test("a connection may have only maximumOperationsPerConnection pasteboard requests waiting")
    func perConnectionLimit() throws {
        let h = try DaemonHarness(apps: [], config: #"{"pasteboard": {"maximumOperationsPerConnection": 4}}"#)
        defer { h.stop() }
        #expect(try h.lsctl("pasteboard", "copy", "--name", "p", "--password", "right", "--text", "v").status == 0)
        let connection = try connect(h)
        defer { connection.close() }
        // A wrong guess holds the connection for a second; the next three wait, two more are refused.
        try connection.send(Frame.encode(Envelope(id: 1, paste("p", "wrong")))
                            + (2...6).flatMap { Frame.encode(Envelope(id: $0, .pasteboard(PasteboardRequest(.paste)))) })
        let got = try answers(connection, Set(1...6))
        for id: UInt32 in [5, 6] {
            let error = failure(got[id]?.message)
            #expect(error?.code == .unavailable)
            #expect(error?.message.contains("already has 4 pasteboard requests waiting or under way, the limit (pasteboard.maximumOperationsPerConnection)") == true, "\(String(describing: error))")
            #expect(got[id]!.at < got[1]!.at, "refused at once, not after the delay")
        }
        for id: UInt32 in 2...4 {
            guard case .pasteboardResult = got[id]?.message else {
                Issue.record("request \(id) waited and was answered: \(String(describing: got[id]?.message))")
                continue
            }
            #expect(got[id]!.at >= got[1]!.at)
        }
        // The limit is per connection: another one is served meanwhile and after.
        #expect(try h.lsctl("pasteboard", "paste", "--name", "p", "--password", "right").stdout == "v")
    }

    @Test("waiting copies on one connection hold at most one pasteboard's worth of items")
    func waitingBytesBounded() throws {
        let h = try DaemonHarness(apps: [], config: #"{"pasteboard": {"maximumBytes": 1000}}"#)
        defer { h.stop() }
        #expect(try h.lsctl("pasteboard", "copy", "--name", "p", "--password", "right", "--text", "v").status == 0)
        let connection = try connect(h)
        defer { connection.close() }
        let copy = { (id: UInt32) in
            Frame.encode(Envelope(id: id, .pasteboard(PasteboardRequest(.copy, name: "q\(id)", items: [PasteboardItem(type: "public.data", data: Array(repeating: 7, count: 600))]))))
        }
        // The wrong guess holds the connection; 611 bytes may wait behind it, 1222 may not.
        try connection.send(Frame.encode(Envelope(id: 1, paste("p", "wrong"))) + copy(2) + copy(3))
        let got = try answers(connection, [1, 2, 3])
        guard case .pasteboardResult = got[2]?.message else {
            Issue.record("the first copy waited and was applied: \(String(describing: got[2]?.message))")
            return
        }
        let refused = failure(got[3]?.message)
        #expect(refused?.code == .unavailable)
        #expect(refused?.message.contains("would hold 1222 bytes, more than one pasteboard may (pasteboard.maximumBytes, 1000)") == true, "\(String(describing: refused))")
    }

    @Test("password checks waiting for the hashing thread are bounded (maximumPasswordChecksWaiting)")
    func checksBounded() throws {
        let h = try DaemonHarness(apps: [], config: #"{"pasteboard": {"maximumPasswordChecksWaiting": 1}}"#)
        defer { h.stop() }
        let a = try connect(h), b = try connect(h)
        defer { a.close(); b.close() }
        // Two copies that each need a hash of tens of ms, sent together from two connections.
        let copy = { (name: String) in Frame.encode(Envelope(id: 1, .pasteboard(PasteboardRequest(.copy, name: name, items: [PasteboardItem(text: "x")], password: "pw")))) }
        try a.send(copy("a"))
        try b.send(copy("b"))
        let results = [try answers(a, [1])[1]!.message, try answers(b, [1])[1]!.message]
        let refused = results.compactMap(failure)
        #expect(refused.count == 1, "\(results)")
        #expect(refused.first?.code == .unavailable)
        #expect(refused.first?.message.contains("the limit (pasteboard.maximumPasswordChecksWaiting)") == true, "\(refused)")
    }

    @Test("a persistent pasteboard saved with a plain-text password by an earlier version is re-saved hashed, items intact")
    func migratesPlainText() throws {
        let h = try DaemonHarness(apps: [])
        defer { h.stop() }
        let file = h.root + "/state/pasteboard.sqlite"
        try h.restart(signal: SIGTERM) {
            // Exactly what v1 wrote: its schema, its migration record, a plain-text password.
            try EarlierDatabase.write(file, schema: """
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations VALUES ('v1');
                    CREATE TABLE pasteboard (name TEXT PRIMARY KEY, changeCount INTEGER NOT NULL, expiresAt INTEGER, password TEXT);
                    CREATE TABLE pasteboardItem (name TEXT NOT NULL REFERENCES pasteboard(name) ON DELETE CASCADE, position INTEGER NOT NULL, type TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (name, position));
                    INSERT INTO pasteboard VALUES ('legacy', 5, NULL, 'legacy-pw-8675309');
                    INSERT INTO pasteboardItem VALUES ('legacy', 0, 'public.utf8-plain-text', CAST('first item' AS BLOB));
                    INSERT INTO pasteboardItem VALUES ('legacy', 1, 'public.json', CAST('[1, 2]' AS BLOB));
                    INSERT INTO pasteboard VALUES ('open', 2, NULL, NULL);
                    INSERT INTO pasteboardItem VALUES ('open', 0, 'public.utf8-plain-text', CAST('no password' AS BLOB));
                    """)
        }
        let bytes = ["", "-wal"].compactMap { FileManager.default.contents(atPath: file + $0) }.reduce(Data(), +)
        #expect(bytes.range(of: Data("legacy-pw-8675309".utf8)) == nil, "the plain text is gone from the file and its log")
        let rows = try DatabaseCopy.read(file) { db in
            try Row.fetchAll(db, sql: "SELECT name, passwordVerifier FROM pasteboard ORDER BY name").map { ($0["name"] as String, $0["passwordVerifier"] as String?) }
        }
        #expect(rows.count == 2)
        #expect(rows.first { $0.0 == "legacy" }?.1?.hasPrefix("$argon2id$") == true, "\(rows)")
        #expect(rows.first { $0.0 == "open" }?.1 == nil)

        let client = try LaunchServicesClient(socketPath: h.socket, program: "test")
        defer { client.close() }
        let snapshot = try client.pasteboard(PasteboardRequest(.paste, name: "legacy", password: "legacy-pw-8675309"))
        #expect(snapshot.items.map(\.type) == ["public.utf8-plain-text", "public.json"])
        #expect(snapshot.items.map(\.text) == ["first item", "[1, 2]"])
        #expect(snapshot.changeCount == 5)
        #expect(snapshot.persistent && snapshot.passwordProtected)
        #expect(throws: ClientError.self) { try client.pasteboard(PasteboardRequest(.paste, name: "legacy")) }
        #expect(try client.pasteboard(PasteboardRequest(.paste, name: "open")).items.first?.text == "no password")
    }
}
