/// How a save writes the rows of join tables: only the pairs added or removed since the last save,
/// each once, through one prepared statement per table.
extension ModelContext {
    /// The pairs of one join table that a save adds and removes; ids in the order of `columns`.
    /// Both sides of a many-to-many relationship may report the same pair: they are written once,
    /// sorted by the column of the table's second index, then by the other: that index only
    /// appends, and the primary key (other column first) grows at one place per value of it.
    private struct JoinTableChanges {
        var columns: (String, String)
        var added: [JoinPair] = []
        var removed: [JoinPair] = []
    }

    private struct JoinPair: Comparable {
        var first: Int64, second: Int64

        static func < (lhs: JoinPair, rhs: JoinPair) -> Bool {
            (lhs.first, lhs.second) < (rhs.first, rhs.second)
        }
    }

    /// Sorts the pairs and keeps each once, in place (a save of many links holds hundreds of
    /// thousands of them: no second and third array at the save's peak of memory).
    private func sortAndDeduplicate(_ pairs: inout [JoinPair]) {
        pairs.sort()
        var kept = 0
        for index in pairs.indices where kept == 0 || pairs[index] != pairs[kept - 1] {
            pairs[kept] = pairs[index]
            kept += 1
        }
        pairs.removeSubrange(kept...)
    }

    /// Writes the join rows added and removed since the last save; returns the members written,
    /// which become the saved ones when the transaction commits.
    func writeJoinRows(of objects: [any PersistentModel]) throws -> [(ModelBackingData, Int, MemberIDs)] {
        var tables: [String: JoinTableChanges] = [:]
        var written: [(ModelBackingData, Int, MemberIDs)] = []
        for object in objects {
            let backing = object.persistentBackingData
            guard let id = backing.id else { continue }
            for (index, current, saved) in backing.changedMembers() {
                guard case let .joinTable(table, own, target) = backing.entity.relationships[index].storage else { continue }
                // Both sides name the same two columns; the pair is kept in the order of their names.
                let ownFirst = try sortColumn(of: table) == SQLDialect.unquoted(own)
                func pair(_ member: Int64) -> JoinPair { ownFirst ? JoinPair(first: id, second: member) : JoinPair(first: member, second: id) }
                // Changed in place in the dictionary (a copy taken out would copy the lists at each append).
                tables[table, default: JoinTableChanges(columns: ownFirst ? (own, target) : (target, own))].added += current.subtracting(saved).map(pair)
                tables[table]!.removed += saved.subtracting(current).map(pair)
                written.append((backing, index, current))
            }
        }
        for table in tables.keys.sorted() {
            sortAndDeduplicate(&tables[table]!.removed)
            sortAndDeduplicate(&tables[table]!.added)
            let changes = tables[table]!
            let (first, second) = changes.columns
            try database.runEach("DELETE FROM \(table) WHERE \(first) = ? AND \(second) = ?", changes.removed) { statement, pair in
                statement.bind(.integer(pair.first), at: 1)
                statement.bind(.integer(pair.second), at: 2)
            }
            try database.runEach("INSERT OR IGNORE INTO \(table) (\(first), \(second)) VALUES (?, ?)", changes.added) { statement, pair in
                statement.bind(.integer(pair.first), at: 1)
                statement.bind(.integer(pair.second), at: 2)
            }
        }
        return written
    }

    /// The join table's column that leads the order its rows are written in: the second column of
    /// its primary key, which has an index of its own (read from the table once per context).
    private func sortColumn(of table: String) throws -> String {
        if let column = joinTableSortColumns[table] { return column }
        let rows = try database.query("SELECT name FROM pragma_table_info(?) WHERE pk = 2", [.text(SQLDialect.unquoted(table))])
        guard case let .text(column)? = rows.first?.first else { return "" }
        joinTableSortColumns[table] = column
        return column
    }
}
