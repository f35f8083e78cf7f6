import Foundation
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Testing

/// The choice among desktop entries against GLib 2.74 itself: generated XDG layouts, each
/// read from disk by the daemon's edge (`DesktopLayoutReader`) and chosen by
/// `DesktopHandlers`, compared with what `gio mime x-scheme-handler/S` prints for the same
/// private environment. Every layout must give GLib's answer under `.glib`; under the
/// daemon's own rules it must too, or the difference must be one of the named deviations —
/// counted and printed, never hidden.
///
/// The seed is printed; `LS_GLIB_DIFF_SEED=N` replays a run, `LS_GLIB_DIFF_LAYOUT=I` only
/// layout I of it, `LS_GLIB_DIFF_LAYOUTS=N` sets how many (at least 1,000 by default).
/// Needs `gio` (libglib2.0-bin) and `update-desktop-database` (desktop-file-utils), which
/// scripts/test installs.
@Suite("Desktop entries chosen as GLib 2.74 chooses (differential, gio mime)")
struct GLibDifferentialTests {
    static let gio = "/usr/bin/gio"
    static let updateDesktopDatabase = "/usr/bin/update-desktop-database"
    /// Layouts prepared and compared together; their gio runs go in parallel.
    static let batch = 16
    /// gio runs in flight at once.
    static let parallel = 8
    /// Every child process is waited for at most this long.
    static let deadline: TimeInterval = 60

    /// One `gio mime` question and, once it is answered, GLib's default (nil: none).
    struct Question {
        var layout: Int
        var scheme: String
        var output: String
        var process: ChildProcess?
        var answer: String??
    }

    struct Tally {
        var layouts = 0
        var questions = 0
        var answered = 0
        var deviations: [DesktopDeviation: Int] = [:]
        var specDifferences: [String: Int] = [:]
        var noDefault = 0
        var failures: [String] = []
    }

    @Test("generated layouts: the edge's read and the choice give what gio mime prints; differences are named deviations")
    func differential() throws {
        for tool in [Self.gio, Self.updateDesktopDatabase] {
            try #require(FileManager.default.isExecutableFile(atPath: tool),
                         "\(tool) is missing: install libglib2.0-bin and desktop-file-utils (scripts/test does)")
        }
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["LS_GLIB_DIFF_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(Int64.max))
        let count = environment["LS_GLIB_DIFF_LAYOUTS"].flatMap(Int.init) ?? 1000
        let only = environment["LS_GLIB_DIFF_LAYOUT"].flatMap(Int.init)
        let indices = only.map { [$0] } ?? Array(0..<count)
        print("GLib differential: seed \(seed) (replay: LS_GLIB_DIFF_SEED=\(seed)), \(indices.count) layouts")
        let started = Date()
        var tally = Tally()
        let scratch = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        for start in stride(from: 0, to: indices.count, by: Self.batch) {
            let layouts = indices[start..<min(start + Self.batch, indices.count)].map {
                XDGLayoutGenerator.layout(index: $0, seed: seed, under: scratch)
            }
            try compare(layouts, seed: seed, scratch: scratch, tally: &tally)
            for layout in layouts { try? FileManager.default.removeItem(atPath: layout.root) }
        }
        #expect(!FileManager.default.fileExists(atPath: scratch + "/layout-\(indices[0])"))
        let seconds = Date().timeIntervalSince(started)
        print("GLib differential: \(tally.layouts) layouts, \(tally.questions) questions (\(tally.noDefault) with no default), "
              + "\(tally.answered) equal to gio mime under GLib's rules, \(String(format: "%.1f", seconds)) s, seed \(seed)")
        for deviation in DesktopDeviation.allCases {
            print("  deviation \(deviation.rawValue): our choice differs from gio in \(tally.deviations[deviation, default: 0]) questions: \(deviation)")
        }
        for (name, number) in tally.specDifferences.sorted(by: { $0.key < $1.key }) {
            print("  spec vs GLib, GLib followed: \(name) decided \(number) questions")
        }
        print("  spec vs GLib, not modelled: a relative or empty XDG_DATA_DIRS component is ignored here (the XDG spec); GLib uses it relative to its working folder, where this test has no applications folder, so it cannot differ here")
        for failure in tally.failures.prefix(3) { Issue.record(Comment(rawValue: failure)) }
        #expect(tally.failures.count == 0, "questions that differ; replay with LS_GLIB_DIFF_SEED=\(seed)")
        #expect(tally.questions >= indices.count)
    }

