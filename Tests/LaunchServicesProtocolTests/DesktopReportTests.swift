import Foundation
import LaunchServicesProtocol
import Testing

/// The desktop side of the admin reports (added in 0.3) decodes what the daemon sends and
/// encodes back to the same text; what older daemons sent still decodes, as all native.
@Suite("Admin reports: desktop entries")
struct DesktopReportTests {
    static let decidedBy = DesktopSourceReport(file: "/home/u/.config/mimeapps.list", line: 7, group: "Default Applications",
                                               text: "~/.config/mimeapps.list:7 [Default Applications]")

    @Test("explain: handlerKind, desktopClaimants and the desktop choice with every candidate")
    func explain() throws {
        let text = """
        {
          "app" : "mail.desktop",
          "claimants" : [
            "mail.desktop",
            "other.desktop"
          ],
          "claims" : [
            {
              "app" : "mail.desktop",
              "handlerKind" : "desktop",
              "since" : "2026-11-23T20:07:26.123Z"
            }
          ],
          "desktop" : {
            "candidates" : [
              {
                "file" : "/usr/share/applications/thunderbird.desktop",
                "id" : "thunderbird.desktop",
                "reason" : "programNotFound",
                "reasonText" : "its program 'thunderbird' (Exec, line 4) is not on PATH (/usr/bin)",
                "skipped" : [

                ],
                "source" : {
                  "file" : "/home/u/.config/mimeapps.list",
                  "group" : "Default Applications",
                  "line" : 7,
                  "text" : "~/.config/mimeapps.list:7 [Default Applications]"
                },
                "verdict" : "lost"
              },
              {
                "file" : "/usr/share/applications/mail.desktop",
                "id" : "mail.desktop",
                "skipped" : [

                ],
                "source" : {
                  "file" : "/home/u/.config/mimeapps.list",
                  "group" : "Default Applications",
                  "line" : 7,
                  "text" : "~/.config/mimeapps.list:7 [Default Applications]"
                },
                "verdict" : "chosen"
              }
            ],
            "chosen" : "mail.desktop",
            "decidedBy" : {
              "file" : "/home/u/.config/mimeapps.list",
              "group" : "Default Applications",
              "line" : 7,
              "text" : "~/.config/mimeapps.list:7 [Default Applications]"
            },
            "mimeType" : "x-scheme-handler/mailto",
            "notes" : [

            ]
          },
          "desktopClaimants" : [
            "mail.desktop",
            "other.desktop"
          ],
          "handlerKind" : "desktop",
          "reason" : "onlyClaimant",
          "refusedClaims" : [

          ],
          "scheme" : "mailto",
          "url" : "mailto:x",
          "why" : "w"
        }
        """
        let desktop = DesktopChoiceReport(mimeType: "x-scheme-handler/mailto", chosen: "mail.desktop", decidedBy: Self.decidedBy, candidates: [
            DesktopCandidateReport(id: "thunderbird.desktop", file: "/usr/share/applications/thunderbird.desktop", verdict: "lost", reason: "programNotFound",
                                   reasonText: "its program 'thunderbird' (Exec, line 4) is not on PATH (/usr/bin)", source: Self.decidedBy),
            DesktopCandidateReport(id: "mail.desktop", file: "/usr/share/applications/mail.desktop", verdict: "chosen", source: Self.decidedBy),
        ])
        let expected = ExplainReport(url: "mailto:x", scheme: "mailto", app: "mail.desktop", reason: "onlyClaimant", why: "w",
                                     claimants: ["mail.desktop", "other.desktop"], userDefault: nil,
                                     claims: [ClaimReport(app: "mail.desktop", since: "2026-11-23T20:07:26.123Z", handlerKind: "desktop")],
                                     handlerKind: "desktop", desktopClaimants: ["mail.desktop", "other.desktop"], desktop: desktop)
        try ReportSamples.decode(ExplainReport.self, text, expected: expected)
        #expect(expected.isDesktop && expected.claims[0].isDesktop)
        #expect(desktop.usable == ["mail.desktop"])
        #expect(!desktop.candidates[0].isUsable && desktop.candidates[1].isUsable)

        // An older daemon's explanation: native, no desktop detail.
        let before = #"{"app": "a.one", "claimants": ["a.one"], "reason": "onlyClaimant", "scheme": "x", "url": "x:", "why": "w"}"#
        let old = try JSONDecoder().decode(ExplainReport.self, from: Data(before.utf8))
        #expect(old.handlerKind == nil && !old.isDesktop && old.desktopClaimants.isEmpty && old.desktop == nil)
    }

