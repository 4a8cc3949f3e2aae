import Foundation
import Logging
import ModelGenDeletion
import ModelGenQuery
@_spi(Backend) import ModelGenRuntime
import ModelGenSchema
import PostgresNIO

/// A database that cannot serve a schema, saying why and what to do.
public enum PostgresModelContainerError: Error, Equatable, CustomStringConvertible {
    /// The database records another schema (its name differs), which this one cannot migrate.
    case storeHasOtherSchema(schema: String, storedSchema: String)
    /// Migrating from the recorded version would lose data (`allowsMigrationDataLoss` is false) or
    /// the data breaks a step: the server's message names each cause with its count.
    case migrationRefused(schema: String, message: String)
    /// Tables of the schema exist, but the database records no schema: made by hand or by a tool.
    case tablesWithoutRecordedSchema(schema: String, tables: [String])

    public var description: String {
        switch self {
        case let .storeHasOtherSchema(schema, stored):
            return "the database records schema \(stored), not \(schema); nothing was changed. Connect to the database (or schema) of \(schema)"
        case let .migrationRefused(schema, message):
            return "cannot migrate the database to this version of \(schema): \(message). Fix the data, or pass allowsMigrationDataLoss: true to drop what the schema no longer has"
        case let .tablesWithoutRecordedSchema(schema, tables):
            return "the database has tables of schema \(schema) (\(tables.joined(separator: ", "))) but records no schema (no modelgen_schema table); nothing was changed. "
                + "Connect to an empty database (or schema), or record the schema the tables were made from"
        }
    }
}

/// The generated models of one schema on a PostgreSQL database, over a `PostgresClient` pool (the
/// server counterpart of `ModelContainer`). The app runs the client (`client.run()`, as PostgresNIO
/// asks) and makes a `PostgresModelContext` per unit of work.
public final class PostgresModelContainer: Sendable {
    public let client: PostgresClient
    /// The schema's name (`Zoo`).
    public let schemaName: String
    let logger: Logger
    /// What each entity reads and writes, by `ObjectIdentifier` of its description.
    let mappings: [ObjectIdentifier: PostgresEntityMapping]
    /// Entities in the order their new rows are inserted: an entity's key targets come first,
    /// but where keys form a cycle (`lateKeys`).
    let insertionOrder: [ObjectIdentifier]
    /// For each entity, the relationships whose keys its new rows get by an `UPDATE` after every
    /// insert (the key's target is inserted later, in a cycle of keys).
    let lateKeys: [ObjectIdentifier: Set<Int>]
    /// The model classes, by entity name.
    nonisolated(unsafe) let modelTypes: [String: any PersistentModel.Type]
    /// Every table of the schema (`ModelSchemaDefinition.tables`).
    let tables: [String]
    /// The entities, in schema order.
    let entities: [EntityDescription]
    /// For each entity (by name), the entities its deletion plan deletes rows of, in the order it
    /// deletes them: the order of a `DeletionReport`'s counts, as on SQLite.
    let deletionOrders: [String: [String]]

    /// Makes the container for `schema` on the database `client` connects to, in one transaction
    /// holding an advisory lock (two servers starting at once do not both create or migrate):
    /// - an empty database gets the schema's tables, indexes and safe-deletion functions, and the
    ///   schema is recorded in `modelgen_schema`;
    /// - a database that records this schema is used as it is (but for its foreign keys, made
    ///   `DEFERRABLE` where an earlier ModelGen made them without: `deferrableForeignKeys`);
    /// - a database that records an earlier version is migrated (`modelgen migrate`'s PostgreSQL
    ///   plan: checks first, tables changed in place, functions replaced), unless a check fails or
    ///   data would be lost without `allowsMigrationDataLoss`;
    /// - otherwise the container throws `PostgresModelContainerError`, having changed nothing.
    ///
    /// Tables are created in the connection's current schema (its `search_path`).
    public init(for schema: any ModelSchemaDefinition.Type, client: PostgresClient, allowsMigrationDataLoss: Bool = false,
                logger: Logger = Logger(label: "ModelGenPostgres")) async throws {
        self.client = client
        self.logger = logger
        let canonical = try ModelSchema(canonicalJSON: schema.canonicalSchema)
        schemaName = canonical.name
        var modelTypes: [String: any PersistentModel.Type] = [:]
        var mappings: [ObjectIdentifier: PostgresEntityMapping] = [:]
        for model in schema.models {
            modelTypes[model.entity.name] = model
            guard let entity = canonical.entities.first(where: { $0.name == model.entity.name }) else { continue }
            mappings[ObjectIdentifier(model.entity)] = PostgresEntityMapping(entity: model.entity, schema: entity)
        }
        self.modelTypes = modelTypes
        self.mappings = mappings
        tables = schema.tables
        entities = schema.models.map { $0.entity }
        deletionOrders = Dictionary(uniqueKeysWithValues: entities.map { ($0.name, schema.deletionProgram(for: $0.name)?.deletions.map(\.entity) ?? []) })
        let order = Self.insertionOrder(of: schema.models.map { $0.entity })
        insertionOrder = order.entities
        lateKeys = order.lateKeys
        try await prepare(schema: schema, canonical: canonical, allowsMigrationDataLoss: allowsMigrationDataLoss)
    }

