import Foundation
import ModelGenCore
import ModelGenTestSupport
import XCTest

/// What validation accepts, PostgreSQL creates and fills: a table's columns (at most 1,600), an
/// index's (32) and the largest row (8,160 bytes) are checked against a real server at the
/// boundary — the last entity validation accepts must take its largest row, and one more column,
/// which validation refuses, must be refused by PostgreSQL too.
final class PostgreSQLLimitsTests: XCTestCase {
    /// A column type of the random entities, its SQL type and the value that takes the most room
    /// in a row (a text or bytes of 23 bytes, a decimal of ten base-10000 digits, a case of 23
    /// letters: longer ones are moved out of the row, leaving 18 bytes).
    private static let types: [(yaml: String, sql: String, largest: String)] = [
        ("Int", "BIGINT", "1"), ("Int32", "INTEGER", "1"), ("Int16", "SMALLINT", "1"), ("Double", "DOUBLE PRECISION", "1.5"),
        ("Float", "REAL", "1.5"), ("Bool", "BOOLEAN", "true"), ("Date", "TIMESTAMP WITH TIME ZONE", "now()"),
        ("UUID", "UUID", "gen_random_uuid()"), ("String", "TEXT", "repeat('x', 23)"), ("URL", "TEXT", "repeat('u', 23)"),
        ("Data", "BYTEA", "decode(repeat('ab', 23), 'hex')"), ("Decimal", "NUMERIC", "1234567890123456789012345678901234567890"),
        ("Kind", "TEXT", "'\(String(repeating: "k", count: 23))'"),
    ]

    private static func yaml(_ columns: [Int], optional: Bool = false) -> String {
        "schema: Limits\nenums:\n  Kind: [small, \(String(repeating: "k", count: 23)), \(String(repeating: "l", count: 40))]\nentities:\n  Wide:\n    attributes:\n"
            + columns.enumerated().map { "      a\($0): \(types[$1].yaml)\(optional && $0 % 2 == 0 ? "?" : "")\n" }.joined()
    }

    private static func refusesRow(_ yaml: String) -> Bool {
        ModelGen.load(path: "Limits.yaml", bytes: Array(yaml.utf8)).1.contains { $0.message.contains("bytes in PostgreSQL") }
    }

    /// Whether PostgreSQL takes the largest row of the table `sql` creates (`values`, in column order).
    private static func takesLargestRow(_ url: String, _ sql: String, values: [String]) throws -> Bool {
        do {
            try PostgresServer.psql(url, schema: "mg_limits", sql + "\nINSERT INTO wide (\((0..<values.count).map { "a\($0)" }.joined(separator: ", "))) VALUES (\(values.joined(separator: ", ")));\n")
            return true
        } catch {
            XCTAssertTrue("\(error)".contains("row is too big"), "\(error)")
            return false
        }
    }

    func testTheLargestRowValidationAcceptsFitsAndOneColumnMoreDoesNot() throws {
        let url = try PostgresServer.requireURL()
        var random = SeededRandom(seed: 8160)
        for round in 0..<6 {
            let columns = (0..<1_200).map { _ in random.below(Self.types.count) }
            // The fewest columns whose largest row validation refuses.
            var (low, high) = (1, columns.count)
            XCTAssertTrue(Self.refusesRow(Self.yaml(columns)), "round \(round): 1,200 columns fit")
            while low < high {
                let middle = (low + high) / 2
                if Self.refusesRow(Self.yaml(Array(columns.prefix(middle)))) { high = middle } else { low = middle + 1 }
            }
            let accepted = Array(columns.prefix(low - 1))
            let ddl = TestSupport.postgresDDL(Self.yaml(accepted), file: "Limits.yaml")
            XCTAssertTrue(try Self.takesLargestRow(url, ddl, values: accepted.map { Self.types[$0].largest }),
                          "round \(round): the largest row of \(accepted.count) columns validation accepts does not fit")
            let added = Self.types[columns[low - 1]]
            XCTAssertFalse(try Self.takesLargestRow(url, ddl + "\nALTER TABLE wide ADD COLUMN a\(low - 1) \(added.sql);", values: columns.prefix(low).map { Self.types[$0].largest }),
                           "round \(round): validation refuses \(low) columns (the last \(added.yaml)), whose largest row fits")
        }
        // Where columns may be NULL, every row of an accepted table fits: all values, and all but one.
        let columns = (0..<1_200).map { _ in random.below(Self.types.count) }
        var count = 1
        while !Self.refusesRow(Self.yaml(Array(columns.prefix(count + 1)), optional: true)) { count += 1 }
        let ddl = TestSupport.postgresDDL(Self.yaml(Array(columns.prefix(count)), optional: true), file: "Limits.yaml")
        var values = columns.prefix(count).map { Self.types[$0].largest }
        XCTAssertTrue(try Self.takesLargestRow(url, ddl, values: values))
        values[values.indices.first { $0 % 2 == 0 && columns[$0] == 5 } ?? 0] = "NULL"
        XCTAssertTrue(try Self.takesLargestRow(url, ddl, values: values), "with a NULL")
    }

    func testTablesAndIndexesHoldTheColumnsValidationAccepts() throws {
        let url = try PostgresServer.requireURL()
        // 1,599 Booleans and the id: 1,600 columns.
        let booleans = "schema: Limits\nentities:\n  Wide:\n    attributes:\n" + (0..<1_599).map { "      a\($0): Bool\n" }.joined()
        let ddl = TestSupport.postgresDDL(booleans, file: "Limits.yaml")
        try PostgresServer.psql(url, schema: "mg_limits", ddl)
        XCTAssertThrowsError(try PostgresServer.psql(url, schema: "mg_limits", ddl + "\nALTER TABLE wide ADD COLUMN a1599 BOOLEAN;"))
        let refused = ModelGen.load(path: "Limits.yaml", bytes: Array((booleans + "      a1599: Bool\n").utf8)).1
        XCTAssertTrue(refused.contains { $0.message.contains("needs 1601 columns") && $0.location.line == 3 }, "\(refused)")
        // An index of 32 columns, and one of 33.
        func indexed(_ count: Int) -> String {
            "schema: Limits\nentities:\n  Wide:\n    attributes:\n" + (0..<40).map { "      a\($0): Int\n" }.joined()
                + "    indexes:\n      - [\((0..<count).map { "a\($0)" }.joined(separator: ", "))]\n"
        }
        try PostgresServer.psql(url, schema: "mg_limits", TestSupport.postgresDDL(indexed(32), file: "Limits.yaml"))
        XCTAssertThrowsError(try PostgresServer.psql(url, schema: "mg_limits", "CREATE TABLE wide (\((0..<40).map { "a\($0) BIGINT" }.joined(separator: ", "))); CREATE INDEX ON wide (\((0..<33).map { "a\($0)" }.joined(separator: ", ")));"))
        let tooMany = ModelGen.load(path: "Limits.yaml", bytes: Array(indexed(33).utf8)).1
        XCTAssertTrue(tooMany.contains { $0.message.contains("groups 33 columns") }, "\(tooMany)")
        try PostgresServer.psqlRaw(url, "SET client_min_messages = warning;\nDROP SCHEMA mg_limits CASCADE;")
    }
}
