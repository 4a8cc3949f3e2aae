import Foundation
import ModelGenCore
import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// Statements whose size grows with the schema stay within SQLite's limits (500 terms of a
/// compound `SELECT`, 32,766 parameters, expressions 1,000 deep), so a schema of many entities —
/// validation takes ten thousand — or a table of many keys deletes as a small one does.
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
        try database.execute(compilation.sqliteDDL)
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

    /// The most keys to one parent a table may hold (as many as validation accepts in a row), all
    /// cascading: deleting parents deletes the children through any of them, on SQLite (whose
    /// parser refused the chain of a thousand `OR`s) and through the PostgreSQL function.
    func testATableOfAsManyKeysAsValidationAcceptsDeletesThroughAllOfThem() throws {
        func yaml(_ keys: Int) -> String {
            "schema: Keys\nentities:\n  Hub:\n    attributes:\n      name: String?\n    relationships:\n"
                + (0..<keys).map { "      c\($0): { type: \"[Child]\", inverse: h\($0), deleteRule: cascade }\n" }.joined()
                + "  Child:\n    relationships:\n" + (0..<keys).map { "      h\($0): { type: Hub?, inverse: c\($0) }\n" }.joined()
        }
        var keys = 1_010
        while ModelGen.load(path: "Keys.yaml", bytes: Array(yaml(keys).utf8)).1.contains(where: { $0.severity == .error }) { keys -= 1 }
        XCTAssertGreaterThan(keys, 990, "validation refuses a table of \(keys + 1) keys")
        let compilation = ModelGen.generate(path: "Keys.yaml", bytes: Array(yaml(keys).utf8))
        let schema = try XCTUnwrap(compilation.schema)
        // Child 1 refers to hub 1 through its last key, child 2 to hub 2 through its first, child 3 to both.
        let last = "h\(keys - 1)_id"
        let rows = "INSERT INTO hub (id) VALUES (1), (2), (3);\nINSERT INTO child (id, \(last), h0_id) VALUES (1, 1, NULL), (2, NULL, 2), (3, 1, 2);\n"
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try SQLiteDatabase(path: directory.appendingPathComponent("keys.sqlite").path)
        try database.execute(compilation.sqliteDDL + rows)
        let program = DeletionSQLRenderer(schema: schema, dialect: .sqlite).program(for: DeletionPlanner(schema: schema).plan(for: "Hub"))
        let report = try DeletionExecutor(database: database).run(program, seed: .ids([1]))
        XCTAssertEqual(report.deletedCount(of: "Child"), 2, "children 1 and 3")
        XCTAssertEqual(try database.scalar("SELECT count(*) * 100 + min(id) FROM child"), 102, "child 2 alone is left")
        if let url = PostgresServer.url {
            let output = try PostgresServer.psql(url, schema: "mg_keys", compilation.postgreSQLDDL
                                                 + rows + "SELECT hub_safe_delete(ARRAY[1]::bigint[])->'deleted';\nSELECT string_agg(id::text, ',') FROM child;\n")
            XCTAssertEqual(output.split(separator: "\n").map(String.init), [#"{"Hub": 1, "Child": 2}"#, "2"])
            try PostgresServer.psqlRaw(url, "SET client_min_messages = warning;\nDROP SCHEMA mg_keys CASCADE;")
        }
    }

    /// A condition of 1,500 alternatives (a predicate built in code, `--where` text) renders so
    /// that SQLite takes it, and selects what it says.
    func testAConditionOfManyTermsRendersWithinSQLitesDepth() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try SQLiteDatabase(path: directory.appendingPathComponent("terms.sqlite").path)
        try database.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, n INTEGER); INSERT INTO item (n) WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM s WHERE v < 4000) SELECT v FROM s")
        for connective in [SQLConnective.or, .and] {
            let terms = (1...1_500).map { number -> QueryCondition in
                let n = QueryExpression.path(QueryPath(column: "n", kind: .integer))
                return connective == .or ? .comparison(n, .equal, .value(.integer(Int64(number * 2)), .integer))
                                         : .comparison(n, .notEqual, .value(.integer(Int64(number * 2)), .integer))
            }
            var renderer = PredicateSQLRenderer(dialect: .sqlite, table: "item")
            let sql = "SELECT count(*) FROM item WHERE " + renderer.condition(connective == .or ? .or(terms) : .and(terms))
            XCTAssertEqual(try database.scalar(sql, renderer.bindings), connective == .or ? 1_500 : 2_500, "\(connective)")
        }
    }
}
