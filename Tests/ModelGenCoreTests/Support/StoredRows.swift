import ModelGenCore
import ModelGenRuntime

/// What a delete leaves, as text read alike from SQLite and PostgreSQL: each entity's rows as their
/// id and keys (`3:1:-`, a NULL key as `-`), each join table's rows as their pairs (`1:2`), in order.
/// The form `DeletionOracle` gives its rows in.
struct StoredRows {
    /// Per table, the SQL expression of a row's text and the order of its rows.
    let tables: [(table: String, row: String, order: String)]

    init(schema: ModelSchema) {
        func text(_ columns: [String]) -> String { columns.map { "coalesce(CAST(\($0) AS TEXT), '-')" }.joined(separator: " || ':' || ") }
        tables = schema.entities.map { entity in
            (table: entity.tableName, row: text(["id"] + schema.foreignKeys.filter { $0.entity == entity.name }.map(\.column)), order: "id")
        } + schema.joinTables.map { (table: $0.name, row: text([$0.column, $0.targetColumn]), order: "\($0.column), \($0.targetColumn)") }
    }

    /// One PostgreSQL statement per table, each giving one line: `table|row,row,…`.
    var postgreSQLQuery: String {
        tables.map { "SELECT '\($0.table)', string_agg(\($0.row), ',' ORDER BY \($0.order)) FROM \($0.table);" }.joined(separator: "\n")
    }

    /// Each table's rows in `database`, in `tables`' order.
    func read(_ database: SQLiteDatabase) throws -> [[String]] {
        try tables.map { table in
            try database.query("SELECT \(table.row) FROM \(table.table) ORDER BY \(table.order)")
                .compactMap { row -> String? in if case let .text(text) = row[0] { text } else { nil } }
        }
    }

    /// Rows `read` gave, as the lines `postgreSQLQuery` gives.
    func lines(_ rows: [[String]]) -> [String] {
        zip(tables, rows).map { "\($0.table)|\($1.joined(separator: ","))" }
    }
}
