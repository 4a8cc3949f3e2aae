import Foundation
import ModelGenRuntime

/// What an SQLite database defines, by meaning rather than by DDL text: per table its columns
/// (name, declared type, NOT NULL, default, primary key), foreign keys (column, target, action),
/// indexes (name for named ones, uniqueness, columns) and CHECK clauses. Column order and
/// ModelGen's own `modelgen_schema` table are left out, as a migrated store may differ there.
struct SQLiteCatalog: Equatable, CustomStringConvertible {
    var tables: [String: [String]] = [:]

    init(_ database: SQLiteDatabase) throws {
        let names = try database.query("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'modelgen_schema'")
        for row in names {
            guard case let .text(table) = row[0], case let .text(sql) = row[1] else { continue }
            var facts: [String] = []
            for column in try database.query("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?)", [.text(table)]) {
                facts.append("column \(Self.text(column[0])) \(Self.text(column[1])) notnull=\(Self.text(column[2])) default=\(Self.text(column[3])) pk=\(Self.text(column[4]))")
            }
            for key in try database.query("SELECT \"from\", \"table\", \"to\", on_delete FROM pragma_foreign_key_list(?)", [.text(table)]) {
                facts.append("foreign key \(Self.text(key[0])) → \(Self.text(key[1])).\(Self.text(key[2])) on delete \(Self.text(key[3]))")
            }
            for index in try database.query("SELECT name, \"unique\", origin FROM pragma_index_list(?)", [.text(table)]) {
                let columns = try database.query("SELECT name FROM pragma_index_info(?) ORDER BY seqno", [index[0]]).map { Self.text($0[0]) }
                // Indexes SQLite makes for UNIQUE and PRIMARY KEY are named by position: compare their columns only.
                let name = Self.text(index[2]) == "c" ? Self.text(index[0]) : "(\(Self.text(index[2])))"
                facts.append("index \(name) unique=\(Self.text(index[1])) on \(columns.joined(separator: ", "))")
            }
            for check in Self.checks(in: sql) { facts.append(check) }
            tables[table] = facts.sorted()
        }
    }

    var description: String {
        tables.keys.sorted().map { table in "\(table):\n" + tables[table]!.map { "  " + $0 }.joined(separator: "\n") }.joined(separator: "\n")
    }

    private static func text(_ value: SQLiteValue) -> String {
        switch value {
        case .null: return "NULL"
        case let .integer(number): return String(number)
        case let .real(number): return String(number)
        case let .text(text): return text
        case let .blob(bytes): return bytes.map { String(format: "%02X", $0) }.joined()
        }
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
