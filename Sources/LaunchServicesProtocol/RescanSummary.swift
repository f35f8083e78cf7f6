/// What a rescan of the apps folders changed (`rescan`).
public struct RescanSummary: Codable, Sendable, Equatable {
    public var added: [String]
    public var changed: [String]
    public var removed: [String]
    public var refused: [String]
    /// The apps folders and bundles the scan could not read right now (out of descriptors,
    /// an I/O error, permissions), each a sentence naming it and the system's reason. What
    /// was registered from them is neither withdrawn nor changed; the daemon reads the
    /// folders again shortly. Empty when the scan read everything, and from daemons before it.
    public var unreadable: [String]

    /// Whether the scan read every folder and bundle.
    public var isComplete: Bool { unreadable.isEmpty }

    public init(added: [String] = [], changed: [String] = [], removed: [String] = [], refused: [String] = [], unreadable: [String] = []) {
        self.added = added
        self.changed = changed
        self.removed = removed
        self.refused = refused
        self.unreadable = unreadable
    }

    private enum CodingKeys: String, CodingKey { case added, changed, removed, refused, unreadable }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(added: try c.decode([String].self, forKey: .added), changed: try c.decode([String].self, forKey: .changed),
                  removed: try c.decode([String].self, forKey: .removed), refused: try c.decode([String].self, forKey: .refused),
                  unreadable: try c.decodeIfPresent([String].self, forKey: .unreadable) ?? [])
    }
}
