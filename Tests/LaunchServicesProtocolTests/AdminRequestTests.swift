import LaunchServicesProtocol
import Testing

/// The typed administrative plane: each request's spelling on the wire (which must not
/// change: PROTOCOL.md §6.7, §6.8), and the refusal of unknown and ill-formed ones.
@Suite("Admin requests")
struct AdminRequestTests {
    /// Every query with its topic, as the wire has always spelled it.
    static let queries: [(AdminQuery, String)] = [
        (.status, "status"), (.apps, "apps"), (.schemes, "schemes"),
        (.conflicts, "conflicts"), (.running, "running"), (.pasteboards, "pasteboards"),
        (.history, "history"),
    ]

    /// Every command shape with its verb and arguments, as the wire has always spelled them.
    static let commands: [(AdminCommand, String, [String])] = [
        (.register(path: "/apps/x.app"), "register", ["/apps/x.app"]),
        (.unregister(id: "com.example.x"), "unregister", ["com.example.x"]),
        (.showDefault(scheme: "xyz"), "default", ["xyz"]),
        (.setDefault(scheme: "xyz", app: "com.example.x"), "default", ["xyz", "com.example.x"]),
        (.clearDefault(scheme: "xyz"), "clear-default", ["xyz"]),
        (.explain(url: "xyz://a/b?c=d"), "explain", ["xyz://a/b?c=d"]),
        (.rescan, "rescan", []),
        (.quit(id: "com.example.x"), "quit", ["com.example.x"]),
    ]

    @Test("every query is listed, with its topic", arguments: queries.indices)
    func queryTopic(_ index: Int) throws {
        let (query, topic) = Self.queries[index]
        #expect(query.topic == topic)
        #expect(query.message == .query(topic: topic))
        #expect(try AdminQuery(topic: topic) == query)
        #expect(AdminRequest.parse(.query(topic: topic)) == .success(.query(query)))
        #expect(AdminRequest.query(query).message == .query(topic: topic))
    }

    @Test("the query list is exactly the seven topics")
    func queryList() {
        #expect(AdminQuery.allCases.map(\.topic) == Self.queries.map(\.1))
    }

    @Test("every command round-trips through its verb and arguments", arguments: commands.indices)
    func commandWire(_ index: Int) throws {
        let (command, verb, arguments) = Self.commands[index]
        #expect(command.verb == verb)
        #expect(command.arguments == arguments)
        #expect(command.message == .command(verb: verb, arguments: arguments))
        #expect(try AdminCommand(verb: verb, arguments: arguments) == command)
        #expect(AdminRequest.parse(.command(verb: verb, arguments: arguments)) == .success(.command(command)))
        #expect(AdminRequest.command(command).message == command.message)
    }

    @Test("every verb is covered by the samples")
    func verbsCovered() {
        #expect(Set(Self.commands.map(\.0.adminVerb)) == Set(AdminVerb.allCases))
        #expect(AdminVerb.allCases.filter(\.userOnly) == [.register, .unregister, .default, .clearDefault, .quit])
    }

    @Test("an unknown topic is refused, naming the known ones")
    func unknownQuery() {
        for topic in ["nonsense", "", "Status", "status ", "debug-stall-now"] {
            #expect(throws: AdminRequestError.unknownQuery(topic: topic)) { try AdminQuery(topic: topic) }
            #expect(AdminRequest.parse(.query(topic: topic)) == .failure(.unknownQuery(topic: topic)))
        }
        #expect(AdminRequestError.unknownQuery(topic: "x").description
                == "unknown query 'x'; known: status, apps, schemes, conflicts, running, pasteboards, history")
    }

    @Test("an unknown verb or a wrong number of arguments is refused, naming the known ones")
    func unknownCommand() {
        let refused: [(String, [String])] = [
            ("nonsense", []), ("Register", ["/x"]), ("register", []), ("register", ["/a", "/b"]),
            ("unregister", []), ("default", []), ("default", ["a", "b", "c"]), ("clear-default", []),
            ("clear-default", ["a", "b"]), ("explain", []), ("explain", ["a", "b"]), ("rescan", ["now"]),
            ("status", []), ("debug-stall", []), ("quit", []), ("quit", ["a", "b"]),
        ]
        for (verb, arguments) in refused {
            let error = AdminRequestError.unknownCommand(verb: verb, argumentCount: arguments.count)
            #expect(throws: error) { try AdminCommand(verb: verb, arguments: arguments) }
            #expect(AdminRequest.parse(.command(verb: verb, arguments: arguments)) == .failure(error))
        }
        #expect(AdminRequestError.unknownCommand(verb: "rescan", argumentCount: 1).description
                == "unknown command 'rescan' with 1 argument(s); known: register PATH, unregister ID, default SCHEME [ID], clear-default SCHEME, explain URL, rescan, quit ID")
    }

    @Test("debug-stall is a debug hook, not a query")
    func debugHookFenced() throws {
        #expect(DebugHook.stall.topic == "debug-stall")
        #expect(DebugHook(topic: "debug-stall") == .stall)
        #expect(DebugHook(topic: "status") == nil)
        #expect(!AdminQuery.allCases.map(\.topic).contains("debug-stall"))
        #expect(throws: AdminRequestError.unknownQuery(topic: "debug-stall")) { try AdminQuery(topic: "debug-stall") }
        #expect(AdminRequest.parse(.query(topic: "debug-stall")) == .success(.debug(.stall)))
        #expect(AdminRequest.debug(.stall).message == .query(topic: "debug-stall"))
    }

    @Test("other messages are not administrative requests")
    func notAdmin() {
        #expect(AdminRequest.parse(.canOpen(url: "xyz:")) == nil)
        #expect(AdminRequest.parse(.awaitCallback) == nil)
        #expect(AdminRequest.parse(.queryResult(json: "{}")) == nil)
    }

    @Test("typed requests encode to the same bytes as the strings they name")
    func sameBytes() throws {
        for (query, topic) in Self.queries {
            #expect(Frame.encode(Envelope(id: 9, query.message)) == Frame.encode(Envelope(id: 9, .query(topic: topic))))
        }
        for (command, verb, arguments) in Self.commands {
            #expect(Frame.encode(Envelope(id: 9, command.message)) == Frame.encode(Envelope(id: 9, .command(verb: verb, arguments: arguments))))
        }
    }
}

extension AdminRequestTests {
    @Test("a refused command names its verb when the verb is known")
    func knownVerb() {
        #expect(AdminRequestError.unknownCommand(verb: "register", argumentCount: 0).knownVerb == .register)
        #expect(AdminRequestError.unknownCommand(verb: "clear-default", argumentCount: 2).knownVerb == .clearDefault)
        #expect(AdminRequestError.unknownCommand(verb: "nonsense", argumentCount: 0).knownVerb == nil)
        #expect(AdminRequestError.unknownQuery(topic: "register").knownVerb == nil)
    }
}
