import Foundation
import ModelGenQuery

/// The migration as one PostgreSQL transaction: `ALTER TABLE` in place (PostgreSQL changes a
/// table's definition without rebuilding it, and its foreign keys follow renames by themselves),
/// the same identity and the same checks as SQLite's plan. Every check runs first in a `DO`
/// block that raises — so the whole script changes nothing — naming the rows and their count.
/// Constraints are found by their columns in the catalog, not by name, since a renamed table keeps
/// the names PostgreSQL gave them. Lock waits are bounded (`lock_timeout`). Foreign keys and checks
/// are added validated, in one statement each: `NOT VALID` and a later `VALIDATE CONSTRAINT` let
/// writes go on during the scan only in transactions of their own, and the migration is one.
extension MigrationPlanner {
    /// The statements from `old` to `new` (without the deletion functions, which the caller appends).
    public static func postgresqlStatements(from old: ModelSchema, to new: ModelSchema, allowDataLoss: Bool) -> [String] {
        let planner = MigrationPlanner(old: old, new: new, dialect: .postgresql)
        let plan = planner.makePlan()
        guard !plan.isEmpty else { return [] }
        return planner.postgresqlStatements(plan, allowDataLoss: allowDataLoss)
    }

    private func postgresqlStatements(_ plan: MigrationPlan, allowDataLoss: Bool) -> [String] {
        let pg = SQLDialect.postgresql
        let q = pg.quote
        var statements = ["SET LOCAL lock_timeout = '10s';"]
        // A `Double` or `Float` becoming text is written as Swift writes it, by a function of the
        // session (`FloatingPointText`) on the shortest digits PostgreSQL writes whenever
        // `extra_float_digits` is above 0 (a session may have set 0).
        if changesType(from: [.double, .float], to: [.string]) { statements.append("SET LOCAL extra_float_digits = 1;") }
        for double in [true, false] where changesType(from: [double ? .double : .float], to: [.string]) {
            statements.append(FloatingPointText.createFunction(double: double))
        }
        // A `String` becoming a `Double` or `Float` is read by a function of the session (`SQLNames.textDoubleFunction`).
        let textNumbers = [(ScalarType.double, SQLNames.textDoubleFunction, "double precision"), (.float, SQLNames.textFloatFunction, "real")]
            .filter { changesType(from: [.string], to: [$0.0]) }
        for (_, function, type) in textNumbers {
            statements.append("CREATE OR REPLACE FUNCTION pg_temp.\(function)(modelgen_text text) RETURNS \(type) LANGUAGE plpgsql IMMUTABLE AS $modelgen$ BEGIN "
                + "IF modelgen_text !~ \(pg.literal(SQLNames.decimalNumberPattern)) THEN RETURN NULL; END IF; RETURN CAST(modelgen_text AS \(type)); "
                + "EXCEPTION WHEN numeric_value_out_of_range THEN RETURN NULL; END $modelgen$;")
        }
        // 1. Checks, before anything changes.
        for check in plan.checks where check.kind == .refusal || !allowDataLoss {
            let sql = check.countSQL
            let what = check.kind == .refusal ? "" : " (would be lost; allow data loss to migrate anyway)"
            // The count, then the first of the rows to blame where the check names one: `…: 2 (for example code = 'a' in 2 objects)`.
            let rows = check.exampleSQL.map { "modelgen_rows || coalesce(' (for example ' || (\($0)) || ')', '')" } ?? "modelgen_rows"
            statements.append("DO $check$ DECLARE modelgen_rows bigint; BEGIN \(sql.replacingFirst("SELECT count(*)", with: "SELECT count(*) INTO modelgen_rows")); "
                + "IF modelgen_rows > 0 THEN RAISE EXCEPTION 'migration refused, nothing was changed: %: %\(what)', \(pg.literal(check.message)), \(rows) USING ERRCODE = 'check_violation'; END IF; END $check$;")
        }
        // Links that change storage are read into temporary tables before any table changes.
        let moves = linkMoves()
        for move in moves { statements += stagingStatements(move, dialect: pg) }
        let olds = oldTables(), news = newTables()
        let oldByKey = Dictionary(olds.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        let newKeys = Set(news.map(\.key))
        let originalNames = Dictionary(zip(olds.map(\.key), old.entities.map(\.tableName) + old.joinTables.map(\.name)), uniquingKeysWith: { first, _ in first })
        // 2. The deletion functions of the old version go (the new ones are created afterwards).
        for entity in old.entities {
            let function = q(SQLNames.safeDeleteFunction(of: entity.tableName))
            statements.append("DROP FUNCTION IF EXISTS \(function)(bigint[], boolean);")
            statements.append("DROP FUNCTION IF EXISTS \(function)(bigint[]);")
        }
        // 3. An index the new version has too (same table, same columns) stays, renamed if its name
        //    changes, in two steps so that names may be exchanged: rebuilding every index of a large
        //    database would take about as long as copying it, blocking writes meanwhile. The others
        //    go; the new version's missing ones are created at the end.
        let oldIndexes = DDLGenerator(schema: old, dialect: pg).indexDefinitions(), newIndexes = DDLGenerator(schema: new, dialect: pg).indexDefinitions()
        let kept = indexesKept(oldIndexes, newIndexes, olds: olds, news: news, originalNames: originalNames)
        let keptOldNames = Set(kept.map(\.old))
        for index in oldIndexes where !keptOldNames.contains(index.name) {
            statements.append("DROP INDEX IF EXISTS \(q(index.name));")
        }
        let renamedIndexes = kept.filter { $0.old != $0.new }
        for (index, rename) in renamedIndexes.enumerated() { statements.append("ALTER INDEX \(q(rename.old)) RENAME TO \(q("modelgen_index_\(index)"));") }
        for (index, rename) in renamedIndexes.enumerated() { statements.append("ALTER INDEX \(q("modelgen_index_\(index)")) RENAME TO \(q(rename.new));") }
        // 4. Tables that go.
        for table in olds where !newKeys.contains(table.key) {
            statements.append("DROP TABLE \(q(originalNames[table.key] ?? table.definition.name)) CASCADE;")
        }
        // 5. Renamed tables, in two steps so that names may be exchanged.
        var renames: [(from: String, to: String)] = []
        for table in news {
            if let original = originalNames[table.key], original != table.definition.name { renames.append((original, table.definition.name)) }
        }
        for (index, rename) in renames.enumerated() { statements.append("ALTER TABLE \(q(rename.from)) RENAME TO \(q("modelgen_rename_\(index)"));") }
        for (index, rename) in renames.enumerated() { statements.append("ALTER TABLE \(q("modelgen_rename_\(index)")) RENAME TO \(q(rename.to));") }
        // 6. Tables that stay, column by column; new tables without their foreign keys.
        var foreignKeys: [String] = []
        for table in news {
            if let previous = oldByKey[table.key] {
                statements += alterations(of: table, from: previous, moves: moves, foreignKeys: &foreignKeys)
            } else {
                statements.append(DDLGenerator(schema: new, dialect: pg).postgresqlTable(named: table.definition.name, foreignKeys: &foreignKeys))
                if let move = moves.first(where: { $0.destination == .joinTable(table.definition.name) }),
                   let fill = fillingStatement(move, joinTable: table.definition.name, dialect: pg) {
                    statements.append(fill)
                }
            }
        }
        // 7. Foreign keys, once every table they name exists; then the indexes.
        statements += foreignKeys
        let keptNewNames = Set(kept.map(\.new))
        statements += newIndexes.filter { !keptNewNames.contains($0.name) }.map(\.sql)
        for (_, function, _) in textNumbers { statements.append("DROP FUNCTION pg_temp.\(function)(text);") }
        return statements
    }

    /// The old version's indexes that the new version has too — on the table of the same identity,
    /// over the columns of the same identities, in the same order — each with its name in either.
    private func indexesKept(_ oldIndexes: [DDLGenerator.IndexDefinition], _ newIndexes: [DDLGenerator.IndexDefinition],
                             olds: [Table], news: [Table], originalNames: [String: String]) -> [(old: String, new: String)] {
        let oldTableKeys = Dictionary(originalNames.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        let newTableKeys = Dictionary(news.map { ($0.definition.name, $0.key) }, uniquingKeysWith: { first, _ in first })
        func identity(_ index: DDLGenerator.IndexDefinition, tableKey: String?, in tables: [Table]) -> [String]? {
            guard let tableKey, let table = tables.first(where: { $0.key == tableKey }) else { return nil }
            return [tableKey] + index.columns.map { table.columnKeys[$0] ?? $0 }
        }
        var newNames: [[String]: String] = [:]
        for index in newIndexes {
            if let identity = identity(index, tableKey: newTableKeys[index.table], in: news) { newNames[identity] = index.name }
        }
        return oldIndexes.compactMap { index in
            guard let identity = identity(index, tableKey: oldTableKeys[index.table], in: olds),
                  let name = newNames.removeValue(forKey: identity) else { return nil }
            return (index.name, name)
        }
    }

    /// `ALTER TABLE` statements that turn the old table (already under its new name) into the new one.
    private func alterations(of table: Table, from previous: Table, moves: [LinkMove], foreignKeys: inout [String]) -> [String] {
        let pg = SQLDialect.postgresql
        let q = pg.quote
        let name = table.definition.name
        let ddl = DDLGenerator(schema: new, dialect: pg)
        let newDefinition = table.isJoinTable ? ddl.tableDefinition(of: new.joinTables.first { $0.name == name }!) : ddl.tableDefinition(of: new.entity(named: table.entity)!)
        let oldByKey = Dictionary(previous.definition.columns.map { (previous.columnKeys[$0.name] ?? $0.name, $0.name) }, uniquingKeysWith: { first, _ in first })
        let newKeys = Set(table.definition.columns.map { table.columnKeys[$0.name] ?? $0.name })
        var statements: [String] = []
        let entity = table.isJoinTable ? nil : new.entity(named: table.entity)
        let oldEntity = table.isJoinTable ? nil : old.entities.first { entityNames[$0.name] == table.entity }
        for column in previous.definition.columns where !newKeys.contains(previous.columnKeys[column.name] ?? column.name) {
            statements.append("ALTER TABLE \(q(name)) DROP COLUMN \(q(column.name));")
        }
        // Renamed columns, in two steps.
        let renamed = table.definition.columns.compactMap { column -> (from: String, to: String)? in
            guard let oldName = oldByKey[table.columnKeys[column.name] ?? column.name], oldName != column.name else { return nil }
            return (oldName, column.name)
        }
        for (index, rename) in renamed.enumerated() { statements.append("ALTER TABLE \(q(name)) RENAME COLUMN \(q(rename.from)) TO \(q("modelgen_column_\(index)"));") }
        for (index, rename) in renamed.enumerated() { statements.append("ALTER TABLE \(q(name)) RENAME COLUMN \(q("modelgen_column_\(index)")) TO \(q(rename.to));") }
        for column in newDefinition.columns where column.name != "id" {
            let key = table.columnKeys[column.name] ?? column.name
            guard oldByKey[key] != nil else {
                // A new column: its definition without the foreign key, which comes later.
                let foreignKey = entity.flatMap { entity in new.foreignKeys.first { $0.entity == entity.name && $0.column == column.name } }
                if let move = moves.first(where: { $0.destination == .column(table: name, column: column.name) }) {
                    // Links moved here: added nullable, filled from their temporary table, then made required if they are.
                    statements.append("ALTER TABLE \(q(name)) ADD COLUMN \(column.definition.replacingFirst(" NOT NULL", with: ""));")
                    statements.append("UPDATE \(q(name)) SET \(q(column.name)) = modelgen_links.target_id FROM \(q(move.stagingTable)) AS modelgen_links WHERE modelgen_links.owner_id = \(q(name)).id;")
                    if foreignKey?.isRequired == true { statements.append("ALTER TABLE \(q(name)) ALTER COLUMN \(q(column.name)) SET NOT NULL;") }
                } else {
                    statements.append("ALTER TABLE \(q(name)) ADD COLUMN \(column.definition);")
                }
                if let foreignKey { foreignKeys.append(Self.addForeignKey(foreignKey, in: new)) }
                continue
            }
            guard let entity, let oldEntity else { continue }
            if let attribute = entity.storedAttributes.first(where: { $0.columnName == column.name }),
               let oldAttribute = oldEntity.storedAttributes.first(where: { newMemberName(oldEntity.name, $0.name) == attribute.name }) {
                statements += alterations(of: attribute, from: oldAttribute, table: name)
            } else if let foreignKey = new.foreignKeys.first(where: { $0.entity == entity.name && $0.column == column.name }),
                      let relationship = entity.relationships.first(where: { $0.name == foreignKey.relationship }),
                      let oldForeignKey = old.foreignKeys.first(where: { $0.entity == oldEntity.name && newMemberName(oldEntity.name, $0.relationship) == relationship.name }) {
                if oldForeignKey.isRequired != foreignKey.isRequired {
                    statements.append("ALTER TABLE \(q(name)) ALTER COLUMN \(q(column.name)) \(foreignKey.isRequired ? "SET" : "DROP") NOT NULL;")
                }
                if oldForeignKey.isUnique != foreignKey.isUnique {
                    statements.append(foreignKey.isUnique ? "ALTER TABLE \(q(name)) ADD UNIQUE (\(q(column.name)));" : Self.dropConstraint(table: name, kind: "u", columns: [column.name]))
                }
                let oldAction = DDLGenerator.onDeleteAction(oldForeignKey, in: old), newAction = DDLGenerator.onDeleteAction(foreignKey, in: new)
                if oldAction != newAction || entityNames[oldForeignKey.target] != foreignKey.target {
                    statements.append(Self.dropConstraint(table: name, kind: "f", columns: [column.name]))
                    foreignKeys.append(Self.addForeignKey(foreignKey, in: new))
                }
            }
        }
        // A join table whose owning side changed (a rename can change it) keys its pairs the other way round.
        if table.isJoinTable, previous.definition.columns.map({ previous.columnKeys[$0.name] }) != table.definition.columns.map({ table.columnKeys[$0.name] }) {
            statements.append(Self.dropConstraint(table: name, kind: "p", columns: table.definition.columns.reversed().map(\.name)))
            statements.append("ALTER TABLE \(q(name)) ADD PRIMARY KEY (\(table.definition.columns.map { q($0.name) }.joined(separator: ", ")));")
        }
        // Compound unique constraints: the old ones (which follow their columns' renames) that the
        // new version has not, and the new ones the old version had not.
        let newConstraints = Set(table.definition.constraints)
        let carried = carriedUniqueConstraints(of: oldEntity, from: previous, in: table)
        if let entity {
            for group in entity.uniqueConstraints where !carried.contains(uniqueConstraint(group)) {
                statements.append("ALTER TABLE \(q(name)) ADD UNIQUE (\(group.map(q).joined(separator: ", ")));")
            }
        }
        if let oldEntity {
            for group in oldEntity.uniqueConstraints {
                let renamedGroup = renamedColumns(group, from: previous, in: table)
                if !newConstraints.contains(uniqueConstraint(renamedGroup)) {
                    statements.append(Self.dropConstraint(table: name, kind: "u", columns: renamedGroup))
                }
            }
        }
        return statements
    }

    /// Whether some attribute changes from one of the types `from` to one of `to`.
    private func changesType(from: [ScalarType], to: [ScalarType]) -> Bool {
        new.entities.contains { entity in
            guard let oldEntity = old.entities.first(where: { entityNames[$0.name] == entity.name }) else { return false }
            return entity.storedAttributes.contains { attribute in
                to.map(AttributeType.scalar).contains(attribute.type) && oldEntity.storedAttributes.contains {
                    newMemberName(oldEntity.name, $0.name) == attribute.name && from.map(AttributeType.scalar).contains($0.type)
                }
            }
        }
    }

    /// Changing one attribute's column in place: type (with the exact conversion), default, NOT NULL, UNIQUE, CHECK.
    private func alterations(of attribute: Attribute, from oldAttribute: Attribute, table: String) -> [String] {
        let pg = SQLDialect.postgresql
        let q = pg.quote
        let column = q(attribute.columnName)
        var statements: [String] = []
        let checkChanges = attribute.type != oldAttribute.type || enumCases(of: attribute.type, in: new) != enumCases(of: oldAttribute.type, in: old)
        if checkChanges, enumCases(of: oldAttribute.type, in: old) != nil {
            statements.append(Self.dropConstraint(table: table, kind: "c", columns: [attribute.columnName]))
        }
        // A column changing type loses its default first: PostgreSQL would cast the old default to
        // the new type, and refuses to where no implicit cast exists (text to bigint).
        var hasDefault = oldAttribute.defaultValue != nil
        if attribute.type.storageType != oldAttribute.type.storageType, case let .scalar(scalar) = attribute.type.storageType {
            if hasDefault { statements.append("ALTER TABLE \(q(table)) ALTER COLUMN \(column) DROP DEFAULT;") }
            hasDefault = false
            // The planner's exact conversion (its checks ran first); where that is the value itself,
            // PostgreSQL's cast, which is exact for it (`smallint` to `bigint`, `real` to `double precision`).
            let using = switch conversion(from: oldAttribute.type, to: attribute.type, source: column) {
            case let .exact(converted, _): converted == column ? "\(column)::\(pg.columnType(scalar))" : converted
            case .nothingConverts: "CAST(NULL AS \(pg.columnType(scalar)))"
            }
            statements.append("ALTER TABLE \(q(table)) ALTER COLUMN \(column) TYPE \(pg.columnType(scalar)) USING \(using);")
        }
        if let value = attribute.defaultValue, value != oldAttribute.defaultValue || !hasDefault {
            statements.append("ALTER TABLE \(q(table)) ALTER COLUMN \(column) SET DEFAULT \(pg.literal(value));")
        } else if attribute.defaultValue == nil, hasDefault {
            statements.append("ALTER TABLE \(q(table)) ALTER COLUMN \(column) DROP DEFAULT;")
        }
        if oldAttribute.isOptional, !attribute.isOptional {
            if let value = attribute.defaultValue { statements.append("UPDATE \(q(table)) SET \(column) = \(pg.literal(value)) WHERE \(column) IS NULL;") }
            statements.append("ALTER TABLE \(q(table)) ALTER COLUMN \(column) SET NOT NULL;")
        } else if !oldAttribute.isOptional, attribute.isOptional {
            statements.append("ALTER TABLE \(q(table)) ALTER COLUMN \(column) DROP NOT NULL;")
        }
        if attribute.isUnique != oldAttribute.isUnique {
            statements.append(attribute.isUnique ? "ALTER TABLE \(q(table)) ADD UNIQUE (\(column));" : Self.dropConstraint(table: table, kind: "u", columns: [attribute.columnName]))
        }
        let renames = caseRenames(attribute.type, from: oldAttribute.type)
        if !renames.isEmpty {
            statements.append("UPDATE \(q(table)) SET \(column) = \(renamingCases(column, renames)) WHERE \(column) IN (\(renames.map { pg.literal($0.from) }.joined(separator: ", ")));")
        }
        if checkChanges, case let .enumeration(name) = attribute.type {
            let cases = new.enums.first { $0.name == name }?.cases ?? []
            let name = q(SQLNames.shortened(table + "_" + attribute.columnName + "_check"))
            statements.append("ALTER TABLE \(q(table)) ADD CONSTRAINT \(name) CHECK (\(column) IN (\(cases.map(pg.literal).joined(separator: ", "))));")
        }
        return statements
    }

    private func enumCases(of type: AttributeType, in schema: ModelSchema) -> [String]? {
        guard case let .enumeration(name) = type else { return nil }
        return schema.enums.first { $0.name == name }?.cases
    }

    /// Drops the constraint of `kind` (`u`, `f`, `c`) on exactly these columns, found in the catalog.
    static func dropConstraint(table: String, kind: String, columns: [String]) -> String {
        let pg = SQLDialect.postgresql
        let names = columns.map(pg.literal).joined(separator: ", ")
        return """
            DO $drop$ DECLARE name text; BEGIN FOR name IN SELECT c.conname FROM pg_constraint c WHERE c.conrelid = \(pg.literal(pg.quote(table)))::regclass AND c.contype = \(pg.literal(kind)) \
            AND c.conkey::smallint[] = ARRAY(SELECT a.attnum FROM unnest(ARRAY[\(names)]::text[]) AS w(n) JOIN pg_attribute a ON a.attrelid = \(pg.literal(pg.quote(table)))::regclass AND a.attname = w.n)::smallint[] \
            LOOP EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', \(pg.literal(pg.quote(table))), name); END LOOP; END $drop$;
            """
    }

    /// A foreign key added, and so checked against the rows the table holds.
    static func addForeignKey(_ foreignKey: ForeignKey, in schema: ModelSchema) -> String {
        let q = SQLDialect.postgresql.quote
        let name = q(SQLNames.shortened(foreignKey.table + "_" + foreignKey.column + "_fkey"))
        return "ALTER TABLE \(q(foreignKey.table)) ADD CONSTRAINT \(name) FOREIGN KEY (\(q(foreignKey.column))) REFERENCES \(q(foreignKey.targetTable)) (id) "
            + "ON DELETE \(DDLGenerator.onDeleteAction(foreignKey, in: schema))\(SQLDialect.postgresql.foreignKeyDeferrability);"
    }
}

extension AttributeType {
    /// The scalar type a value is stored as (an enum's raw value is a String).
    var storageType: AttributeType {
        if case .enumeration = self { return .scalar(.string) }
        return self
    }
}

extension DDLGenerator {
    /// A new table for a PostgreSQL migration: its `CREATE TABLE` with foreign keys left for
    /// `ALTER TABLE … ADD FOREIGN KEY`, appended to `foreignKeys`, once every table exists.
    func postgresqlTable(named name: String, foreignKeys: inout [String]) -> String {
        if let entity = schema.entities.first(where: { $0.tableName == name }) {
            for foreignKey in schema.foreignKeys where foreignKey.entity == entity.name {
                foreignKeys.append(MigrationPlanner.addForeignKey(foreignKey, in: schema))
            }
            return tableDefinition(of: entity).createStatement(dialect: .postgresql)
        }
        let table = schema.joinTables.first { $0.name == name }!
        return tableDefinition(of: table).createStatement(dialect: .postgresql)
    }
}

extension String {
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = range(of: target) else { return self }
        return replacingCharacters(in: range, with: replacement)
    }
}
