/// The quick reading of lsopen's plain forms: one URL and any of a few distinct flags, each
/// at most once (`lsopen URL`, `lsopen --can-open URL`, `lsopen --json --background URL`).
/// Desktops run `lsopen URL` for every link, and swift-argument-parser's reflective parse
/// is about a third of that process's start, so these forms skip it. Anything else — an
/// option with a value, `--help`, a repeated or unknown flag, a second argument, a problem
/// with the combination — is left to swift-argument-parser, which then parses, explains
/// and fails exactly as it always has. `QuickArgumentsTests` checks that both readings agree.
enum QuickArguments {
    /// The command, or nil when the arguments need swift-argument-parser.
    static func command(from arguments: some Collection<String>) -> OpenCommand? {
        var command = OpenCommand(url: "")
        var url: String?
        var seen: [String] = []
        for argument in arguments {
            if argument.hasPrefix("-") {
                guard !seen.contains(argument), set(argument, in: &command) else { return nil }
                seen.append(argument)
            } else {
                guard url == nil, !argument.isEmpty else { return nil }
                url = argument
            }
        }
        // --ask with --no-ask: swift-argument-parser decides what that means.
        guard let url, !(seen.contains("--ask") && seen.contains("--no-ask")) else { return nil }
        command.url = url
        return command.problem() == nil ? command : nil
    }

    /// Sets what one of the quick flags means; false for any other argument.
    static func set(_ flag: String, in command: inout OpenCommand) -> Bool {
        switch flag {
        case "--can-open": command.canOpen = true
        case "--wait": command.wait = true
        case "--json": command.json = true
        case "--background": command.background = true
        case "--ask": command.ask = true
        case "--no-ask": command.ask = false
        default: return false
        }
        return true
    }
}
