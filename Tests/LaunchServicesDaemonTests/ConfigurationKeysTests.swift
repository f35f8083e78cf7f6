import Foundation
import LaunchServicesCore
@testable import LaunchServicesDaemon
import LaunchServicesTesting
import Testing

/// The configuration file's keys are written once, as the fields of its layout
/// (`DaemonConfiguration.File` and its sections): the decoder, the unknown-key check, the
/// whole-number check and the refusals' lists of known keys all read that one list.
@Suite("Configuration keys, written once")
struct ConfigurationKeysTests {
    /// The top level and every section under it, with the prefix their keys are named by.
    static var sections: [(prefix: String, layout: any ConfigurationSection.Type)] {
        [("", DaemonConfiguration.File.self)] + DaemonConfiguration.File.fields.compactMap { field in field.section.map { (field.key + ".", $0) } }
    }

    /// Writes `json`, loads it, and returns the refusal's problem (nil when accepted).
    func problem(_ json: String) throws -> String? { try ConfigurationText.problem(json) }

    /// `{"section": {key: value}}`, or `{key: value}` at the top level.
    func file(_ prefix: String, _ key: String, _ value: String) -> String {
        prefix.isEmpty ? #"{"\#(key)": \#(value)}"# : #"{"\#(prefix.dropLast())": {"\#(key)": \#(value)}}"#
    }

    /// A JSON value of the field's type.
    func sample(of layout: any ConfigurationSection.Type, _ key: String) throws -> String {
        let value = try #require(Mirror(reflecting: layout.init()).children.first { $0.label == key }?.value)
        switch type(of: value) {
        case is Int?.Type: return "7"
        case is Double?.Type: return "1.5"
        case is String?.Type: return #""x""#
        case is Bool?.Type: return "false"
        case is [String]?.Type: return #"["/x"]"#
        default: return "{}"
        }
    }

    func decoded<Section: ConfigurationSection>(_ layout: Section.Type, _ json: String) throws -> Section {
        try JSONDecoder().decode(layout, from: Data(json.utf8))
    }

    @Test("the layout has the sections and keys the file is documented with")
    func layout() {
        #expect(Self.sections.map(\.prefix) == ["", "deadlines.", "connections.", "pasteboard.", "appLogs.", "desktopEntries."])
        #expect(Set(DaemonConfiguration.File.Connections.keys).count == 8)
        #expect(DaemonConfiguration.File.fields.filter(\.wholeNumber).map(\.key) == ["maximumFrameLength", "maximumPendingOpensPerApp", "maximumLiveApps", "maximumOpensInFlightPerApp"])
    }

    @Test("every key in the one list is read by the decoder: set alone, its field is filled")
    func everyKeyIsDecoded() throws {
        for (prefix, layout) in Self.sections {
            for key in layout.keys {
                let section = try decoded(layout, #"{"\#(key)": \#(try sample(of: layout, key))}"#)
                let field = Mirror(reflecting: section).children.first { $0.label == key }
                let filled = field.map { Mirror(reflecting: $0.value).children.isEmpty == false } ?? false
                #expect(filled, "\(prefix)\(key) is listed but the decoder does not read it")
            }
        }
    }

    @Test("the deadlines are exactly the launch phases")
    func deadlinesArePhases() {
        #expect(DaemonConfiguration.File.Deadlines.keys.sorted() == LaunchPhase.allCases.map(\.rawValue).sorted())
    }

    @Test("in every section an unknown key is refused, naming it and listing that section's keys")
    func unknownKeyInEverySection() throws {
        for (prefix, layout) in Self.sections {
            let problem = try #require(try problem(file(prefix, "noSuchKey", "1")))
            let known = (prefix.isEmpty ? layout.keys + ["$comment"] : layout.keys).sorted().joined(separator: ", ")
            let listedAs = prefix.isEmpty ? "known keys" : layout.keysAre
            #expect(problem == "has unknown key '\(prefix)noSuchKey'; \(listedAs): \(known)")
        }
    }

    @Test("every whole-number key refuses a fraction, naming the key; every other key is not refused as unknown")
    func everyKeyIsKnown() throws {
        for (prefix, layout) in Self.sections {
            for field in layout.fields {
                let problem = try problem(file(prefix, field.key, field.wholeNumber ? "2.5" : try sample(of: layout, field.key)))
                if field.wholeNumber {
                    #expect(problem == "key '\(prefix)\(field.key)' is 2.5; give a whole number")
                } else {
                    #expect(problem?.contains("unknown key") != true, "\(prefix)\(field.key): \(problem ?? "")")
                }
            }
        }
    }

    /// Keys the sample leaves out on purpose and names in its `$comment` instead: given, they
    /// stop following `maximumPerUser`, so a copy of the sample that lowers it would refuse.
    static let derivedShares = ["maximumPerProcess", "maximumPerApp", "reservedForFirstConnections"]

    @Test("the shipped config/launchservicesd.json names every key but the apps folders and the old alias (the connection shares in its comment)")
    func shippedNamesEveryKey() throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let data = try #require(FileManager.default.contents(atPath: repo + "/config/launchservicesd.json"))
        let top = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(top.keys) == Set(DaemonConfiguration.File.keys + ["$comment"]).subtracting(["appsFolders", "maximumPendingOpensPerApp"]))
        for field in DaemonConfiguration.File.fields {
            guard let layout = field.section else { continue }
            let section = try #require(top[field.key] as? [String: Any], "\(field.key)")
            let derived = field.key == "connections" ? Set(Self.derivedShares) : []
            #expect(Set(section.keys) == Set(layout.keys).subtracting(derived), "\(field.key)")
        }
        let comment = try #require(top["$comment"] as? String)
        for key in Self.derivedShares { #expect(comment.contains(key), "\(key) is named in the sample's $comment") }
    }
}
