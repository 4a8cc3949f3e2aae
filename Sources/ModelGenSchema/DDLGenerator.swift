import ModelGenQuery
import Foundation

/// Writes the `CREATE TABLE` and `CREATE INDEX` statements of a schema for one dialect.
///
/// Tables come in dependency order (referenced tables first, schema order among equals). A
/// foreign key that points forward in that order, which only a cycle makes necessary, is added
/// after all tables exist: by `ALTER TABLE … ADD CONSTRAINT` in PostgreSQL; SQLite accepts it
/// inline because it checks references only when rows change.
public struct DDLGenerator {
    public let schema: ModelSchema
    public let dialect: SQLDialect
    /// How SQLite's floating-point columns are declared: untyped, but for a store an earlier
    /// ModelGen made, which a migration reads as it is.
    public let floatingPointColumns: SQLiteFloatingPointColumns
    /// Each entity's foreign keys, by entity name (looked up, never iterated).
    private let foreignKeysByEntity: [String: [ForeignKey]]

    public init(schema: ModelSchema, dialect: SQLDialect, floatingPointColumns: SQLiteFloatingPointColumns = .untyped) {
        self.schema = schema
        self.dialect = dialect
        self.floatingPointColumns = floatingPointColumns
        var byEntity: [String: [ForeignKey]] = [:]
        for foreignKey in schema.foreignKeys { byEntity[foreignKey.entity, default: []].append(foreignKey) }
        foreignKeysByEntity = byEntity
    }

    /// The whole DDL file.
    public func render(header: String) -> String {
        let order = tableOrder()
        var created: Set<String> = []
        var deferredConstraints: [String] = []
        var statements: [String] = []
        for entity in order {
            created.insert(entity.name)
            statements.append(createTable(entity, existing: created, deferred: &deferredConstraints))
        }
        for table in schema.joinTables {
            statements.append(createJoinTable(table))
        }
        statements.append(contentsOf: deferredConstraints)
        statements.append(contentsOf: indexDefinitions(order: order).map(\.sql))
        let heading = "-- \(header)\n-- Dialect: \(dialect == .sqlite ? "SQLite" : "PostgreSQL").\n\n"
        return [heading, statements.concatenated(separator: "\n\n"), "\n"].concatenated()
    }

    /// A table as `CREATE TABLE` defines it: its column definitions (by column name) and table constraints.
    public struct TableDefinition: Equatable, Sendable {
        public var name: String
        public var columns: [(name: String, definition: String)]
        public var constraints: [String]

        /// Every line of the definition, columns then constraints.
        public var lines: [String] { columns.map(\.definition) + constraints }

        /// The `CREATE TABLE` statement, under another name if given (a rebuild's new table).
        public func createStatement(dialect: SQLDialect, as table: String? = nil) -> String {
            "CREATE TABLE \(dialect.quote(table ?? name)) (\n    " + lines.joined(separator: ",\n    ") + "\n);"
        }

