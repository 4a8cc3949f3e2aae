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
    ///     INSERT INTO modelgen_largest_ids ("table", largest) VALUES (?, ?), (?, ?)
    ///         ON CONFLICT ("table") DO UPDATE SET largest = max(largest, excluded.largest)
    func recordLargestIDs(_ largest: [(table: String, id: Int64)]) throws {
        guard !largest.isEmpty else { return }
        try run("INSERT INTO \(Self.largestIDsTable) (\"table\", largest) VALUES " + largest.map { _ in "(?, ?)" }.joined(separator: ", ")
                + " ON CONFLICT (\"table\") DO UPDATE SET largest = max(largest, excluded.largest)",
                largest.flatMap { [SQLiteValue.text($0.table), .integer($0.id)] })
    }

    /// Raises the recorded largest id of each table of `tables` (raw names, and quoted as SQL
    /// needs them) to the largest it holds now, before rows of them are deleted
    /// (`modelgen_largest_ids` made first), in one statement:
    ///
    ///     INSERT INTO modelgen_largest_ids ("table", largest)
    ///         SELECT name, largest FROM (SELECT 'volume' AS name, max(id) AS largest FROM "volume" UNION ALL …) WHERE largest IS NOT NULL
    ///         ON CONFLICT ("table") DO UPDATE SET largest = max(largest, excluded.largest)
    public func recordLargestIDs(ofTables tables: [(name: String, quoted: String)]) throws {
        guard !tables.isEmpty else { return }
        try makeLargestIDsTable()
        let largest = tables.map { "SELECT ? AS name, max(id) AS largest FROM \($0.quoted)" }.joined(separator: " UNION ALL ")
        try run("INSERT INTO \(Self.largestIDsTable) (\"table\", largest) SELECT name, largest FROM (\(largest)) WHERE largest IS NOT NULL"
                + " ON CONFLICT (\"table\") DO UPDATE SET largest = max(largest, excluded.largest)",
                tables.map { .text($0.name) })
    }

    /// `recordLargestIDs(ofTables:)` for the tables of `entities`.
    func recordLargestIDs(of entities: [EntityDescription]) throws {
        try recordLargestIDs(ofTables: entities.map { ($0.tableName, $0.table) })
    }
}
