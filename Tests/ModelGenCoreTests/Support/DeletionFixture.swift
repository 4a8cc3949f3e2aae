import Foundation
import ModelGenCore
import ModelGenRuntime
import XCTest

/// A schema compiled and applied to a fresh SQLite file, with helpers to run its deletion plans.
final class DeletionFixture {
    let schema: ModelSchema
    let database: SQLiteDatabase
    let path: String

    init(_ yaml: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let compilation = TestSupport.compile(yaml)
        schema = try XCTUnwrap(compilation.schema, compilation.diagnostics.map(\.description).joined(separator: "\n"), file: file, line: line)
        path = try TestSupport.temporaryDirectory().appendingPathComponent("test.sqlite").path
        database = try SQLiteDatabase(path: path)
        try database.execute(compilation.files[0].contents)
    }

    func execute(_ sql: String) throws {
        try database.execute(sql)
    }

    func program(for entity: String) -> DeletionProgram {
        DeletionSQLRenderer(schema: schema, dialect: .sqlite).program(for: DeletionPlanner(schema: schema).plan(for: entity))
    }

    @discardableResult
    func delete(_ entity: String, _ seed: DeletionSeed, dryRun: Bool = false) throws -> DeletionReport {
        try DeletionExecutor(database: database).run(program(for: entity), seed: seed, dryRun: dryRun)
    }

    @discardableResult
    func delete(_ entity: String, ids: Int64..., dryRun: Bool = false) throws -> DeletionReport {
        try delete(entity, .ids(ids), dryRun: dryRun)
    }

    /// The ids in a table, sorted.
    func ids(_ table: String) throws -> [Int64] {
        try database.query("SELECT id FROM \(SQLDialect.sqlite.quote(table)) ORDER BY id").compactMap { $0[0].integer }
    }

    func value(_ sql: String) throws -> SQLiteValue? {
        try database.query(sql).first?.first
    }

    /// Every row of every table, for "nothing changed" checks.
    func snapshot() throws -> [String: [[SQLiteValue]]] {
        var result: [String: [[SQLiteValue]]] = [:]
        let tables = schema.entities.map(\.tableName) + schema.joinTables.map(\.name)
        for table in tables {
            result[table] = try database.query("SELECT * FROM \(SQLDialect.sqlite.quote(table)) ORDER BY 1")
        }
        return result
    }

    /// `PRAGMA foreign_key_check` is empty: no dangling reference anywhere.
    func assertNoDanglingReferences(file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try database.query("PRAGMA foreign_key_check").count, 0, "dangling references", file: file, line: line)
    }

    /// Runs a delete that must be refused and checks that nothing changed.
    func assertRefused(_ entity: String, _ seed: DeletionSeed, file: StaticString = #filePath, line: UInt = #line) throws -> DeletionRefused? {
        let before = try snapshot()
        var refusal: DeletionRefused?
        XCTAssertThrowsError(try delete(entity, seed), file: file, line: line) { error in
            refusal = error as? DeletionRefused
            XCTAssertNotNil(refusal, "expected DeletionRefused, got \(error)", file: file, line: line)
        }
        XCTAssertEqual(try snapshot(), before, "a refused delete changes nothing", file: file, line: line)
        XCTAssertFalse(database.isInTransaction, file: file, line: line)
        return refusal
    }
}
