import Foundation
import LaunchServicesProtocol
import Testing

/// The registry's report types (apps, schemes, explain, register, unregister, rescan) decode
/// what the daemon sends (samples in its format: sorted keys, pretty-printed, slashes
/// unescaped, absent optionals left out), and encode back to the same text with the
/// daemon's settings, so no field name has drifted. The daemon's state reports (status,
/// running, pasteboards) are in `StateReportTests`.
@Suite("Admin reports")
struct AdminReportTests {
    @Test("apps, and register's answer")
    func apps() throws {
        let app = AppReport(id: "com.example.todolist", name: "To-do list", path: "/apps/todolist.app", executable: "todolist",
                            schemes: ["todolist"], queriesSchemes: ["xyz"], urlTypes: [URLTypeReport(name: "com.acme.todolist", schemes: ["todolist"])])
        let text = """
        [
          {
            "executable" : "todolist",
            "id" : "com.example.todolist",
            "name" : "To-do list",
            "path" : "/apps/todolist.app",
            "queriesSchemes" : [
              "xyz"
            ],
            "schemes" : [
              "todolist"
            ],
            "urlTypes" : [
              {
                "name" : "com.acme.todolist",
                "schemes" : [
                  "todolist"
                ]
              }
            ]
          }
        ]
        """
        try ReportSamples.decode([AppReport].self, text, expected: [app])
        try ReportSamples.decode([AppReport].self, "[\n\n]", expected: [])
        let registered = """
        {
          "heldByOthers" : [
            {
              "app" : "com.other.todo",
              "claimants" : [
                "com.example.todolist",
                "com.other.todo"
              ],
              "claims" : [

              ],
              "reason" : "userDefault",
              "scheme" : "todolist"
            }
          ],
          "registered" : {
            "executable" : "todolist",
            "id" : "com.example.todolist",
            "name" : "To-do list",
            "path" : "/apps/todolist.app",
            "queriesSchemes" : [
              "xyz"
            ],
            "schemes" : [
              "todolist"
            ],
            "urlTypes" : [
              {
                "name" : "com.acme.todolist",
                "schemes" : [
                  "todolist"
                ]
              }
            ]
          }
        }
        """
        try ReportSamples.decode(RegisterReport.self, registered, expected: RegisterReport(registered: app, heldByOthers: [
            SchemeReport(scheme: "todolist", app: "com.other.todo", reason: "userDefault", claimants: ["com.example.todolist", "com.other.todo"]),
        ]))
        // A daemon before heldByOthers: the answer decodes with none.
        let before = #"{"registered": {"executable": "t", "id": "a.one", "name": "A", "path": "/a", "queriesSchemes": [], "schemes": ["x"]}}"#
        #expect(try JSONDecoder().decode(RegisterReport.self, from: Data(before.utf8)).heldByOthers.isEmpty)
        // What a daemon before URL type names sent still decodes, with no URL types.
        let old = #"{"executable": "t", "id": "a.one", "name": "A", "path": "/a", "queriesSchemes": [], "schemes": ["x"]}"#
        #expect(try JSONDecoder().decode(AppReport.self, from: Data(old.utf8))
            == AppReport(id: "a.one", name: "A", path: "/a", executable: "t", schemes: ["x"], queriesSchemes: []))
    }

    @Test("CFBundleURLName: urlTypes on apps (an unnamed type has no name key), kind on schemes and explain")
    func urlTypeNames() throws {
        let apps = """
        [
          {
            "executable" : "todolist",
            "id" : "com.acme.todolist",
            "name" : "com.acme.todolist",
            "path" : "/apps/todolist",
            "queriesSchemes" : [

            ],
            "schemes" : [
              "todolist",
              "todo"
            ],
            "urlTypes" : [
              {
                "name" : "com.acme.todolist",
                "schemes" : [
                  "todolist"
                ]
              },
              {
                "schemes" : [
                  "todo"
                ]
              }
            ]
          }
        ]
        """
        try ReportSamples.decode([AppReport].self, apps, expected: [AppReport(
            id: "com.acme.todolist", name: "com.acme.todolist", path: "/apps/todolist", executable: "todolist", schemes: ["todolist", "todo"],
            queriesSchemes: [], urlTypes: [URLTypeReport(name: "com.acme.todolist", schemes: ["todolist"]), URLTypeReport(name: nil, schemes: ["todo"])])])
        let schemes = """
        [
          {
            "app" : "com.acme.todolist",
            "claimants" : [
              "com.acme.todolist"
            ],
            "claims" : [
              {
                "app" : "com.acme.todolist",
                "since" : "2026-11-23T20:07:26.123Z"
              }
            ],
            "kind" : "com.acme.todolist",
            "reason" : "onlyClaimant",
            "scheme" : "todolist"
          }
        ]
        """
        let claims = [ClaimReport(app: "com.acme.todolist", since: "2026-11-23T20:07:26.123Z")]
        try ReportSamples.decode([SchemeReport].self, schemes, expected: [SchemeReport(scheme: "todolist", app: "com.acme.todolist", reason: "onlyClaimant",
                                                                         claimants: ["com.acme.todolist"], claims: claims, kind: "com.acme.todolist")])
        let explain = """
        {
          "app" : "com.acme.todolist",
          "claimants" : [
            "com.acme.todolist"
          ],
          "claims" : [
            {
              "app" : "com.acme.todolist",
              "since" : "2026-11-23T20:07:26.123Z"
            }
          ],
          "kind" : "com.acme.todolist",
          "reason" : "onlyClaimant",
          "refusedClaims" : [

          ],
          "scheme" : "todolist",
          "url" : "todolist://x",
          "why" : "w"
        }
        """
        try ReportSamples.decode(ExplainReport.self, explain, expected: ExplainReport(url: "todolist://x", scheme: "todolist", app: "com.acme.todolist", reason: "onlyClaimant",
                                                                        why: "w", claimants: ["com.acme.todolist"], userDefault: nil, claims: claims,
                                                                        kind: "com.acme.todolist"))
    }

    @Test("unregister's answer, with and without a note")
    func unregister() throws {
        try ReportSamples.decode(UnregisterReport.self, "{\n  \"unregistered\" : \"a.b\"\n}", expected: UnregisterReport(unregistered: "a.b"))
        try ReportSamples.decode(UnregisterReport.self, "{\n  \"note\" : \"n\",\n  \"unregistered\" : \"a.b\"\n}", expected: UnregisterReport(unregistered: "a.b", note: "n"))
    }

    @Test("schemes and conflicts: claimants by id, claims earliest first with ISO-8601 times")
    func schemes() throws {
        let text = """
        [
          {
            "app" : "b.two",
            "claimants" : [
              "a.one",
              "b.two"
            ],
            "claims" : [
              {
                "app" : "b.two",
                "since" : "2026-01-02T03:04:05.006Z"
              },
              {
                "app" : "a.one",
                "since" : "2026-11-23T20:07:26.123Z"
              }
            ],
            "reason" : "earliestRegistration",
            "scheme" : "shared"
          }
        ]
        """
        try ReportSamples.decode([SchemeReport].self, text, expected: [SchemeReport(
            scheme: "shared", app: "b.two", reason: "earliestRegistration", claimants: ["a.one", "b.two"],
            claims: [ClaimReport(app: "b.two", since: "2026-01-02T03:04:05.006Z"), ClaimReport(app: "a.one", since: "2026-11-23T20:07:26.123Z")])])
        // What a daemon before the registration time sent still decodes.
        let old = #"[{"app": "a.one", "claimants": ["a.one", "b.two"], "reason": "rule", "scheme": "shared"}]"#
        #expect(try JSONDecoder().decode([SchemeReport].self, from: Data(old.utf8)) == [SchemeReport(scheme: "shared", app: "a.one", reason: "rule", claimants: ["a.one", "b.two"])])
    }

    @Test("registration times are ISO-8601 in UTC with milliseconds")
    func claimTimes() {
        #expect(ClaimTime.iso8601(0) == "1970-01-01T00:00:00.000Z")
        #expect(ClaimTime.iso8601(1_767_323_045_006) == "2026-01-02T03:04:05.006Z")
        #expect(ClaimTime.iso8601(951_782_400_000) == "2000-02-29T00:00:00.000Z")
        #expect(ClaimTime.iso8601(4_107_542_399_999) == "2100-02-28T23:59:59.999Z")
        #expect(ClaimTime.iso8601(-1) == "1969-12-31T23:59:59.999Z")
    }

    @Test("the basic form, for kept files' names, is the same instant to the second")
    func basicClaimTimes() {
        #expect(ClaimTime.basic(1_767_323_045_006) == "20260102T030405Z")
        #expect(ClaimTime.basic(4_107_542_399_999) == "21000228T235959Z")
        #expect(ClaimTime.basic(-1) == "19691231T235959Z")
    }

    @Test("explain, default and clear-default")
    func explain() throws {
        let text = """
        {
          "app" : "a.one",
          "claimants" : [
            "a.one"
          ],
          "claims" : [
            {
              "app" : "a.one",
              "since" : "2026-11-23T20:07:26.123Z"
            }
          ],
          "reason" : "onlyClaimant",
          "refusedClaims" : [

          ],
          "scheme" : "xyz",
          "url" : "xyz://a/b",
          "why" : "a.one is the only app that declares 'xyz'"
        }
        """
        try ReportSamples.decode(ExplainReport.self, text, expected: ExplainReport(url: "xyz://a/b", scheme: "xyz", app: "a.one", reason: "onlyClaimant",
                                                                     why: "a.one is the only app that declares 'xyz'", claimants: ["a.one"], userDefault: nil,
                                                                     claims: [ClaimReport(app: "a.one", since: "2026-11-23T20:07:26.123Z")]))
        let noHandler = """
        {
          "claimants" : [

          ],
          "claims" : [

          ],
          "reason" : "noHandler",
          "refusedClaims" : [
            {
              "path" : "/apps/nope.app",
              "reason" : "CFBundleExecutable names 'nope', which does not exist in the bundle"
            }
          ],
          "scheme" : "nope",
          "url" : "nope:",
          "userDefault" : "gone.app",
          "why" : "no registered app declares 'nope' in its CFBundleURLTypes"
        }
        """
        try ReportSamples.decode(ExplainReport.self, noHandler, expected: ExplainReport(url: "nope:", scheme: "nope", app: nil, reason: "noHandler",
                                                                          why: "no registered app declares 'nope' in its CFBundleURLTypes", claimants: [], userDefault: "gone.app",
                                                                          refusedClaims: [RefusedClaimReport(path: "/apps/nope.app", reason: "CFBundleExecutable names 'nope', which does not exist in the bundle")]))
        // A daemon before refusedClaims: an explanation decodes with none.
        let before = #"{"claimants": [], "reason": "noHandler", "scheme": "nope", "url": "nope:", "why": "w"}"#
        #expect(try JSONDecoder().decode(ExplainReport.self, from: Data(before.utf8)).refusedClaims.isEmpty)
    }

    @Test("rescan")
    func rescan() throws {
        let text = """
        {
          "added" : [
            "c.three"
          ],
          "changed" : [

          ],
          "refused" : [
            "/apps/bad.app: no Info.plist"
          ],
          "removed" : [
            "d.four"
          ],
          "unreadable" : [
            "apps folder /other could not be read (Too many open files)"
          ]
        }
        """
        try ReportSamples.decode(RescanSummary.self, text, expected: RescanSummary(added: ["c.three"], removed: ["d.four"], refused: ["/apps/bad.app: no Info.plist"],
                                                                                  unreadable: ["apps folder /other could not be read (Too many open files)"]))
        // From a daemon before `unreadable`: a complete scan.
        let older = try JSONDecoder().decode(RescanSummary.self, from: Data(#"{"added": [], "changed": [], "removed": ["d.four"], "refused": []}"#.utf8))
        #expect(older == RescanSummary(removed: ["d.four"]) && older.isComplete)
    }

    @Test("a report with a field added later still decodes (add, never rename)")
    func forwardCompatible() throws {
        let text = #"{"scheme": "x", "app": "a", "reason": "rule", "claimants": [], "since": 3}"#
        #expect(try JSONDecoder().decode(SchemeReport.self, from: Data(text.utf8)) == SchemeReport(scheme: "x", app: "a", reason: "rule", claimants: []))
    }
}
