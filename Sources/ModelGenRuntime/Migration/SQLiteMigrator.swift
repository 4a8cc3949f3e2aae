import Foundation
import ModelGenSchema

/// What a migration did, or would do (a dry run), or why it was refused.
public struct MigrationReport: Equatable, Sendable, CustomStringConvertible {
    /// A check that found rows: values a step would lose, or rows that make it impossible.
    public struct Finding: Equatable, Sendable {
        public var entity: String
        public var element: String?
        public var message: String
        public var rows: Int
        /// The values of the first of the rows to blame, where the message does not say them
        /// (`code = 'a' in 2 objects` for duplicates, `'007'` for a value that does not convert).
        public var example: String? = nil

        /// The finding as the report lists it: `message: rows (for example …)`.
        var line: String { "\(message): \(rows)" + (example.map { " (for example \($0))" } ?? "") }
    }

    /// The canonical hashes of the stored and the new schema.
    public var from: String
    public var to: String
    public var operations: [MigrationPlan.Operation]
    /// Values lost (or that would be lost), with counts.
    public var dataLoss: [Finding] = []
    /// Rows that make the migration impossible; empty when it ran.
    public var refusals: [Finding] = []
    /// True when nothing was changed because of `refusals` or of a loss of data not allowed.
    public var isRefused = false
    public var isDryRun: Bool

    public var description: String {
        var lines: [String] = []
        if from == to, operations.isEmpty { return "The store is at this schema already; nothing to do." }
        if !isRefused, from == to {
            lines.append("\(isDryRun ? "Would rebuild" : "Rebuilt") the tables whose floating-point columns an earlier ModelGen declared REAL (SQLite stored -0.0 in them as 0), at \(to):")
        } else if !isRefused {
            lines.append("\(isDryRun ? "Would migrate" : "Migrated") from \(from) to \(to):")
        } else {
            lines.append("migration refused, nothing was changed:")
            lines += refusals.map { "  - " + $0.line }
            if refusals.isEmpty {
                lines.append("  - it would lose the data below; allow data loss to migrate anyway (modelgen migrate --allow-data-loss, ModelConfiguration(allowsMigrationDataLoss: true))")
            }
            if !operations.isEmpty { lines.append("The migration would:") }
        }
        lines += operations.map { "  \($0.safety == .destructive ? "!" : "-") \($0.detail)" }
        if !dataLoss.isEmpty {
            lines.append(isRefused || isDryRun ? "Data it would lose:" : "Data lost:")
            lines += dataLoss.map { "  - " + $0.line }
        }
        return lines.joined(separator: "\n")
    }

    /// `{"from": …, "to": …, "operations": [{"kind", "entity", "element", "detail", "safety"}], "dataLoss": [{"entity", "attribute", "rows", "message", "example"}], "refusals": […], "dryRun": bool}`.
    public var json: String {
        func finding(_ finding: Finding) -> String {
            "{\"entity\": \(finding.entity.jsonQuoted), \"attribute\": \(finding.element.map(\.jsonQuoted) ?? "null"), \"rows\": \(finding.rows), \"message\": \(finding.message.jsonQuoted), \"example\": \(finding.example.map(\.jsonQuoted) ?? "null")}"
        }
        let operations = self.operations.map { operation in
            "{\"kind\": \(operation.kind.jsonQuoted), \"entity\": \(operation.entity.jsonQuoted), \"element\": \(operation.element.map(\.jsonQuoted) ?? "null"), \"detail\": \(operation.detail.jsonQuoted), \"safety\": \(operation.safety.rawValue.jsonQuoted)}"
        }
        return "{\"from\": \(from.jsonQuoted), \"to\": \(to.jsonQuoted), \"operations\": [\(operations.joined(separator: ", "))], "
            + "\"dataLoss\": [\(dataLoss.map(finding).joined(separator: ", "))], \"refusals\": [\(refusals.map(finding).joined(separator: ", "))], \"refused\": \(isRefused), \"dryRun\": \(isDryRun)}"
    }
}

/// A migration that was refused: nothing was changed. The report names every cause with its count.
public struct MigrationRefused: Error, Equatable, CustomStringConvertible {
    public var report: MigrationReport
    public var description: String { report.description }
}

