import class Foundation.ProcessInfo
import LaunchServicesCore
import Testing

/// `AppBundle` keeps every field but its identifier packed in one byte array. On generated
/// bundles (texts of every length around the varint's 127-byte step, no schemes to many, URL
/// types with and without names whose schemes are the app's, a part of them, or schemes the
/// app does not list at all), every field reads back as given, a setter changes one field
/// only, and two bundles are equal (and hash alike) exactly when their fields are.
@Suite("AppBundle: the packed record reads back every field")
struct AppBundleRecordTests {
    static let seed: UInt64 = ProcessInfo.processInfo.environment["LS_APP_RECORD_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)

    /// The fields an `AppBundle` is made from, kept apart to compare with what it reads back.
    struct Fields: Equatable {
        var id: String
        var name: String
        var path: String
        var executable: String
        var schemes: [URLScheme]
        var queries: Set<URLScheme>
        var types: [AppBundle.URLType]

        var bundle: AppBundle {
            AppBundle(id: id, name: name, path: path, executable: executable, schemes: schemes, queriesSchemes: queries, urlTypes: types)
        }

        init(_ bundle: AppBundle) {
            self.init(id: bundle.id, name: bundle.name, path: bundle.path, executable: bundle.executable, schemes: bundle.schemes,
                      queries: bundle.queriesSchemes, types: bundle.urlTypes)
        }

        init(id: String, name: String, path: String, executable: String, schemes: [URLScheme], queries: Set<URLScheme>, types: [AppBundle.URLType]) {
            self.id = id
            self.name = name
            self.path = path
            self.executable = executable
            self.schemes = schemes
            self.queries = queries
            self.types = types
        }
    }

    static func text(_ random: inout SeededGenerator) -> String {
        let lengths = [0, 1, 15, 16, 127, 128, 300, 16_384]
        let length = Bool.random(using: &random) ? lengths.randomElement(using: &random)! : Int.random(in: 0...40, using: &random)
        let alphabet: [Character] = ["a", "/", " ", "é", "日", "\u{0301}", "🙂", "\0", "\n", "Z"]
        return String((0..<length).map { _ in alphabet.randomElement(using: &random)! })
    }

    static func scheme(_ random: inout SeededGenerator, pool: Int) -> URLScheme {
        // A small pool, so that lists repeat one another's schemes.
        try! URLScheme(validating: "s\(Int.random(in: 0..<pool, using: &random))" + (Bool.random(using: &random) ? "" : String(repeating: "x", count: 140)))
    }

    static func fields(_ random: inout SeededGenerator) -> Fields {
        let pool = Int.random(in: 1...300, using: &random)
        var schemes: [URLScheme] = []
        for _ in 0..<[0, 1, 5, 40, 200].randomElement(using: &random)! {
            let scheme = scheme(&random, pool: pool)
            if !schemes.contains(scheme) { schemes.append(scheme) }
        }
        let queries = Set((0..<Int.random(in: 0...50, using: &random)).map { _ in scheme(&random, pool: pool) })
        let types = (0..<Int.random(in: 0...4, using: &random)).map { _ -> AppBundle.URLType in
            let name: String? = Bool.random(using: &random) ? text(&random) : nil
            switch Int.random(in: 0...3, using: &random) {
            case 0: return AppBundle.URLType(name: name, schemes: schemes)
            case 1: return AppBundle.URLType(name: name, schemes: schemes.filter { _ in Bool.random(using: &random) })
            case 2: return AppBundle.URLType(name: name, schemes: (0..<Int.random(in: 0...6, using: &random)).map { _ in scheme(&random, pool: pool * 2) })
            default: return AppBundle.URLType(name: name, schemes: schemes.reversed())
            }
        }
        return Fields(id: "app\(random.next() % 1000)", name: text(&random), path: text(&random), executable: text(&random),
                      schemes: schemes, queries: queries, types: types)
    }

    @Test("every field reads back as given, on generated bundles")
    func roundTrip() {
        var random = SeededGenerator(seed: Self.seed)
        for round in 0..<1_000 {
            let fields = Self.fields(&random)
            let bundle = fields.bundle
            #expect(Fields(bundle) == fields, "round \(round), seed \(Self.seed) (LS_APP_RECORD_SEED)")
            for scheme in fields.schemes + fields.queries {
                #expect(bundle.mayQuery(scheme) == fields.queries.contains(scheme), "round \(round), seed \(Self.seed)")
            }
        }
    }

    @Test("equal and hashed alike exactly when the fields are equal")
    func equality() {
        var random = SeededGenerator(seed: Self.seed ^ 0x5EED)
        var pairs = 0
        for round in 0..<1_000 {
            let a = Self.fields(&random)
            // Half the time the other is a copy with at most one field changed, so that
            // equal pairs and near misses both occur.
            var b = Bool.random(using: &random) ? a : Self.fields(&random)
            switch Int.random(in: 0...7, using: &random) {
            case 0: b.name += "x"
            case 1: b.path = Self.text(&random)
            case 2: b.types = b.types.map { AppBundle.URLType(name: $0.name, schemes: $0.schemes.reversed()) }
            case 3: b.queries = Set(b.queries.dropFirst())
            default: break
            }
            if a == b { pairs += 1 }
            #expect((a.bundle == b.bundle) == (a == b), "round \(round), seed \(Self.seed) (LS_APP_RECORD_SEED)")
            if a == b { #expect(a.bundle.hashValue == b.bundle.hashValue) }
        }
        #expect(pairs > 100, "the generator made too few equal pairs to test equality")
    }

    @Test("a setter changes its field and leaves the others")
    func setters() {
        var random = SeededGenerator(seed: Self.seed ^ 0xF1E1D)
        for round in 0..<500 {
            let before = Self.fields(&random)
            let other = Self.fields(&random)
            var bundle = before.bundle
            var expected = before
            switch round % 6 {
            case 0: bundle.name = other.name; expected.name = other.name
            case 1: bundle.path = other.path; expected.path = other.path
            case 2: bundle.executable = other.executable; expected.executable = other.executable
            case 3: bundle.schemes = other.schemes; expected.schemes = other.schemes
            case 4: bundle.queriesSchemes = other.queries; expected.queries = other.queries
            default: bundle.urlTypes = other.types; expected.types = other.types
            }
            #expect(Fields(bundle) == expected, "round \(round), seed \(Self.seed) (LS_APP_RECORD_SEED)")
            #expect(bundle == expected.bundle)
        }
    }
}
