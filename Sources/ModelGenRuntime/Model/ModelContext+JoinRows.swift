/// How a save writes the rows of join tables: only the pairs added or removed since the last save,
/// each once (`JoinRowChanges`), through one prepared statement per table.
extension ModelContext {
    /// Writes the join rows added and removed since the last save; returns the lists written,
    /// whose members become the saved ones when the transaction commits. Pairs go sorted by the column of
    /// the table's second index, then by the other: that index only appends, and the primary key
    /// (other column first) grows at one place per value of it.
    /// Also returns the tables' pairs added with an end the save deletes, for
    /// `removeJoinRows(withDeletedEnd:)` once the deletions ran.
    func writeJoinRows(of objects: some Sequence<any PersistentModel>) throws -> (written: [(ModelBackingData, Int)], withDeletedEnd: [JoinRowChanges.Table]) {
        let changes = try JoinRowChanges(of: objects, deleting: !deleted.isEmpty) { table, own, _ in try sortColumn(of: table) == SQLDialect.unquoted(own) }
        for table in changes.tables {
            // This context reads a list as it is replaced: no list replaces members never read.
            assert(table.replacedOwners == ([], []), "\(table.name): a list replaced unread")
            let (first, second) = table.columns
            try removeJoinRows(table.removed, of: table)
            try database.runEach("INSERT OR IGNORE INTO \(table.name) (\(first), \(second)) VALUES (?, ?)", table.added) { statement, pair in
                try statement.bind(.integer(pair.first), at: 1)
                try statement.bind(.integer(pair.second), at: 2)
            }
        }
        return (changes.written, changes.tables.filter { !$0.addedWithDeletedEnd.isEmpty })
    }

    /// Removes the join rows a save added with an end it deleted, once its deletions ran
    /// (`JoinRowChanges.Table.addedWithDeletedEnd`): those still there name a row another context
    /// or process deleted, and the changes of an object the save deletes refuse nothing.
    func removeJoinRows(withDeletedEnd tables: [JoinRowChanges.Table]) throws {
        for table in tables { try removeJoinRows(table.addedWithDeletedEnd, of: table) }
    }

    private func removeJoinRows(_ pairs: [JoinRowChanges.Pair], of table: JoinRowChanges.Table) throws {
        let (first, second) = table.columns
        try database.runEach("DELETE FROM \(table.name) WHERE \(first) = ? AND \(second) = ?", pairs) { statement, pair in
            try statement.bind(.integer(pair.first), at: 1)
            try statement.bind(.integer(pair.second), at: 2)
        }
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
