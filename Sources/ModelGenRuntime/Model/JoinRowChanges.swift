/// The join rows a save writes, for either backend: per join table, the pairs of ids added and
/// removed since the last save — sorted, each once (both sides of a many-to-many relationship may
/// report the same pair) — and the members written, which become the saved ones when the
/// transaction commits.
@_spi(Backend) public struct JoinRowChanges {
    /// Two ids, in the order of the table's `columns`.
    @_spi(Backend) public struct Pair: Comparable {
        @_spi(Backend) public var first: Int64, second: Int64

        @_spi(Backend) public static func < (lhs: Pair, rhs: Pair) -> Bool {
            (lhs.first, lhs.second) < (rhs.first, rhs.second)
        }
    }

    /// One join table's changes: its name and columns as the relationships' storage writes them.
    @_spi(Backend) public struct Table {
        @_spi(Backend) public var name: String
        @_spi(Backend) public var columns: (String, String)
        @_spi(Backend) public var added: [Pair] = []
        @_spi(Backend) public var removed: [Pair] = []
    }

    /// The tables with changes, by name.
    @_spi(Backend) public private(set) var tables: [Table] = []
    /// The members written: object, relationship index, member ids.
    @_spi(Backend) public private(set) var written: [(ModelBackingData, Int, MemberIDs)] = []

    /// The changes of the join-table relationships of `objects` (saved ones: those with an id);
    /// `ownColumnFirst(table, ownColumn, targetColumn)` says which of a table's two columns comes
    /// first (the order rows are written in), the same answer from either side.
    ///
    /// Two passes: the first reads each changed list's members and counts its pairs, the second
    /// writes the pairs into lists made at their final size. A save of many links holds hundreds of
    /// thousands of pairs (each reported from both sides); lists that grew by doubling held up to
    /// twice that, and the old and new buffer at once while growing.
    @_spi(Backend) public init(of objects: some Sequence<any PersistentModel>, ownColumnFirst: (_ table: String, _ own: String, _ target: String) throws -> Bool) rethrows {
        var positions: [String: Int] = [:]
        // Per changed list, in `written`'s order: its table, whether its own id comes first, the
        // object's id and the members as saved.
        var sources: [(table: Int, ownFirst: Bool, id: Int64, saved: MemberIDs)] = []
        var counts: [(added: Int, removed: Int)] = []
        for object in objects {
            let backing = object.persistentBackingData
            guard let id = backing.id else { continue }
            try backing.forEachChangedMembers { index, current, saved in
                guard case let .joinTable(table, own, target) = backing.entity.relationships[index].storage else { return }
                let ownFirst = try ownColumnFirst(table, own, target)
                let position = positions[table] ?? tables.count
                if position == tables.count {
                    positions[table] = position
                    tables.append(Table(name: table, columns: ownFirst ? (own, target) : (target, own)))
                    counts.append((0, 0))
                }
                counts[position].added += current.count(notIn: saved)
                counts[position].removed += saved.count(notIn: current)
                sources.append((position, ownFirst, id, saved))
                written.append((backing, index, current))
            }
        }
        for position in tables.indices {
            tables[position].added.reserveCapacity(counts[position].added)
            tables[position].removed.reserveCapacity(counts[position].removed)
        }
        for ((_, _, current), (position, ownFirst, id, saved)) in zip(written, sources) {
            func pair(_ member: Int64) -> Pair { ownFirst ? Pair(first: id, second: member) : Pair(first: member, second: id) }
            // Appended in place (a table taken out and put back would copy its lists each time).
            current.forEach(notIn: saved) { tables[position].added.append(pair($0)) }
            saved.forEach(notIn: current) { tables[position].removed.append(pair($0)) }
        }
        tables.sort { $0.name < $1.name }
        // In place: no second and third array at the save's peak of memory.
        for position in tables.indices {
            tables[position].added.sortKeepingEachOnce()
            tables[position].removed.sortKeepingEachOnce()
        }
    }
}

extension Array where Element: Comparable {
    /// Sorts the elements and keeps each once, in place (no second array).
    mutating func sortKeepingEachOnce() {
        sort()
        var kept = 0
        for index in indices where kept == 0 || self[index] != self[kept - 1] {
            self[kept] = self[index]
            kept += 1
        }
        removeSubrange(kept...)
    }
}
