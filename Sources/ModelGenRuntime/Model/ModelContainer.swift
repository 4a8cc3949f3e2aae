import Foundation
import ModelGenSchema

/// A generated schema: its model types, DDL and deletion programs (`enum Zoo: ModelSchemaDefinition`).
public protocol ModelSchemaDefinition {
    /// The model classes, in schema order.
    static var models: [any PersistentModel.Type] { get }
    /// `CREATE TABLE` and `CREATE INDEX` statements for SQLite, in dependency order.
    static var sqliteDDL: String { get }
    /// `CREATE TABLE` and `CREATE INDEX` statements for PostgreSQL, in dependency order.
    static var postgreSQLTables: String { get }
    /// The safe-deletion program of each entity, by entity name.
    static func deletionProgram(for entity: String) -> DeletionProgram?
    /// The schema in canonical form (`ModelSchema.canonicalJSON`), recorded in the store.
    static var canonicalSchema: String { get }
}

extension ModelSchemaDefinition {
    /// Every table of the schema, each once: the join tables, then the entities' tables in reverse
    /// schema order (what deleting every object empties).
    @_spi(Backend) public static var tables: [String] {
        var tables: [String] = []
        for model in models {
            for relationship in model.entity.relationships {
                if case let .joinTable(table, _, _) = relationship.storage, !tables.contains(table) { tables.append(table) }
            }
        }
        return tables + models.reversed().map { $0.entity.table }
    }
}

/// Where a container keeps its data (SwiftData's `ModelConfiguration`).
public struct ModelConfiguration: Sendable {
    public var url: URL?
    public var isStoredInMemoryOnly: Bool
    /// Whether a file store uses SQLite's write-ahead log (the default) or its rollback journal.
    public var usesWriteAheadLog: Bool
    /// Whether migrating a store from an earlier schema may drop data the schema no longer has
    /// (removed entities, attributes, relationships). Off by default: such a migration is refused,
    /// naming what would be lost.
    public var allowsMigrationDataLoss: Bool

    /// A database file at `url`, created if absent; WAL unless `usesWriteAheadLog` is false.
    public init(url: URL, usesWriteAheadLog: Bool = true, allowsMigrationDataLoss: Bool = false) {
        self.url = url
        isStoredInMemoryOnly = false
        self.usesWriteAheadLog = usesWriteAheadLog
        self.allowsMigrationDataLoss = allowsMigrationDataLoss
    }

    /// An in-memory database, gone when the container is.
    public init(isStoredInMemoryOnly: Bool = true) {
        url = nil
        self.isStoredInMemoryOnly = isStoredInMemoryOnly
        usesWriteAheadLog = false
        allowsMigrationDataLoss = false
    }
}

/// A store that cannot be opened for a schema.
public enum ModelContainerError: Error, Equatable, CustomStringConvertible {
    /// The store's tables do not match the schema: each difference, as a sentence.
    case storeDoesNotMatchSchema(store: String, schema: String, differences: [String])
    /// Other connections changed the store every time this open read it (`attempts` times), between
    /// its read and its write lock.
    case storeKeptChanging(store: String, attempts: Int)
    /// Another connection held the store's write lock for longer than the open waits, `seconds`,
    /// when the open had to create or migrate the store.
    case storeBusy(store: String, seconds: Int)

    public var description: String {
        switch self {
        case let .storeDoesNotMatchSchema(store, schema, differences):
            return "the store \(store) does not match schema \(schema): \(differences.joined(separator: "; ")). "
                + "Nothing was changed. Open it with the schema version that created it, or start from a new file."
        case let .storeBusy(store, seconds):
            return "the store \(store) was locked by another connection for more than \(seconds) s while this one opened it "
                + "(another process writing it, or creating or migrating it). This open changed nothing; open it again."
        case let .storeKeptChanging(store, attempts):
            return "the store \(store) was changed by other connections each of the \(attempts) times it was read while opening "
                + "(other processes creating or migrating it, perhaps with other versions of the schema). This open changed nothing; open it again."
        }
    }
}

/// Owns the database of one schema (SwiftData's `ModelContainer`).
public final class ModelContainer {
    public let schema: any ModelSchemaDefinition.Type
    public let configuration: ModelConfiguration
    let database: SQLiteDatabase
    /// Statements run on the store so far (for benchmarks and diagnostics).
    public var statementsExecuted: Int { database.statementsExecuted }

    /// Opens the store, with foreign keys enforced:
    /// - a store with no tables gets the schema's tables, and the schema is recorded in it;
    /// - a store that records an earlier version of the schema is migrated to this one in one
    ///   transaction (`SQLiteMigrator`), or the migration is refused (`MigrationRefused`, naming
    ///   every cause with its count) and nothing changes; so are the tables whose floating-point
    ///   columns an earlier ModelGen declared `REAL` (rebuilt untyped, values kept);
    /// - a store built from the plain DDL must have every table and column of the schema and no
    ///   other column in them (then the schema is recorded); otherwise
    ///   `ModelContainerError.storeDoesNotMatchSchema` names the differences.
    ///
    /// Of processes opening one store at once, one creates or migrates it; the others find it done.
    public init(for schema: any ModelSchemaDefinition.Type, configurations configuration: ModelConfiguration = ModelConfiguration(isStoredInMemoryOnly: true)) throws {
        self.schema = schema
        self.configuration = configuration
        if let url = configuration.url, !configuration.isStoredInMemoryOnly {
            database = try SQLiteDatabase(path: url.path)
        } else {
            database = try SQLiteDatabase(path: ":memory:")
        }
        do {
            if configuration.url != nil, !configuration.isStoredInMemoryOnly, configuration.usesWriteAheadLog { try database.useWriteAheadLog() }
            try prepareStore()
        } catch let error as SQLiteError where error.isBusy {
            throw ModelContainerError.storeBusy(store: configuration.url?.path ?? ":memory:", seconds: Int(SQLiteDatabase.busyTimeoutMilliseconds / 1_000))
        }
    }