    /// Deletes every object of every entity (SwiftData's `deleteAllData()`) in one statement, and so
    /// in one transaction: a failure deletes nothing. Every row goes, so no reference can dangle,
    /// and the foreign keys, checked when the statement ends, find every row gone whatever their
    /// actions and cycles:
    ///
    ///     WITH modelgen_1 AS (DELETE FROM "book_readers"), modelgen_2 AS (DELETE FROM "book") DELETE FROM "author"
    ///
    /// Contexts made before keep the objects they hold, now without rows: start a new context.
    public func deleteAllData() async throws {
        let deletions = tables.map { "DELETE FROM \($0)" }
        let ctes = deletions.dropLast().enumerated().map { "modelgen_\($0.offset + 1) AS (\($0.element))" }
        let sql = (ctes.isEmpty ? "" : "WITH " + ctes.joined(separator: ", ") + " ") + deletions.last!
        do {
            _ = try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger).collect()
        } catch {
            throw PostgresDatabaseError(error) ?? error
        }
    }

    /// Creates the schema in an empty database, or checks or migrates the one recorded.
    ///
    ///     SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.modelgen_schema'))
    private func prepare(schema: any ModelSchemaDefinition.Type, canonical: ModelSchema, allowsMigrationDataLoss: Bool) async throws {
        // The tables' plain names, as a refusal names them (`tables` holds them as SQL writes them).
        let tableNames = canonical.entities.map(\.tableName) + canonical.joinTables.map(\.name)
        let (json, ddl, name, logger) = (schema.canonicalSchema, schema.postgreSQLTables, schemaName, logger)
        // The safe-deletion functions (`<table>_safe_delete`), planned from the schema as the
        // generator plans them (the text of `modelgen generate`'s `.postgresql.sql`), when the
        // database needs them: created with the tables, replaced after a migration.
        func functions() -> [String] {
            PostgreSQLDeletionFunctions(schema: canonical, plans: DeletionPlanner(schema: canonical).plans()).functions().flatMap(SQLScript.statements)
        }
        func run(_ sql: String, on connection: PostgresConnection) async throws {
            _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).collect()
        }
        func text(_ sql: String, on connection: PostgresConnection) async throws -> String? {
            try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).firstText()
        }
        do {
            try await client.withTransaction(logger: logger) { connection in
                let record = ModelSchema.recordTable
                try await run("SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.\(record)'))", on: connection)
                if try await text("SELECT (to_regclass('\(record)') IS NOT NULL)::text", on: connection) == "true" {
                    let stored = try await text("SELECT schema FROM \(record) WHERE id = 1", on: connection) ?? ""
                    if stored != json {
                        let old = try ModelSchema(canonicalJSON: stored)
                        guard old.name == canonical.name else { throw PostgresModelContainerError.storeHasOtherSchema(schema: name, storedSchema: old.name) }
                        let statements = MigrationPlanner.postgresqlStatements(from: old, to: canonical, allowDataLoss: allowsMigrationDataLoss)
                        do {
                            for statement in statements.flatMap(SQLScript.statements) + functions() { try await run(statement, on: connection) }
                        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23514" {
                            throw PostgresModelContainerError.migrationRefused(schema: name, message: error.serverInfo?[.message] ?? "\(error)")
                        }
                        try await run("UPDATE \(record) SET hash = \(SQLDialect.postgresql.literal(canonical.canonicalHash)), schema = \(SQLDialect.postgresql.literal(json)) WHERE id = 1", on: connection)
                    }
                    try await run(Self.deferrableForeignKeys(of: tableNames), on: connection)
                    return
                }
                var existing: [String] = []
                for try await table in try await connection.query("SELECT t FROM unnest(\(tableNames)::text[]) AS t WHERE to_regclass(quote_ident(t)) IS NOT NULL", logger: logger).decode(String.self) {
                    existing.append(table)
                }
                guard existing.isEmpty else { throw PostgresModelContainerError.tablesWithoutRecordedSchema(schema: name, tables: existing) }
                for statement in SQLScript.statements(ddl) + functions() { try await run(statement, on: connection) }
                try await run(ModelSchema.recordTableDefinition, on: connection)
                _ = try await connection.query("INSERT INTO \(unescaped: record) (id, hash, schema) VALUES (1, \(canonical.canonicalHash), \(json))", logger: logger).collect()
            }
        } catch let error as PostgresTransactionError {
            throw PostgresDatabaseError(error.underlyingError) ?? error.underlyingError
        } catch {
            throw PostgresDatabaseError(error) ?? error
        }
    }

    /// Makes the foreign keys of `tables` that are not `DEFERRABLE` so (a database made before
    /// ModelGen's keys were: its saves could not defer them to the commit), in place, keeping
    /// every row; a statement that alters nothing where all are. A role that does not own the
    /// tables cannot alter them: their keys are left as they are, with a warning (saves then check
    /// them as each statement ends, as they did before):
    ///
    ///     DO $modelgen$ DECLARE k record; BEGIN
    ///     FOR k IN SELECT c.conrelid::regclass AS t, c.conname FROM pg_constraint AS c
    ///       WHERE c.contype = 'f' AND NOT c.condeferrable
    ///         AND c.conrelid IN (SELECT to_regclass(quote_ident(n)) FROM unnest(ARRAY['book', …]::text[]) AS n)
    ///       ORDER BY 1, 2
    ///     LOOP EXECUTE format('ALTER TABLE %s ALTER CONSTRAINT %I DEFERRABLE', k.t, k.conname); END LOOP;
    ///     EXCEPTION WHEN insufficient_privilege THEN RAISE WARNING '…'; END $modelgen$
    static func deferrableForeignKeys(of tables: [String]) -> String {
        let names = tables.map(SQLDialect.postgresql.literal).joined(separator: ", ")
        return "DO $modelgen$ DECLARE k record; BEGIN FOR k IN SELECT c.conrelid::regclass AS t, c.conname FROM pg_constraint AS c "
            + "WHERE c.contype = 'f' AND NOT c.condeferrable AND c.conrelid IN (SELECT to_regclass(quote_ident(n)) FROM unnest(ARRAY[\(names)]::text[]) AS n) ORDER BY 1, 2 "
            + "LOOP EXECUTE format('ALTER TABLE %s ALTER CONSTRAINT %I DEFERRABLE', k.t, k.conname); END LOOP; "
            + "EXCEPTION WHEN insufficient_privilege THEN RAISE WARNING 'ModelGen: the foreign keys stay not deferrable (%): "
            + "saves check them as each statement ends; open once as the tables'' owner to make them deferrable', SQLERRM; END $modelgen$"
    }

    /// The order in which new rows are inserted, and the keys written after all inserts: Kahn's
    /// order over the key edges (self-references need none: one statement inserts all rows of an
    /// entity, and PostgreSQL checks its keys at the statement's end). In a cycle, the first
    /// entity (in schema order) whose keys to the entities not yet inserted are all optional goes
    /// first, those keys written afterwards (its rows are inserted with NULL there, which a
    /// required key's `NOT NULL` would refuse); validation refuses cycles of required keys, so
    /// there is one. A save defers the keys' checks to its commit, which needs no such order; it
    /// is kept for a server that does not defer them (Citus does not pass `SET CONSTRAINTS` on to
    /// the nodes holding distributed tables), where the keys are checked as each statement ends.
    private static func insertionOrder(of entities: [EntityDescription]) -> (entities: [ObjectIdentifier], lateKeys: [ObjectIdentifier: Set<Int>]) {
        var order: [EntityDescription] = []
        var placed: Set<String> = []
        var remaining = entities
        func waitsFor(_ entity: EntityDescription, _ key: (index: Int, column: String)) -> Bool {
            let target = entity.relationships[key.index].target
            return target != entity.name && !placed.contains(target) && entities.contains { $0.name == target }
        }
        while !remaining.isEmpty {
            let ready = remaining.firstIndex { entity in entity.foreignKeys.allSatisfy { !waitsFor(entity, $0) } }
                ?? remaining.firstIndex { entity in entity.foreignKeys.allSatisfy { !waitsFor(entity, $0) || entity.relationships[$0.index].isOptional } }
                ?? remaining.startIndex
            order.append(remaining[ready])
            placed.insert(remaining[ready].name)
            remaining.remove(at: ready)
        }
        var late: [ObjectIdentifier: Set<Int>] = [:]
        for (position, entity) in order.enumerated() {
            let later = Set(order[(position + 1)...].map(\.name))
            let keys = entity.foreignKeys.map(\.index).filter { later.contains(entity.relationships[$0].target) }
            if !keys.isEmpty { late[ObjectIdentifier(entity)] = Set(keys) }
        }
        return (order.map(ObjectIdentifier.init), late)
    }

    func mapping(for entity: EntityDescription) -> PostgresEntityMapping {
        guard let mapping = mappings[ObjectIdentifier(entity)] else { preconditionFailure("\(entity.name) is not in schema \(schemaName)") }
        return mapping
    }
}

extension PostgresRowSequence {
    /// The first row's first column as text; nil when there is no row.
    func firstText() async throws -> String? {
        for try await value in decode(String.self) { return value }
        return nil
    }
}

extension PostgresModelContainer {
    /// The value a save gives `date`: its nearest microsecond, which is what PostgreSQL keeps (a
    /// date outside the years 1 to 9999, which a save refuses, is returned as it is). A predicate
    /// compares a stored or unsaved object's date as this value, and a constant as it is.
    public static func storedDate(_ date: Date) -> Date {
        guard let stored = try? PostgresTimestamp(secondsSince2001: date.timeIntervalSinceReferenceDate) else { return date }
        return Date(timeIntervalSinceReferenceDate: stored.secondsSince2001)
    }
}

extension PostgresTransactionError {
    /// What failed: the transaction's body, else its `BEGIN` or `COMMIT`.
    var underlyingError: any Error { closureError ?? beginError ?? commitError ?? self }
}