    @Test("schemes and conflicts: a desktop row; an app's row without desktopClaimants reads as before")
    func schemes() throws {
        let text = """
        [
          {
            "app" : "com.example.mail",
            "claimants" : [
              "com.example.mail",
              "mail.desktop"
            ],
            "claims" : [
              {
                "app" : "com.example.mail",
                "since" : "2026-01-02T03:04:05.006Z"
              },
              {
                "app" : "mail.desktop",
                "handlerKind" : "desktop",
                "since" : "2026-11-23T20:07:26.123Z"
              }
            ],
            "desktopClaimants" : [
              "mail.desktop"
            ],
            "desktopDecidedBy" : {
              "file" : "/home/u/.config/mimeapps.list",
              "group" : "Default Applications",
              "line" : 7,
              "text" : "~/.config/mimeapps.list:7 [Default Applications]"
            },
            "handlerKind" : "native",
            "reason" : "earliestRegistration",
            "scheme" : "mailto"
          },
          {
            "app" : "a.one",
            "claimants" : [
              "a.one"
            ],
            "claims" : [

            ],
            "handlerKind" : "native",
            "reason" : "onlyClaimant",
            "scheme" : "one"
          }
        ]
        """
        try ReportSamples.decode([SchemeReport].self, text, expected: [
            SchemeReport(scheme: "mailto", app: "com.example.mail", reason: "earliestRegistration", claimants: ["com.example.mail", "mail.desktop"],
                         claims: [ClaimReport(app: "com.example.mail", since: "2026-01-02T03:04:05.006Z"),
                                  ClaimReport(app: "mail.desktop", since: "2026-11-23T20:07:26.123Z", handlerKind: "desktop")],
                         handlerKind: "native", desktopClaimants: ["mail.desktop"], desktopDecidedBy: Self.decidedBy),
            SchemeReport(scheme: "one", app: "a.one", reason: "onlyClaimant", claimants: ["a.one"], handlerKind: "native"),
        ])
    }

    @Test("status: desktopEntries, absent from older daemons")
    func status() throws {
        let report = DesktopEntriesReport(enabled: true, ready: true, entries: 3, schemesHandled: 2, folders: ["/home/u/.config"], foldersWatched: 4,
                                          lastRead: "2026-11-23T20:07:26.123Z", generation: 1, problems: ["p"], moreProblems: 0)
        let text = try ReportSamples.daemonText(report)
        #expect(try JSONDecoder().decode(DesktopEntriesReport.self, from: Data(text.utf8)) == report)
        #expect(text.contains("\"schemesHandled\" : 2"))
        let status = StatusReport(version: "0.3.0", pid: 1, socket: "/s", uptimeSeconds: 1, appsRegistered: 0, schemesRegistered: 0, appsRunning: 0,
                                  appsSuspended: 0, opensServed: 0, pasteboards: 0, persistentPasteboards: 0, frontmost: nil, appsFolders: [],
                                  refusedBundles: [], desktopEntries: report)
        let decoded = try JSONDecoder().decode(StatusReport.self, from: Data(try ReportSamples.daemonText(status).utf8))
        #expect(decoded.desktopEntries == report)
        var older = status
        older.desktopEntries = nil
        #expect(!(try ReportSamples.daemonText(older)).contains("desktopEntries"))
    }
}
