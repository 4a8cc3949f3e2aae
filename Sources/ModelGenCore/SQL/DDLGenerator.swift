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

    public init(schema: ModelSchema, dialect: SQLDialect) {
        self.schema = schema
        self.dialect = dialect
    }

    /// The whole DDL file.
    public func render(header: String) -> String {
        let order = tableOrder()
        var created: [String] = []
        var deferredConstraints: [String] = []
        var statements: [String] = []
        for entity in order {
            statements.append(createTable(entity, existing: created + [entity.name], deferred: &deferredConstraints))
            created.append(entity.name)
        }
        for table in schema.joinTables {
            statements.append(createJoinTable(table))
        }
        statements.append(contentsOf: deferredConstraints)
        for entity in order {
            statements.append(contentsOf: indexes(for: entity))
        }
        for table in schema.joinTables {
            statements.append("CREATE INDEX \(q(table.name + "_" + table.targetColumn + "_idx")) ON \(q(table.name)) (\(q(table.targetColumn)));")
        }
        return "-- \(header)\n-- Dialect: \(dialect == .sqlite ? "SQLite" : "PostgreSQL").\n\n" + statements.joined(separator: "\n\n") + "\n"
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

    /// Entities ordered so that a referenced table comes before the tables referencing it.
    func tableOrder() -> [Entity] {
        let foreignKeys = schema.foreignKeys
        var placed: [String] = []
        var remaining = schema.entities
        while !remaining.isEmpty {
            let ready = remaining.firstIndex { entity in
                foreignKeys.allSatisfy { $0.entity != entity.name || $0.target == entity.name || placed.contains($0.target) }
            } ?? 0
            placed.append(remaining[ready].name)
            remaining.remove(at: ready)
        }
        return placed.compactMap { schema.entity(named: $0) }
    }

    private func createTable(_ entity: Entity, existing: [String], deferred: inout [String]) -> String {
        var lines = [dialect.primaryKeyDefinition]
        for attribute in entity.storedAttributes {
            lines.append(columnDefinition(attribute))
        }
        for foreignKey in schema.foreignKeys where foreignKey.entity == entity.name {
            var line = "\(q(foreignKey.column)) \(dialect.keyType)"
            if foreignKey.isRequired { line += " NOT NULL" }
            if foreignKey.isUnique { line += " UNIQUE" }
            let reference = "REFERENCES \(q(foreignKey.targetTable)) (id) ON DELETE \(Self.onDeleteAction(foreignKey, in: schema))"
            if dialect == .sqlite || existing.contains(foreignKey.target) {
                line += " " + reference
            } else {
                deferred.append("ALTER TABLE \(q(entity.tableName)) ADD CONSTRAINT \(q(entity.tableName + "_" + foreignKey.column + "_fkey")) FOREIGN KEY (\(q(foreignKey.column))) \(reference);")
            }
            lines.append(line)
        }
        for columns in entity.uniqueConstraints {
            lines.append("UNIQUE (\(columns.map(q).joined(separator: ", ")))")
        }
        return "CREATE TABLE \(q(entity.tableName)) (\n    " + lines.joined(separator: ",\n    ") + "\n);"
    }

    private func columnDefinition(_ attribute: Attribute) -> String {
        let column = q(attribute.columnName)
        var line: String
        var check: String?
        switch attribute.type {
        case let .scalar(type):
            line = "\(column) \(dialect.columnType(type))"
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
        let left = "\(q(table.column)) \(dialect.keyType) NOT NULL REFERENCES \(q(table.table)) (id) ON DELETE CASCADE"
        let right = "\(q(table.targetColumn)) \(dialect.keyType) NOT NULL REFERENCES \(q(table.targetTable)) (id) ON DELETE CASCADE"
        return "CREATE TABLE \(q(table.name)) (\n    \(left),\n    \(right),\n    PRIMARY KEY (\(q(table.column)), \(q(table.targetColumn)))\n);"
    }

    private func indexes(for entity: Entity) -> [String] {
        var statements: [String] = []
        func index(_ columns: [String]) {
            let name = entity.tableName + "_" + columns.joined(separator: "_") + "_idx"
            statements.append("CREATE INDEX \(q(name)) ON \(q(entity.tableName)) (\(columns.map(q).joined(separator: ", ")));")
        }
        for foreignKey in schema.foreignKeys where foreignKey.entity == entity.name && !foreignKey.isUnique {
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
