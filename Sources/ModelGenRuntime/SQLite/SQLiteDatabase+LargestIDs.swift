/// A row id is never given twice. SQLite gives a new row one past the largest id its table holds,
/// so the id of a deleted row that held the largest would go to the next new row, and an
/// identifier an app kept (`model(for:)`), or an object another context still holds, would then
/// name another object: its changes would be written to that object's row. The runtime keeps,
/// per table, the largest id the table ever held in the store's table `modelgen_largest_ids`
/// (Core Data keeps the same in `Z_PRIMARYKEY`; PostgreSQL's identity sequences never go back),
/// raises it before it deletes rows and when it gives new ones ids, and gives new rows ids past
/// it. Rows deleted by other programs before the runtime recorded their table's largest id can
/// still see their ids given again (an SQLite table declared `AUTOINCREMENT` would prevent that
/// for every writer, at the cost of a table rebuild for every existing store).
extension SQLiteDatabase {
    /// The table of the largest ids (the prefix `modelgen_` is reserved to ModelGen).
    static let largestIDsTable = "modelgen_largest_ids"

    /// Makes `modelgen_largest_ids` if the store has none yet (in the caller's transaction):
    ///
    ///     CREATE TABLE IF NOT EXISTS modelgen_largest_ids ("table" TEXT PRIMARY KEY, largest INTEGER NOT NULL) WITHOUT ROWID
    func makeLargestIDsTable() throws {
        try execute("CREATE TABLE IF NOT EXISTS \(Self.largestIDsTable) (\"table\" TEXT PRIMARY KEY, largest INTEGER NOT NULL) WITHOUT ROWID")
    }

    /// The largest id `entity`'s table holds or ever held (0 for none); the caller has made
    /// `modelgen_largest_ids` (`makeLargestIDsTable`):
    ///
    ///     SELECT max(coalesce(max(id), 0), coalesce((SELECT largest FROM modelgen_largest_ids WHERE "table" = 'volume'), 0)) FROM "volume"
    func largestIDEver(in entity: EntityDescription) throws -> Int64 {
        try scalar("SELECT max(coalesce(max(id), 0), coalesce((SELECT largest FROM \(Self.largestIDsTable) WHERE \"table\" = ?), 0)) FROM \(entity.table)",
                   [.text(entity.tableName)])
    }

    /// Raises the recorded largest id of each table (raw name) to `id`, in one statement; the
    /// caller has made `modelgen_largest_ids` (`makeLargestIDsTable`):
    ///
    ///     INSERT INTO modelgen_largest_ids ("table", largest) VALUES ('volume', 7), ('writer', 3)
    ///         ON CONFLICT ("table") DO UPDATE SET largest = max(largest, excluded.largest)
    ///
    /// (literals, not parameters: no bound in the number of tables.)
    func recordLargestIDs(_ largest: [(table: String, id: Int64)]) throws {
        guard !largest.isEmpty else { return }
        try run("INSERT INTO \(Self.largestIDsTable) (\"table\", largest) VALUES " + largest.map { "(\(SQLDialect.sqlite.literal($0.table)), \($0.id))" }.joined(separator: ", ")
                + " ON CONFLICT (\"table\") DO UPDATE SET largest = max(largest, excluded.largest)")
    }

    /// Raises the recorded largest id of each table of `tables` (raw names, and quoted as SQL
    /// needs them) to the largest it holds now, before rows of them are deleted
    /// (`modelgen_largest_ids` made first), in one statement:
    ///
    ///     INSERT INTO modelgen_largest_ids ("table", largest)
    ///         SELECT column1, column2 FROM (VALUES ('volume', (SELECT max(id) FROM "volume")), …) WHERE column2 IS NOT NULL
    ///         ON CONFLICT ("table") DO UPDATE SET largest = max(largest, excluded.largest)
    ///
    /// A row of `VALUES` per table, the names written as literals: the statement has no bound
    /// in the number of tables, where SQLite takes at most 500 terms of a `UNION ALL` and 32,766
    /// parameters.
    public func recordLargestIDs(ofTables tables: [(name: String, quoted: String)]) throws {
        guard !tables.isEmpty else { return }
        try makeLargestIDsTable()
        let rows = tables.map { "(\(SQLDialect.sqlite.literal($0.name)), (SELECT max(id) FROM \($0.quoted)))" }.joined(separator: ", ")
        try run("INSERT INTO \(Self.largestIDsTable) (\"table\", largest) SELECT column1, column2 FROM (VALUES \(rows)) WHERE column2 IS NOT NULL"
                + " ON CONFLICT (\"table\") DO UPDATE SET largest = max(largest, excluded.largest)")
    }

    /// `recordLargestIDs(ofTables:)` for the tables of `entities`.
    func recordLargestIDs(of entities: [EntityDescription]) throws {
        try recordLargestIDs(ofTables: entities.map { ($0.tableName, $0.table) })
    }
}
