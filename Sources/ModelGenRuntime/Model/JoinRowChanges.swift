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
        /// The pairs added with an end the save deletes, sorted. They are written (the deletion
        /// follows the relationships its objects have now, as SwiftData's delete rules do) and
        /// removed again once the deletions ran: the deletion of an object whose row is there
        /// removed them already, and one of an object whose row another context or process
        /// deleted meanwhile leaves them naming no row — changes of an object the save deletes,
        /// which refuse nothing.
        @_spi(Backend) public var addedWithDeletedEnd: [Pair] = []
        /// The owners whose lists replace the members stored without having read them
        /// (`ModelList.replacesStoredMembers`; only in a context that loads on request), by the
        /// column holding their ids (the first of `columns`, or the second): a save removes every
        /// join row of theirs before it writes the pairs, which hold all their members.
        @_spi(Backend) public var replacedOwners: (first: [Int64], second: [Int64]) = ([], [])
    }

    /// The tables with changes, by name.
    @_spi(Backend) public private(set) var tables: [Table] = []
    /// The lists written (object and relationship index), whose members become the saved ones
    /// when the transaction commits (`ModelBackingData.didSaveMembers`).
    @_spi(Backend) public private(set) var written: [(ModelBackingData, Int)] = []

    /// The changes of the join-table relationships of `objects` (saved ones: those with an id);
    /// `ownColumnFirst(table, ownColumn, targetColumn)` says which of a table's two columns comes
    /// first (the order rows are written in), the same answer from either side. `deleting`: the
    /// save deletes objects (`addedWithDeletedEnd` is looked for only then).
    ///
    /// A save of many links holds hundreds of thousands of pairs (each reported from both sides),
    /// so the lists of pairs are made at their final size (lists that grew by doubling held up to
    /// twice that, and the old and new buffer at once while growing): a first pass sizes them by
    /// the changed lists' member counts (no ids made), the second makes each list's ids, now and
    /// as saved, and appends the pairs they differ by; those ids go as soon as the pairs are made.
    @_spi(Backend) public init(of objects: some Sequence<any PersistentModel>, deleting: Bool,
                               ownColumnFirst: (_ table: String, _ own: String, _ target: String) throws -> Bool) rethrows {
        var positions: [String: Int] = [:]
        // Per list in `written`, its table and whether its own id comes first.
        var destinations: [(table: Int, ownFirst: Bool)] = []
        var bounds: [(added: Int, removed: Int)] = []
        for object in objects {
            let backing = object.persistentBackingData
            guard backing.id != nil else { continue }
            try backing.forEachChangedMembers { index, currentCount, savedCount in
                guard case let .joinTable(table, own, target) = backing.entity.relationships[index].storage else { return }
                let ownFirst = try ownColumnFirst(table, own, target)
                let position = positions[table] ?? tables.count
                if position == tables.count {
                    positions[table] = position
                    tables.append(Table(name: table, columns: ownFirst ? (own, target) : (target, own)))
                    bounds.append((0, 0))
                }
                bounds[position].added += currentCount
                bounds[position].removed += savedCount
                destinations.append((position, ownFirst))
                written.append((backing, index))
            }
        }
        for position in tables.indices {
            tables[position].added.reserveCapacity(bounds[position].added)
            tables[position].removed.reserveCapacity(bounds[position].removed)
        }
        for ((backing, index), (position, ownFirst)) in zip(written, destinations) {
            let id = backing.id!
            func pair(_ member: Int64) -> Pair { ownFirst ? Pair(first: id, second: member) : Pair(first: member, second: id) }
            if backing.replacesStoredMembers(index) {
                if ownFirst { tables[position].replacedOwners.first.append(id) } else { tables[position].replacedOwners.second.append(id) }
            }
            let (current, saved) = backing.memberIDs(index)
            // With deletions, the members marked deleted (all of them when the list's owner is).
            let ownerDeleted = deleting && backing.isDeleted
            let deletedMembers = deleting && !ownerDeleted ? backing.deletedMemberIDs(index) : []
            // Appended in place (a table taken out and put back would copy its lists each time).
            current.forEach(notIn: saved) { member in
                tables[position].added.append(pair(member))
                if deleting, ownerDeleted || deletedMembers.contains(member) { tables[position].addedWithDeletedEnd.append(pair(member)) }
            }
            saved.forEach(notIn: current) { tables[position].removed.append(pair($0)) }
        }
        tables.sort { $0.name < $1.name }
        // In place: no second and third array at the save's peak of memory.
        for position in tables.indices {
            tables[position].added.sortKeepingEachOnce()
            tables[position].removed.sortKeepingEachOnce()
            tables[position].addedWithDeletedEnd.sortKeepingEachOnce()
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