/// Runs a `MigrationPlan` on an SQLite database in one transaction, with foreign-key enforcement
/// switched off outside it (SQLite's documented order for table rebuilds: inside a transaction
/// the setting cannot change, and with enforcement on, dropping an old table would fire its
/// children's `ON DELETE` actions). First every check counts its rows: a refusal, or a loss of
/// data not allowed, rolls back before anything changed. Then the statements run, indexes are
/// made those of the new schema, the foreign keys of every created, rebuilt or renamed table are
/// checked (`PRAGMA foreign_key_check(table)`, scoped, so old orphans elsewhere do not block), the
/// row counts of tables referring to rebuilt ones are compared, and the new schema is recorded in
/// `modelgen_schema`. A dry run does all of it and rolls back, so it reports exactly what the
/// real run does.
public struct SQLiteMigrator {
    public let database: SQLiteDatabase

    public init(database: SQLiteDatabase) {
        self.database = database
    }

    /// The table that records the schema a store is at: one row, its hash and canonical JSON.
    static let schemaTable = ModelSchema.recordTable

    /// The schema recorded in the store, if any: its hash and canonical JSON.
    public func storedSchema() throws -> (hash: String, json: String)? {
        guard try database.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(Self.schemaTable)]) > 0 else { return nil }
        guard let row = try database.query("SELECT hash, schema FROM \(Self.schemaTable) WHERE id = 1").first,
              case let .text(hash) = row[0], case let .text(json) = row[1] else { return nil }
        return (hash, json)
    }

    /// Records `canonicalJSON` as the schema the store is at (inside the caller's transaction, if any).
    public func recordSchema(_ canonicalJSON: String) throws {
        try database.execute(ModelSchema.recordTableDefinition.replacingOccurrences(of: "CREATE TABLE ", with: "CREATE TABLE IF NOT EXISTS "))
        try database.run("INSERT OR REPLACE INTO \(Self.schemaTable) (id, hash, schema) VALUES (1, ?, ?)", [.text(ModelSchema.hash(canonicalJSON)), .text(canonicalJSON)])
    }

    /// How the store's tables differ from the ones `schema`'s DDL creates (missing tables, missing
    /// and unexpected columns), in schema order; empty when they match.
    public func differences(from schema: ModelSchema) throws -> [String] {
        let ddl = DDLGenerator(schema: schema, dialect: .sqlite)
        let tables = schema.entities.map(ddl.tableDefinition(of:)) + schema.joinTables.map(ddl.tableDefinition(of:))
        var differences: [String] = []
        for table in tables {
            let found = try columns(of: table.name)
            guard !found.isEmpty else {
                differences.append("table \(table.name) is missing")
                continue
            }
            let columns = table.columns.map(\.name)
            for column in columns where !found.contains(column) { differences.append("table \(table.name) has no column \(column)") }
            for column in found where !columns.contains(column) { differences.append("table \(table.name) has a column \(column) the schema does not declare") }
        }
        return differences
    }

    /// Whether any table of the store has a column declared `REAL` (one query; false in a store this
    /// ModelGen made, whose floating-point columns are untyped). Where true, an open finds out with
    /// `floatingPointColumns(of:)` whether they are the schema's.
    public func mayDeclareREALColumns() throws -> Bool {
        try database.scalar("SELECT count(*) FROM sqlite_master AS m, pragma_table_info(m.name) AS p WHERE m.type = 'table' AND upper(p.type) = 'REAL'") > 0
    }

    /// How the store declares the columns of `schema`'s `Double`, `Float` and `Date` attributes:
    /// `.real` when one of them is declared `REAL`, as an earlier ModelGen wrote them (where SQLite
    /// stores -0.0 as 0); a migration then rebuilds their tables with untyped columns.
    public func floatingPointColumns(of schema: ModelSchema) throws -> SQLiteFloatingPointColumns {
        for entity in schema.entities {
            for attribute in entity.storedAttributes {
                guard case let .scalar(type) = attribute.type, type.isFloatingPoint else { continue }
                let declared = try database.query("SELECT upper(type) FROM pragma_table_info(?) WHERE name = ?", [.text(entity.tableName), .text(attribute.columnName)])
                if declared.first?.first == .text("REAL") { return .real }
            }
        }
        return .untyped
    }

    /// Migrates the store from `old` to `new`; throws `MigrationRefused` having changed nothing.
    /// A store whose floating-point columns an earlier ModelGen declared `REAL` has their tables
    /// rebuilt with untyped columns too, even when `old` is `new`.
    @discardableResult
    public func migrate(from old: ModelSchema, to new: ModelSchema, allowDataLoss: Bool = false, dryRun: Bool = false) throws -> MigrationReport {
        try migrate(from: old, to: new, allowDataLoss: allowDataLoss, dryRun: dryRun, ifStoreRecords: nil)!
    }

    /// Migrates the store from `old` to `new` if, once the migration holds the store's write lock,
    /// the store still records the schema whose hash is `recordedHash` (when given); nil, having
    /// changed nothing, when it does not: another connection changed the store since it was read
    /// (another process that opened it at the same moment migrated it first).
    func migrate(from old: ModelSchema, to new: ModelSchema, allowDataLoss: Bool, dryRun: Bool = false, ifStoreRecords recordedHash: String?) throws -> MigrationReport? {
        let plan = MigrationPlanner.plan(from: old, to: new, store: try floatingPointColumns(of: old))
        var report = MigrationReport(from: plan.from, to: plan.to, operations: plan.operations, isDryRun: dryRun)
        guard !plan.isEmpty else { return report }
        let newJSON = new.canonicalJSON
        // The connection's settings come back whatever happens: a rebuild works best with a page
        // cache that holds the tables it copies (64 MiB at most, for the migration only).
        let secureDelete = try database.scalar("PRAGMA secure_delete"), cacheSize = try database.scalar("PRAGMA cache_size")
        try database.execute("PRAGMA cache_size = -65536")
        defer { try? database.execute("PRAGMA secure_delete = \(secureDelete); PRAGMA cache_size = \(cacheSize)") }
        let ran = try database.withoutForeignKeyEnforcement { () -> Bool in
            try database.execute("BEGIN IMMEDIATE")
            do {
                if let recordedHash, try storedSchema()?.hash != recordedHash {
                    try database.execute("ROLLBACK")
                    return false
                }
                for check in plan.checks {
                    let rows = Int(try database.scalar(check.countSQL))
                    guard rows > 0 else { continue }
                    let example = try check.exampleSQL.flatMap { sql -> String? in
                        guard case let .text(text)? = try database.query(sql).first?.first else { return nil }
                        return text
                    }
                    let finding = MigrationReport.Finding(entity: check.entity, element: check.element, message: check.message, rows: rows, example: example)
                    if check.kind == .refusal { report.refusals.append(finding) } else { report.dataLoss.append(finding) }
                }
                if !report.refusals.isEmpty || (!report.dataLoss.isEmpty && !allowDataLoss) {
                    report.isRefused = true
                    throw MigrationRefused(report: report)
                }
                // A rebuilt table's rows all live on in its new copy: zeroing the old copy's pages
                // (`secure_delete`, on in some builds) would protect nothing and double the writes.
                // When the migration drops data, the store's setting stays.
                if report.dataLoss.isEmpty { try database.execute("PRAGMA secure_delete = OFF") }
                var countsBefore: [String: Int64] = [:]
                for table in plan.countedTables where try tableExists(table.before) {
                    countsBefore[table.after] = try database.scalar("SELECT count(*) FROM \(SQLDialect.sqlite.quote(table.before))")
                }
                for (position, statement) in plan.statements.enumerated() {
                    if let copy = plan.wholeRowCopies[position], try columns(of: copy.table) == copy.columns {
                        // Under temporary names (the old table's indexes hold the schema's until it
                        // is dropped); `applyIndexes` gives them the schema's.
                        for index in try carriableIndexes(of: copy, among: plan.indexes) {
                            try database.execute(index.createStatement(dialect: .sqlite, as: SQLNames.shortened("modelgen_new_" + index.name), on: copy.temporaryTable))
                        }
                        try database.execute(copy.sql)
                    } else {
                        try database.execute(statement)
                    }
                }
                try applyIndexes(plan.indexes)
                for table in plan.checkedTables {
                    let dangling = try database.query("SELECT \"table\", rowid FROM pragma_foreign_key_check(?)", [.text(table)])
                    guard dangling.isEmpty else {
                        report.refusals.append(.init(entity: table, element: nil, message: "rows of \(table) that would refer to rows that do not exist", rows: dangling.count))
                        report.isRefused = true
                        throw MigrationRefused(report: report)
                    }
                }
                for (table, before) in countsBefore {
                    let after = try database.scalar("SELECT count(*) FROM \(SQLDialect.sqlite.quote(table))")
                    guard after == before else {
                        report.refusals.append(.init(entity: table, element: nil, message: "rows of \(table) that a table rebuild would have removed (had \(before), would have \(after))", rows: Int(before - after)))
                        report.isRefused = true
                        throw MigrationRefused(report: report)
                    }
                }
                try carryLargestIDs(renamed: plan.renamedTables)
                try recordSchema(newJSON)
                try database.execute(dryRun ? "ROLLBACK" : "COMMIT")
                return true
            } catch {
                if database.isInTransaction { try? database.execute("ROLLBACK") }
                throw error
            }
        }
        return ran ? report : nil
    }

    /// The table's columns in the order the file stores them.
    private func columns(of table: String) throws -> [String] {
        try database.query("SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(table)]).compactMap { row in
            if case let .text(name) = row[0] { return name }
            return nil
        }
    }

    /// The largest ids the runtime recorded (`SQLiteDatabase.recordLargestIDs`) follow the tables
    /// the migration renamed (`MigrationPlan.renamedTables`), so that the ids of rows deleted
    /// before the migration are not given again after it; per table renamed (tables may exchange
    /// names: every old row goes before the new ones are written):
    ///
    ///     SELECT largest FROM modelgen_largest_ids WHERE "table" = 'old_name'
    ///     DELETE FROM modelgen_largest_ids WHERE "table" = 'old_name'
    ///     INSERT INTO modelgen_largest_ids ("table", largest) VALUES ('new_name', ?), … ON CONFLICT …
    private func carryLargestIDs(renamed: [String: String]) throws {
        guard !renamed.isEmpty, try tableExists(SQLiteDatabase.largestIDsTable) else { return }
        let table = SQLiteDatabase.largestIDsTable
        var carried: [(table: String, id: Int64)] = []
        for (from, to) in renamed.sorted(by: { $0.key < $1.key }) {
            if let largest = try database.query("SELECT largest FROM \(table) WHERE \"table\" = ?", [.text(from)]).first?.first?.integer {
                carried.append((to, largest))
            }
            try database.run("DELETE FROM \(table) WHERE \"table\" = ?", [.text(from)])
        }
        try database.recordLargestIDs(carried)
    }

    private func tableExists(_ table: String) throws -> Bool {
        try database.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(table)]) > 0
    }

    /// The new schema's indexes on a rebuilt table, when the file's table has an index of the same
    /// columns for each: made on the new table before the whole-row copy, they are filled by it in
    /// key order (SQLite's transfer optimization copies indexes too), which costs less than sorting
    /// for `CREATE INDEX` afterwards. Otherwise none: the copy would then maintain them row by row.
    private func carriableIndexes(of copy: MigrationPlan.WholeRowCopy, among indexes: [DDLGenerator.IndexDefinition]) throws -> [DDLGenerator.IndexDefinition] {
        let wanted = indexes.filter { $0.table == copy.table }
        guard !wanted.isEmpty else { return [] }
        let existing = try plainIndexes(of: copy.table)
        return wanted.allSatisfy { existing[$0.columns] != nil } ? wanted : []
    }

    /// The table's plain indexes (made by `CREATE INDEX`, neither unique nor partial, every key
    /// ascending in the default collation), by their columns: those an index of the schema can
    /// stand for.
    private func plainIndexes(of table: String) throws -> [[String]: String] {
        var found: [[String]: String] = [:]
        for row in try database.query("SELECT name FROM pragma_index_list(?) WHERE origin = 'c' AND partial = 0 AND \"unique\" = 0", [.text(table)]) {
            guard case let .text(name) = row[0] else { continue }
            let keys = try database.query("SELECT name, coll, desc FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno", [.text(name)])
            guard keys.allSatisfy({ $0[1] == .text("BINARY") && $0[2] == .integer(0) }) else { continue }
            found[keys.compactMap { key in if case let .text(column) = key[0] { column } else { nil } }] = name
        }
        return found
    }

    /// Gives indexes under other names — a rebuilt table's, made while the old table's indexes held
    /// the schema's names, or one whose column or table was renamed — the names and statements of
    /// the schema. SQLite cannot rename an index; this is its documented procedure for a schema
    /// change that leaves stored content as it is (lang_altertable.html): the definitions are edited
    /// in `sqlite_master` with `writable_schema` on, and the schema version incremented, so every
    /// connection reloads the schema. Where editing is refused (`SQLITE_DBCONFIG_DEFENSIVE`), an
    /// index keeps its other name, and `applyIndexes` replaces it by the schema's.
    private func giveSchemaNames(to renames: [(index: DDLGenerator.IndexDefinition, currentName: String)]) throws {
        let version = try database.scalar("PRAGMA schema_version")
        var renamed = 0
        try database.execute("PRAGMA writable_schema = ON")
        for (index, currentName) in renames {
            do {
                renamed += try database.run("UPDATE sqlite_master SET name = ?, sql = ? WHERE type = 'index' AND name = ?",
                                            [.text(index.name), .text(Self.storedStatement(index.sql)), .text(currentName)])
            } catch {
                break
            }
        }
        if renamed > 0 { try database.execute("PRAGMA schema_version = \(version + 1)") }
        try database.execute("PRAGMA writable_schema = OFF")
    }

    /// Makes the store's indexes the new schema's: one whose name and definition match stays; one
    /// on the same columns under another name (a rebuilt table's, or one whose column or table was
    /// renamed in place) is renamed rather than built again, which would cost a sort of the table
    /// (`giveSchemaNames`); the others are dropped, and the missing ones created.
    private func applyIndexes(_ indexes: [DDLGenerator.IndexDefinition]) throws {
        var existing = try storedIndexes()
        let wanted = Dictionary(indexes.map { ($0.name, $0.sql) }, uniquingKeysWith: { first, _ in first })
        var stale = Set(existing.keys.filter { name in wanted[name].map { Self.sameIndex($0, existing[name]!) } != true })
        var renames: [(index: DDLGenerator.IndexDefinition, currentName: String)] = []
        var plain: [String: [[String]: String]] = [:]
        for index in indexes where existing[index.name] == nil {
            if plain[index.table] == nil { plain[index.table] = try plainIndexes(of: index.table) }
            guard let name = plain[index.table]?[index.columns], stale.remove(name) != nil else { continue }
            renames.append((index, name))
        }
        if !renames.isEmpty {
            try giveSchemaNames(to: renames)
            existing = try storedIndexes()
        }
        for (name, sql) in existing.sorted(by: { $0.key < $1.key }) where wanted[name].map({ Self.sameIndex($0, sql) }) != true {
            try database.execute("DROP INDEX \(SQLDialect.sqlite.quote(name))")
        }
        for index in indexes where existing[index.name].map({ Self.sameIndex(index.sql, $0) }) != true {
            try database.execute(index.sql)
        }
    }

    /// The statement of every index made by `CREATE INDEX`, by name.
    private func storedIndexes() throws -> [String: String] {
        var indexes: [String: String] = [:]
        for row in try database.query("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL") {
            if case let .text(name) = row[0], case let .text(sql) = row[1] { indexes[name] = sql }
        }
        return indexes
    }

    /// An index's statement as SQLite stores it: without the final semicolon.
    private static func storedStatement(_ statement: String) -> String {
        statement.hasSuffix(";") ? String(statement.dropLast()) : statement
    }

    private static func sameIndex(_ statement: String, _ stored: String) -> Bool { storedStatement(statement) == stored }
}
