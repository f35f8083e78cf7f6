import OrderedCollections

/// The apps claiming each scheme, in the rule's order (`Registry`): the index every
/// resolution reads.
///
/// A registry of 10,000 apps claims 50,000 schemes. In a `Dictionary` that is 131,072 buckets
/// of a 16-byte key and an 8-byte value, 3 MB, the largest part of such a registry; here the
/// keys and values sit in two arrays exactly as long as the schemes, found through a hash
/// table of bit-packed positions (swift-collections' `OrderedDictionary`): about half.
///
/// A scheme whose last claimant leaves keeps its place with no claimants, as if absent: an
/// `OrderedDictionary` removes a key by moving every key after it, and an app unregistered
/// from a large registry withdraws several schemes. Such places are reused when the scheme is
/// claimed again, and dropped all at once when they outnumber the claimed schemes.
public struct ClaimTable: Sendable, Equatable, Sequence {
    private var table: OrderedDictionary<URLScheme, [String]> = [:]
    /// Places whose claimants all left.
    private var vacant = 0

    public init() {}

    /// Schemes with at least one claimant.
    public var count: Int { table.count - vacant }
    public var isEmpty: Bool { count == 0 }

    /// Every claimed scheme, in no particular order.
    public var keys: [URLScheme] { map(\.key) }

    /// The claimants of `scheme`, first the winner when no default is set; `nil` when none.
    public subscript(scheme: URLScheme) -> [String]? {
        guard let ids = table[scheme], !ids.isEmpty else { return nil }
        return ids
    }

    mutating func reserveCapacity(_ schemes: Int) {
        table.reserveCapacity(schemes)
    }

    /// Replaces the claimants of `scheme` (none: the scheme is no longer claimed).
    mutating func set(_ ids: [String], for scheme: URLScheme) {
        guard let place = table.index(forKey: scheme) else {
            if !ids.isEmpty { table[scheme] = ids }
            return
        }
        let wasVacant = table.values[place].isEmpty
        table.values[place] = ids
        vacant += (ids.isEmpty ? 1 : 0) - (wasVacant ? 1 : 0)
        compactIfMostlyVacant()
    }

    /// Puts `id` among the claimants of `scheme` at the place `position` picks from the
    /// claimants there now (empty when none), changed in place.
    mutating func insert(_ id: String, on scheme: URLScheme, at position: ([String]) -> Int) {
        guard let place = table.index(forKey: scheme) else {
            table[scheme] = [id]
            return
        }
        if table.values[place].isEmpty { vacant -= 1 }
        let index = position(table.values[place])
        table.values[place].insert(id, at: index)
    }

    /// Appends `id` to the claimants of `scheme`; a scheme new to the table takes `alone`
    /// (an array the caller shares among the schemes one app alone claims).
    mutating func append(_ id: String, to scheme: URLScheme, alone: [String]) {
        guard let place = table.index(forKey: scheme) else {
            table[scheme] = alone
            return
        }
        if table.values[place].isEmpty {
            vacant -= 1
            table.values[place] = alone
        } else {
            table.values[place].append(id)
        }
    }

    /// Takes `id` out of the claimants of `scheme`.
    mutating func remove(_ id: String, from scheme: URLScheme) {
        guard let place = table.index(forKey: scheme), !table.values[place].isEmpty else { return }
        table.values[place].removeAll { $0 == id }
        if table.values[place].isEmpty {
            vacant += 1
            compactIfMostlyVacant()
        }
    }

    /// Drops the vacant places once they outnumber the claimed schemes (and are more than a
    /// few): each drop moves every claimed scheme once, so it costs no more than the removals
    /// that made the places vacant.
    private mutating func compactIfMostlyVacant() {
        guard vacant > 64, vacant > count else { return }
        var kept = OrderedDictionary<URLScheme, [String]>(minimumCapacity: count)
        for (scheme, ids) in table where !ids.isEmpty { kept[scheme] = ids }
        table = kept
        vacant = 0
    }

    /// Equal when the same schemes have the same claimants in the same order, whatever the
    /// order the schemes were claimed in and whatever places are vacant.
    public static func == (a: ClaimTable, b: ClaimTable) -> Bool {
        a.count == b.count && a.allSatisfy { b[$0.key] == $0.value }
    }

    public struct Iterator: IteratorProtocol {
        fileprivate var base: OrderedDictionary<URLScheme, [String]>.Iterator

        public mutating func next() -> (key: URLScheme, value: [String])? {
            while let entry = base.next() {
                if !entry.value.isEmpty { return entry }
            }
            return nil
        }
    }

    /// The claimed schemes and their claimants, in no particular order.
    public func makeIterator() -> Iterator { Iterator(base: table.makeIterator()) }
}
