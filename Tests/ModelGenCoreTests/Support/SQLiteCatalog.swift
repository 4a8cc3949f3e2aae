import Foundation
import ModelGenRuntime

/// What an SQLite database defines, by meaning rather than by DDL text: per table its columns
/// (name, declared type, NOT NULL, default, primary key), foreign keys (column, target, action),
/// indexes (name for named ones, uniqueness, columns) and CHECK clauses. Column order and
/// ModelGen's own `modelgen_schema` table are left out, as a migrated store may differ there.
struct SQLiteCatalog: Equatable, CustomStringConvertible {
    var tables: [String: [String]] = [:]

    init(_ database: SQLiteDatabase) throws {
        let names = try database.query("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT IN ('modelgen_schema', 'modelgen_largest_ids')")
        for row in names {
            guard case let .text(table) = row[0], case let .text(sql) = row[1] else { continue }
            var facts: [String] = []
            for column in try database.query("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?)", [.text(table)]) {
                let (name, type, notNull, value, key) = (column[0].testText, column[1].testText, column[2].testText, column[3].testText, column[4].testText)
                facts.append("column \(name) \(type) notnull=\(notNull) default=\(value) pk=\(key)")
            }
            for key in try database.query("SELECT \"from\", \"table\", \"to\", on_delete FROM pragma_foreign_key_list(?)", [.text(table)]) {
                facts.append("foreign key \(key[0].testText) → \(key[1].testText).\(key[2].testText) on delete \(key[3].testText)")
            }
            for index in try database.query("SELECT name, \"unique\", origin FROM pragma_index_list(?)", [.text(table)]) {
                let columns = try database.query("SELECT name FROM pragma_index_info(?) ORDER BY seqno", [index[0]]).map { $0[0].testText }
                // Indexes SQLite makes for UNIQUE and PRIMARY KEY are named by position: compare their columns only.
                let name = index[2].testText == "c" ? index[0].testText : "(\(index[2].testText))"
                facts.append("index \(name) unique=\(index[1].testText) on \(columns.joined(separator: ", "))")
            }
            for check in Self.checks(in: sql) { facts.append(check) }
            tables[table] = facts.sorted()
        }
    }

    var description: String {
        tables.keys.sorted().map { table in "\(table):\n" + tables[table]!.map { "  " + $0 }.joined(separator: "\n") }.joined(separator: "\n")
    }

    /// The `CHECK (…)` clauses of a `CREATE TABLE` statement, with balanced parentheses.
    private static func checks(in sql: String) -> [String] {
        var result: [String] = []
        var rest = Substring(sql)
        while let range = rest.range(of: "CHECK (") {
            var depth = 1
            var index = range.upperBound
            while index < rest.endIndex, depth > 0 {
                if rest[index] == "(" { depth += 1 } else if rest[index] == ")" { depth -= 1 }
                index = rest.index(after: index)
            }
            result.append("check " + rest[range.lowerBound..<index])
            rest = rest[index...]
        }
        return result
    }
}

extension SQLiteValue {
    /// The value as the tests compare it: NULL, the number, the text, or the bytes in hexadecimal.
    var testText: String {
        switch self {
        case .null: return "NULL"
        case let .integer(number): return String(number)
        case let .real(number): return String(number)
        case let .text(text): return text
        case let .blob(bytes): return bytes.map { String(format: "%02X", $0) }.joined()
        }
    }
}