    /// How many times an open reads the store again after another connection changed it between
    /// the open's read and its write lock (each time, that connection moved the store on).
    private static let openAttempts = 8

    /// Brings the store to the schema (see `init`). Other processes may open the store at the same
    /// moment (an app and its extension, a server's workers): what the store holds is read again
    /// once the write lock is held, so exactly one of them creates the tables or migrates, and the
    /// others find the work done. A store already at the schema is only read.
    private func prepareStore() throws {
        let migrator = SQLiteMigrator(database: database)
        // Parsed only when the store is not at the schema (an open that finds it there compares hashes).
        func current() throws -> ModelSchema { try ModelSchema(canonicalJSON: schema.canonicalSchema) }
        for _ in 0..<Self.openAttempts {
            if let stored = try migrator.storedSchema() {
                // At the schema, its floating-point columns untyped: nothing to do (one query, unless a table has a REAL column).
                if stored.hash == ModelSchema.hash(schema.canonicalSchema), try !migrator.mayDeclareREALColumns() || migrator.floatingPointColumns(of: current()) == .untyped { return }
                // A store written by an earlier version of the schema, or by an earlier ModelGen
                // (floating-point columns declared REAL), migrates (SwiftData's lightweight migration).
                let migrated = try migrator.migrate(from: try ModelSchema(canonicalJSON: stored.json), to: try current(),
                                                    allowDataLoss: configuration.allowsMigrationDataLoss, ifStoreRecords: stored.hash)
                if migrated != nil { return }
            } else if try tableCount() == 0 {
                if try createTables(recordingWith: migrator) { return }
            } else {
                // Built from the plain DDL (no recorded schema): used only when its tables match, then recorded.
                let differences = try migrator.differences(from: try current())
                guard differences.isEmpty else {
                    throw ModelContainerError.storeDoesNotMatchSchema(store: configuration.url?.path ?? ":memory:", schema: "\(schema)", differences: differences)
                }
                try migrator.recordSchema(schema.canonicalSchema)
                // Read again: tables an earlier ModelGen's DDL made are rebuilt as this one's.
                continue
            }
        }
        throw ModelContainerError.storeKeptChanging(store: configuration.url?.path ?? ":memory:", attempts: Self.openAttempts)
    }

    private func tableCount() throws -> Int64 {
        try database.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    }

    /// Creates the schema's tables and records the schema, if the store still has no tables once
    /// the write lock is held; false, having changed nothing, when another connection made them first.
    private func createTables(recordingWith migrator: SQLiteMigrator) throws -> Bool {
        try database.execute("BEGIN IMMEDIATE")
        do {
            guard try tableCount() == 0 else {
                try database.execute("ROLLBACK")
                return false
            }
            try database.execute(schema.sqliteDDL)
            try migrator.recordSchema(schema.canonicalSchema)
            try database.execute("COMMIT")
            return true
        } catch {
            if database.isInTransaction { try? database.execute("ROLLBACK") }
            throw error
        }
    }

    /// A container over a store already open, whose main context is `mainContext` (the container a
    /// main context gives when the app let go of its first one; see `ModelContext.container`).
    init(reopening database: SQLiteDatabase, schema: any ModelSchemaDefinition.Type, configuration: ModelConfiguration, mainContext: ModelContext) {
        self.schema = schema
        self.configuration = configuration
        self.database = database
        self.mainContext = mainContext
    }

    /// The context for the main actor's work (one per container). It does not keep the container
    /// alive (see `ModelContext.container`), so a container is freed, and its store closed, once
    /// the app lets go of it and of its main context.
    public private(set) lazy var mainContext = ModelContext(self, isMainContext: true)

    /// Deletes every object of every entity in one transaction, as SwiftData's `deleteAllData()`:
    /// it does not throw; should the store fail (a full disk), nothing is deleted and the error is
    /// written to standard error. `deleteAllDataThrowing()` gives the error to the caller instead.
    public func deleteAllData() {
        do {
            try deleteAllDataThrowing()
        } catch {
            FileHandle.standardError.write(Data("ModelContainer.deleteAllData(): nothing was deleted: \(error)\n".utf8))
        }
    }

    /// Deletes every object of every entity in one transaction. Nothing survives, so no reference
    /// can dangle: join tables, then entity tables, are emptied with foreign-key checks off, which
    /// lets SQLite truncate each table instead of visiting its rows.
    public func deleteAllDataThrowing() throws {
        do {
            try database.withoutForeignKeyEnforcement {
                try database.execute("BEGIN IMMEDIATE")
                // The ids of the rows about to go are not given again.
                try database.recordLargestIDs(of: schema.models.map { $0.entity })
                for table in schema.tables { try database.execute("DELETE FROM \(table)") }
                try database.execute("COMMIT")
            }
        } catch {
            throw mainContext.translate(error)
        }
        mainContext.forgetAll()
    }
}
