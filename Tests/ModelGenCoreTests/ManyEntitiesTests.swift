import Foundation
import ModelGenCore
import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// Statements whose size grows with the schema stay within SQLite's limits (500 terms of a
/// compound `SELECT`, 32,766 parameters), so a schema of many entities — validation takes ten
/// thousand — deletes as a small one does.
final class ManyEntitiesTests: XCTestCase {
    /// A hub cascading to 700 entities: its plan runs on a store the runtime keeps, recording the
    /// largest id of every table (one statement over all of them) before it deletes.
    func testAPlanOverSevenHundredTablesRecordsEveryLargestIDAndDeletes() throws {
        let count = 700
        var yaml = "schema: Hubs\nentities:\n  Hub:\n    attributes:\n      name: String?\n    relationships:\n"
        yaml += (0..<count).map { "      k\($0): { type: \"[C\($0)]\", inverse: hub, deleteRule: cascade }\n" }.joined()
        yaml += (0..<count).map { "  C\($0):\n    relationships:\n      hub: { type: Hub?, inverse: k\($0) }\n" }.joined()
        let compilation = ModelGen.generate(path: "Hubs.yaml", bytes: Array(yaml.utf8))
        XCTAssertFalse(compilation.hasErrors, "\(compilation.diagnostics)")
        let schema = try XCTUnwrap(compilation.schema)
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try SQLiteDatabase(path: directory.appendingPathComponent("hubs.sqlite").path)
        try database.execute(try XCTUnwrap(compilation.files.first { $0.name.hasSuffix(".sqlite.sql") }).contents)
        // Hubs 1 and 2; every seventh entity has a child of hub 1 (ids 10 + its number).
        try database.execute("INSERT INTO hub (id) VALUES (1), (2)")
        for index in stride(from: 0, to: count, by: 7) { try database.execute("INSERT INTO c\(index) (id, hub_id) VALUES (\(10 + index), 1)") }
        let program = DeletionSQLRenderer(schema: schema, dialect: .sqlite).program(for: DeletionPlanner(schema: schema).plan(for: "Hub"))
        let tables = schema.entities.map { ($0.tableName, SQLDialect.sqlite.quote($0.tableName)) }
        let report = try DeletionExecutor(database: database, recordingLargestIDsOf: tables).run(program, seed: .ids([1]))
        XCTAssertEqual(report.deletedCount(of: "Hub"), 1)
        XCTAssertEqual(report.totalDeleted, 1 + (count + 6) / 7)
        let recorded = try database.query("SELECT \"table\" || '=' || largest FROM modelgen_largest_ids")
            .map { row -> String in if case let .text(text) = row[0] { text } else { "\(row[0])" } }.sorted()
        let expected = (["hub=2"] + stride(from: 0, to: count, by: 7).map { "c\($0)=\(10 + $0)" }).sorted()
        XCTAssertEqual(recorded, expected)
        XCTAssertEqual(try database.scalar("SELECT count(*) FROM hub"), 1)
    }
}
