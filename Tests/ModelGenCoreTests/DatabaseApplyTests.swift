import Foundation
import ModelGenCore
import ModelGenRuntime
import XCTest

/// The DDL of every example applied to a real SQLite file (foreign keys on) and to a real
/// PostgreSQL 15 server (ON_ERROR_STOP), then checked through each catalog.
final class DatabaseApplyTests: XCTestCase {
    private func compiled(_ schema: URL) throws -> (ModelSchema, sqlite: String, postgres: String) {
        let compilation = ModelGen.generate(path: schema.lastPathComponent, bytes: [UInt8](try Data(contentsOf: schema)))
        let model = try XCTUnwrap(compilation.schema, "\(compilation.diagnostics)")
        return (model, compilation.files[0].contents, compilation.files[1].contents)
    }

    func testExamplesApplyToSQLiteAndTheCatalogMatches() throws {
        for schema in TestSupport.exampleSchemas {
            let (model, ddl, _) = try compiled(schema)
            let directory = try TestSupport.temporaryDirectory()
            let database = try SQLiteDatabase(path: directory.appendingPathComponent("test.sqlite").path)
            try database.execute(ddl)

            let tables = try database.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").compactMap { row -> String? in
                if case let .text(name) = row[0] { return name }
                return nil
            }
            let expectedTables = (model.entities.map(\.tableName) + model.joinTables.map(\.name)).sorted()
            XCTAssertEqual(tables, expectedTables, schema.lastPathComponent)

            for foreignKey in model.foreignKeys {
                let rows = try database.query("SELECT \"table\", \"from\", on_delete FROM pragma_foreign_key_list(?)", [.text(foreignKey.table)])
                let match = rows.first { $0[1] == .text(foreignKey.column) }
                XCTAssertEqual(match?[0], .text(foreignKey.targetTable), "\(schema.lastPathComponent): \(foreignKey.table).\(foreignKey.column)")
                let expectedAction = foreignKey.inverse.flatMap { model.relationship(foreignKey.target, $0)?.deleteRule.foreignKeyAction }
                    ?? (foreignKey.isRequired ? "NO ACTION" : "SET NULL")
                XCTAssertEqual(match?[2], .text(expectedAction), "\(foreignKey.table).\(foreignKey.column)")
                let indexed = try database.scalar("""
                    SELECT count(*) FROM pragma_index_list(?) AS list, pragma_index_info(list.name) AS info
                    WHERE info.name = ? AND info.seqno = 0
                    """, [.text(foreignKey.table), .text(foreignKey.column)])
                XCTAssertGreaterThan(indexed, 0, "foreign key \(foreignKey.table).\(foreignKey.column) has no index")
            }
            for entity in model.entities {
                for attribute in entity.storedAttributes where attribute.isUnique {
                    let unique = try database.scalar("""
                        SELECT count(*) FROM pragma_index_list(?) AS list, pragma_index_info(list.name) AS info
                        WHERE list."unique" = 1 AND info.name = ?
                        """, [.text(entity.tableName), .text(attribute.columnName)])
                    XCTAssertGreaterThan(unique, 0, "\(entity.tableName).\(attribute.columnName) is not unique")
                }
            }
            XCTAssertEqual(try database.query("PRAGMA foreign_key_check").count, 0)
        }
    }

    func testKeywordNamesWorkInSQLite() throws {
        let (_, ddl, _) = try compiled(TestSupport.fixturesDirectory.appendingPathComponent("Keywords.yaml"))
        let database = try SQLiteDatabase(path: ":memory:")
        try database.execute(ddl)
        try database.execute("""
            INSERT INTO "order" (id, "group", "class") VALUES (1, 'g', 'c');
            INSERT INTO "select" (id, "where", order_id) VALUES (1, 'w', 1);
            INSERT INTO "table" (id, "from") VALUES (1, 'f');
            INSERT INTO order_tags (order_id, table_id) VALUES (1, 1);
            """)
        XCTAssertEqual(try database.scalar("SELECT \"default\" FROM \"order\""), 0)
        XCTAssertThrowsError(try database.execute("INSERT INTO \"select\" (id, order_id) VALUES (2, 99)"), "foreign keys are enforced")
    }

    func testExamplesApplyToPostgreSQLAndTheCatalogMatches() throws {
        let url = try PostgresServer.requireURL()
        for schema in TestSupport.exampleSchemas {
            let (model, _, ddl) = try compiled(schema)
            let namespace = "mg_apply_" + model.sourceFile.lowercased()
            try PostgresServer.psql(url, schema: namespace, ddl)
            let tables = try PostgresServer.psqlRaw(url, "SELECT table_name FROM information_schema.tables WHERE table_schema = '\(namespace)' ORDER BY table_name;")
                .split(separator: "\n").map(String.init)
            XCTAssertEqual(tables, (model.entities.map(\.tableName) + model.joinTables.map(\.name)).sorted(), schema.lastPathComponent)
            let foreignKeys = try PostgresServer.psqlRaw(url, """
                SELECT kcu.table_name || '.' || kcu.column_name || ' ' || rc.delete_rule
                FROM information_schema.referential_constraints rc
                JOIN information_schema.key_column_usage kcu ON kcu.constraint_name = rc.constraint_name AND kcu.constraint_schema = rc.constraint_schema
                WHERE rc.constraint_schema = '\(namespace)' ORDER BY 1;
                """).split(separator: "\n").map(String.init)
            var expected = model.foreignKeys.map { foreignKey -> String in
                let action = foreignKey.inverse.flatMap { model.relationship(foreignKey.target, $0)?.deleteRule.foreignKeyAction }
                    ?? (foreignKey.isRequired ? "NO ACTION" : "SET NULL")
                return "\(foreignKey.table).\(foreignKey.column) \(action)"
            }
            for table in model.joinTables {
                expected.append("\(table.name).\(table.column) CASCADE")
                expected.append("\(table.name).\(table.targetColumn) CASCADE")
            }
            XCTAssertEqual(foreignKeys, expected.sorted(), schema.lastPathComponent)
            let uniqueCount = try PostgresServer.psqlRaw(url, "SELECT count(*) FROM information_schema.table_constraints WHERE constraint_schema = '\(namespace)' AND constraint_type = 'UNIQUE';")
            let expectedUnique = model.entities.reduce(0) { count, entity in
                count + entity.storedAttributes.filter(\.isUnique).count + entity.uniqueConstraints.count
            } + model.foreignKeys.filter(\.isUnique).count
            XCTAssertEqual(uniqueCount.trimmingCharacters(in: .whitespacesAndNewlines), "\(expectedUnique)", schema.lastPathComponent)
        }
    }
}