    /// A private scratch folder, in memory (/dev/shm) when there is one: the test writes tens
    /// of thousands of small files, ten times faster there than on this machine's disk.
    static func scratchFolder() throws -> String {
        var info = stat()
        let parent = stat("/dev/shm", &info) == 0 && access("/dev/shm", W_OK) == 0 ? "/dev/shm" : NSTemporaryDirectory()
        var template = Array((parent + "/ls-glibdiff.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw ProcessError("mkdtemp in \(parent): \(String(cString: strerror(errno)))") }
        return String(cString: made)
    }

    /// Writes the layouts, builds their caches, asks gio about each scheme (in parallel) and
    /// compares with the edge's read and the choice.
    func compare(_ layouts: [GeneratedLayout], seed: UInt64, scratch: String, tally: inout Tally) throws {
        for layout in layouts { try layout.writeFiles() }
        var caches: [ChildProcess] = []
        for layout in layouts where !layout.cacheFolders.isEmpty {
            caches.append(try ChildProcess(Self.updateDesktopDatabase, ["-q"] + layout.cacheFolders, environment: ["PATH": "/usr/bin:/bin"],
                                           stdout: layout.root + "/udd.out"))
        }
        for process in caches {
            guard process.wait(timeout: Self.deadline) != nil else {
                process.stop(grace: 1)
                throw ProcessError("update-desktop-database did not finish within \(Self.deadline) s")
            }
        }
        for layout in layouts {
            try layout.writeAfterCache()
            try? FileManager.default.removeItem(atPath: layout.root + "/udd.out")
        }

        var questions = layouts.flatMap { layout in
            layout.schemes.enumerated().map { Question(layout: layout.index, scheme: $1, output: layout.root + "/gio-\($0).out") }
        }
        let byIndex = Dictionary(uniqueKeysWithValues: layouts.map { ($0.index, $0) })
        // A throw part way leaves no gio running.
        defer { for question in questions { question.process?.stop(grace: 1) } }
        var next = 0, waiting = 0
        while waiting < questions.count {
            while next < questions.count && next - waiting < Self.parallel {
                let layout = byIndex[questions[next].layout]!
                questions[next].process = try ChildProcess(Self.gio, ["mime", "x-scheme-handler/" + questions[next].scheme],
                                                           environment: layout.environment, stdout: questions[next].output,
                                                           stderr: questions[next].output + ".err")
                next += 1
            }
            let process = questions[waiting].process!
            guard process.wait(timeout: Self.deadline) != nil else {
                process.stop(grace: 1)
                throw ProcessError("gio mime did not finish within \(Self.deadline) s (layout \(questions[waiting].layout))")
            }
            questions[waiting].answer = Self.parse((try? String(contentsOfFile: questions[waiting].output, encoding: .utf8)) ?? "",
                                                   scheme: questions[waiting].scheme)
            waiting += 1
        }

        for layout in layouts {
            tally.layouts += 1
            let read = DesktopLayoutReader().read(environment: layout.environment, home: layout.environment["HOME"]!)
            let glib = DesktopHandlers(layout: read.layout, rules: .glib)
            let ours = DesktopHandlers(layout: read.layout, rules: .launchServices)
            for question in questions where question.layout == layout.index {
                tally.questions += 1
                let replay = "LS_GLIB_DIFF_SEED=\(seed) LS_GLIB_DIFF_LAYOUT=\(layout.index)"
                guard case .some(let gio) = question.answer else {
                    let text = (try? String(contentsOfFile: question.output, encoding: .utf8)) ?? ""
                    tally.failures.append("layout \(layout.index), \(question.scheme): gio mime printed nothing we read: \(text) (\(replay))")
                    continue
                }
                if gio == nil { tally.noDefault += 1 }
                let model = glib.choice(forScheme: question.scheme)
                let choice = ours.choice(forScheme: question.scheme, comparingWithGLib: true)
                guard model.chosenID == gio else {
                    tally.failures.append("""
                        layout \(layout.index), x-scheme-handler/\(question.scheme): gio mime says \(gio ?? "no default"), \
                        the GLib model says \(model.chosenID ?? "no default") (\(replay))
                        \(model.explanation.joined(separator: "\n"))
                        \(layout.dump())
                        """)
                    continue
                }
                tally.answered += 1
                if choice.chosenID == gio {
                    for difference in choice.specDifferences { tally.specDifferences[difference.name, default: 0] += 1 }
                } else if let difference = choice.glibDifference, difference.glibChoice == gio, !difference.deviations.isEmpty {
                    for deviation in difference.deviations {
                        tally.deviations[deviation, default: 0] += 1
                        if !Self.corroborates(deviation, layout: layout, glibChoice: model.chosen?.entry?.path) {
                            tally.failures.append("""
                                layout \(layout.index), x-scheme-handler/\(question.scheme): ours \(choice.chosenID ?? "none"), gio \(gio ?? "none"): \
                                \(deviation.rawValue) is said to make the difference, but the generator made no such case (\(replay))
                                \(choice.explanation.joined(separator: "\n"))
                                \(layout.dump())
                                """)
                        }
                    }
                } else {
                    tally.failures.append("""
                        layout \(layout.index), x-scheme-handler/\(question.scheme): ours \(choice.chosenID ?? "none"), gio \(gio ?? "none"), \
                        and no deviation names the difference (\(replay))
                        \(choice.explanation.joined(separator: "\n"))
                        """)
                }
            }
        }
    }

    /// Whether the generator made what `deviation` is about: a deviation cannot silently
    /// excuse a bug in the choice. `glibChoice` is the file GLib chose.
    static func corroborates(_ deviation: DesktopDeviation, layout: GeneratedLayout, glibChoice: String?) -> Bool {
        let marks = glibChoice.flatMap { layout.marks[$0] } ?? []
        switch deviation {
        case .hiddenIsNoHandler: return marks.contains(.hidden)
        case .ownExportNeverChosen: return marks.contains(.runsLsopen)
        case .nothingToRunIsNoHandler: return marks.contains(.nothingToRun)
        case .mimeTypeFromEntries: return layout.irregularCache
        case .sameFolderRemovalApplies: return layout.dataFolderRemoval
        }
    }

    /// GLib's default from `gio mime` output: `Default application for “T”: ID`, or nil for
    /// `No default applications for “T”`; `.none` when the output is neither.
    static func parse(_ output: String, scheme: String) -> String?? {
        let firstLine = output.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let type = "x-scheme-handler/\(scheme)"
        if firstLine == "No default applications for “\(type)”" { return .some(nil) }
        let prefix = "Default application for “\(type)”: "
        guard firstLine.hasPrefix(prefix) else { return .none }
        return .some(String(firstLine.dropFirst(prefix.count)))
    }
}
