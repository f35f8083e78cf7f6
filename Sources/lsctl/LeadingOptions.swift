/// `lsctl --socket P VERB …` as well as `lsctl VERB … --socket P`: the options every verb
/// shares (`--socket`, `--json`) may come before the verb, as with `systemctl --user status`.
/// swift-argument-parser reads a verb's options only after the verb, so these are moved there
/// (after the whole verb, `pasteboard copy` included) before it parses; anything else,
/// `--help` and errors included, is left exactly as it was.
enum LeadingOptions {
    /// The options each verb takes through `CommonOptions`, with whether they take a value.
    static let shared: [String: Bool] = ["--socket": true, "--json": false]

    /// The arguments with the shared options given before the verb moved to its end (before a
    /// `--`, if there is one). Unchanged when none leads, or when no verb follows them.
    static func reordered(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            let name = String(argument.split(separator: "=", maxSplits: 1).first ?? "")
            guard let takesValue = shared[name] else { break }
            if takesValue && !argument.contains("=") {
                guard index + 1 < arguments.count else { return arguments }
                leading += [argument, arguments[index + 1]]
                index += 2
            } else {
                leading.append(argument)
                index += 1
            }
        }
        let rest = Array(arguments[index...])
        guard !leading.isEmpty, let verb = rest.first else { return arguments }
        // `lsctl --socket P --help`: the help it asks for (the options do not matter to it).
        if verb == "--help" || verb == "-h" { return rest }
        guard !verb.hasPrefix("-") else { return arguments }
        let end = rest.firstIndex(of: "--") ?? rest.endIndex
        return Array(rest[..<end]) + leading + Array(rest[end...])
    }
}