        public static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.name == rhs.name && lhs.lines == rhs.lines && lhs.columns.map(\.name) == rhs.columns.map(\.name)
        }
    }

    /// An index: its name, table, columns (ascending, default collation, not unique, not partial)
    /// and `CREATE INDEX` statement.
    public struct IndexDefinition: Equatable, Sendable {
        public var name: String
        public var table: String
        public var columns: [String]
        public var sql: String

        init(name: String, table: String, columns: [String], dialect: SQLDialect) {
            self.name = name
            self.table = table
            self.columns = columns
            self.sql = Self.createStatement(dialect: dialect, name: name, table: table, columns: columns)
        }

        /// The `CREATE INDEX` statement of the same columns under another name, on another table
        /// (a rebuild's new table, whose indexes the copy fills).
        public func createStatement(dialect: SQLDialect, as name: String, on table: String) -> String {
            Self.createStatement(dialect: dialect, name: name, table: table, columns: columns)
        }

        private static func createStatement(dialect: SQLDialect, name: String, table: String, columns: [String]) -> String {
            "CREATE INDEX \(dialect.quote(name)) ON \(dialect.quote(table)) (\(columns.map(dialect.quote).joined(separator: ", ")));"
        }
    }

    /// The entity's table as the SQLite DDL defines it (foreign keys inline).
    public func tableDefinition(of entity: Entity) -> TableDefinition {
        var deferred: [String] = []
        return entityTable(entity, existing: [], deferred: &deferred)
    }

    /// The join table's definition.
    public func tableDefinition(of table: JoinTable) -> TableDefinition {
        TableDefinition(name: table.name, columns: [
            (table.column, "\(q(table.column)) \(dialect.keyType) NOT NULL REFERENCES \(q(table.table)) (id) ON DELETE CASCADE\(dialect.foreignKeyDeferrability)"),
            (table.targetColumn, "\(q(table.targetColumn)) \(dialect.keyType) NOT NULL REFERENCES \(q(table.targetTable)) (id) ON DELETE CASCADE\(dialect.foreignKeyDeferrability)"),
        ], constraints: ["PRIMARY KEY (\(q(table.column)), \(q(table.targetColumn)))"])
    }

    /// Every index of the schema, named as the DDL names them.
    public func indexDefinitions() -> [IndexDefinition] { indexDefinitions(order: tableOrder()) }

    private func indexDefinitions(order: [Entity]) -> [IndexDefinition] {
        var indexNames = IndexNames(schema: schema)
        var definitions: [IndexDefinition] = []
        for entity in order {
            definitions.append(contentsOf: indexes(for: entity, names: &indexNames))
        }
        for table in schema.joinTables {
            let name = indexNames.allocate(table.name + "_" + table.targetColumn + "_idx")
            definitions.append(IndexDefinition(name: name, table: table.name, columns: [table.targetColumn], dialect: dialect))
        }
        return definitions
    }

    private func q(_ identifier: String) -> String { dialect.quote(identifier) }

    /// The action on a foreign key stored for `foreignKey`: the delete rule of the referenced
    /// side's relationship back, or, without an inverse, SET NULL (optional) / NO ACTION (required).
    static func onDeleteAction(_ foreignKey: ForeignKey, in schema: ModelSchema) -> String {
        if let inverse = foreignKey.inverse, let rule = schema.relationship(foreignKey.target, inverse)?.deleteRule {
            return rule.foreignKeyAction
        }
        return foreignKey.isRequired ? "NO ACTION" : "SET NULL"
    }

    /// Entities ordered so that a referenced table comes before the tables referencing it:
    /// depth first from each entity in schema order, references first. A reference back into the
    /// path being visited (a cycle) is left for `ALTER TABLE`.
    func tableOrder() -> [Entity] {
        var order: [Entity] = []
        var state: [String: Bool] = [:] // false while visiting, true when placed
        // Iterative, so that a long chain of references cannot exhaust the stack.
        var stack: [(entity: Entity, next: Int)] = []
        for root in schema.entities where state[root.name] == nil {
            state[root.name] = false
            stack.append((root, 0))
            while let (entity, next) = stack.last {
                let foreignKeys = foreignKeysByEntity[entity.name] ?? []
                if next < foreignKeys.count {
                    stack[stack.count - 1].next += 1
                    if let target = schema.entity(named: foreignKeys[next].target), state[target.name] == nil {
                        state[target.name] = false
                        stack.append((target, 0))
                    }
                } else {
                    stack.removeLast()
                    state[entity.name] = true
                    order.append(entity)
                }
            }
        }
        return order
    }

    private func createTable(_ entity: Entity, existing: Set<String>, deferred: inout [String]) -> String {
        entityTable(entity, existing: existing, deferred: &deferred).createStatement(dialect: dialect)
    }

    /// The entity's table; in PostgreSQL a foreign key to a table not yet in `existing` goes to `deferred`.
    private func entityTable(_ entity: Entity, existing: Set<String>, deferred: inout [String]) -> TableDefinition {
        var columns: [(name: String, definition: String)] = [("id", dialect.primaryKeyDefinition)]
        for attribute in entity.storedAttributes {
            columns.append((attribute.columnName, columnDefinition(attribute)))
        }
        for foreignKey in foreignKeysByEntity[entity.name] ?? [] {
            var line = "\(q(foreignKey.column)) \(dialect.keyType)"
            if foreignKey.isRequired { line += " NOT NULL" }
            if foreignKey.isUnique { line += " UNIQUE" }
            let reference = "REFERENCES \(q(foreignKey.targetTable)) (id) ON DELETE \(Self.onDeleteAction(foreignKey, in: schema))\(dialect.foreignKeyDeferrability)"
            if dialect == .sqlite || existing.contains(foreignKey.target) {
                line += " " + reference
            } else {
                deferred.append("ALTER TABLE \(q(entity.tableName)) ADD CONSTRAINT \(q(entity.tableName + "_" + foreignKey.column + "_fkey")) FOREIGN KEY (\(q(foreignKey.column))) \(reference);")
            }
            columns.append((foreignKey.column, line))
        }
        let constraints = entity.uniqueConstraints.map { "UNIQUE (\($0.map(q).joined(separator: ", ")))" }
        return TableDefinition(name: entity.tableName, columns: columns, constraints: constraints)
    }

    private func columnDefinition(_ attribute: Attribute) -> String {
        let column = q(attribute.columnName)
        var line: String
        var check: String?
        switch attribute.type {
        case let .scalar(type):
            let declared = dialect.columnType(type, floatingPoint: floatingPointColumns)
            line = declared.isEmpty ? column : "\(column) \(declared)"
            if type == .bool && dialect == .sqlite { check = "\(column) IN (0, 1)" }
        case let .enumeration(name):
            line = "\(column) TEXT"
            let cases = schema.enums.first { $0.name == name }?.cases ?? []
            check = "\(column) IN (\(cases.map(dialect.literal).joined(separator: ", ")))"
        }
        if !attribute.isOptional { line += " NOT NULL" }
        if attribute.isUnique { line += " UNIQUE" }
        if let value = attribute.defaultValue { line += " DEFAULT \(dialect.literal(value))" }
        if let check { line += " CHECK (\(check))" }
        return line
    }

    private func createJoinTable(_ table: JoinTable) -> String {
        tableDefinition(of: table).createStatement(dialect: dialect)
    }

    private func indexes(for entity: Entity, names: inout IndexNames) -> [IndexDefinition] {
        var statements: [IndexDefinition] = []
        var indexed: Set<[String]> = []
        func index(_ columns: [String]) {
            // `indexed: true` and `indexes: [a]` ask for the same index: it is created once.
            guard indexed.insert(columns.map { $0.lowercased() }).inserted else { return }
            let name = names.allocate(entity.tableName + "_" + columns.joined(separator: "_") + "_idx")
            statements.append(IndexDefinition(name: name, table: entity.tableName, columns: columns, dialect: dialect))
        }
        for foreignKey in foreignKeysByEntity[entity.name] ?? [] where !foreignKey.isUnique {
            index([foreignKey.column])
        }
        for attribute in entity.storedAttributes where attribute.isIndexed && !attribute.isUnique {
            index([attribute.columnName])
        }
        for columns in entity.indexes {
            index(columns)
        }
        return statements
    }
}

/// Index names, `<table>_<columns>_idx`, made unique among every name in the namespace tables and
/// indexes share (tables, join tables, the names PostgreSQL gives to keys and sequences, the
/// indexes named before): a name already taken gets `_2`, `_3`, …, and a name past 63 bytes is
/// shortened with a hash (`SQLNames.shortened`). SQLite compares these names case-insensitively.
struct IndexNames {
    private var taken: Set<String> = []

    init(schema: ModelSchema) {
        for entity in schema.entities {
            taken.insert(entity.tableName.lowercased())
            for name in SQLNames.implicitNames(of: entity.tableName, uniqueColumnGroups: entity.uniqueColumnGroups) { taken.insert(SQLNames.shortened(name).lowercased()) }
        }
        for table in schema.joinTables {
            taken.insert(table.name.lowercased())
            taken.insert(SQLNames.shortened(table.name + "_pkey").lowercased())
        }
    }

    mutating func allocate(_ base: String) -> String {
        var name = SQLNames.shortened(base)
        var suffix = 1
        while !taken.insert(name.lowercased()).inserted {
            suffix += 1
            name = SQLNames.shortened(base + "_\(suffix)")
        }
        return name
    }
}
