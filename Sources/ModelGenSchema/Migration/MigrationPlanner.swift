import ModelGenQuery

/// Plans the migration of an SQLite database from one version of a schema to the next.
///
/// Identity is by name or declared `originalName`, never guessed. Each table of the new schema is
/// matched with the old table of the same entity (or the join table of the same relationships);
/// its definition is compared, line by line, with the old one rendered under the new table names:
///
/// - unchanged: nothing to do (but indexes);
/// - only renamed columns (`ALTER TABLE … RENAME COLUMN`) and new columns that `ALTER TABLE …
///   ADD COLUMN` can add (nullable, or with a default written as a constant; no UNIQUE): changed in place,
///   whatever the row count;
/// - anything else: rebuilt in SQLite's documented order — new table, copy, drop, rename — with
///   every kept column copied from its old column (converted, NULLs replaced by a new default).
///
/// Renamed tables are renamed in place first (`ALTER TABLE … RENAME`, which also rewrites the
/// references of other tables), new tables are created, removed ones dropped — all with
/// foreign-key enforcement off, so no `ON DELETE` action fires. Checks count, before anything
/// changes, the rows a step would reject or whose values it would lose.
public struct MigrationPlanner {
    let old: ModelSchema
    let new: ModelSchema
    /// The dialect of the checks' SQL (and of the statements, which only SQLite's plan runs).
    let dialect: SQLDialect
    /// How the store declares its floating-point columns: `.real` in a store an earlier ModelGen
    /// made, whose tables with such columns the plan rebuilds untyped (see `SQLiteFloatingPointColumns`).
    let storeFloatingPointColumns: SQLiteFloatingPointColumns
    /// Old entity name → new entity name, for matched entities.
    var entityNames: [String: String] = [:]
    /// "OldEntity.oldMember" → new member name, for matched attributes and relationships.
    var memberNames: [String: String] = [:]
    /// Old entities and members that two new ones could continue with equal right (`Lineage`).
    private var lineageWarnings: [MigrationPlan.Warning] = []

    init(old: ModelSchema, new: ModelSchema, dialect: SQLDialect = .sqlite, storeFloatingPointColumns: SQLiteFloatingPointColumns = .untyped) {
        self.old = old
        self.new = new
        self.dialect = dialect
        self.storeFloatingPointColumns = dialect == .sqlite ? storeFloatingPointColumns : .untyped
        let oldEntities = old.entities, newEntities = new.entities
        let entityMatches = Lineage.match(old: oldEntities.map(Lineage.Element.init), new: newEntities.map(Lineage.Element.init))
        for (stored, candidates) in entityMatches.ambiguous {
            lineageWarnings.append(.init(entity: newEntities[candidates[0]].name, message: Self.ambiguity(candidates.map { newEntities[$0].name }, continuing: oldEntities[stored].name)))
        }
        for (entity, match) in zip(newEntities, entityMatches.continued) {
            guard let match else { continue }
            let previous = oldEntities[match]
            entityNames[previous.name] = entity.name
            let oldMembers = previous.attributes.map(Lineage.Element.init) + previous.relationships.map(Lineage.Element.init)
            let newMembers = entity.attributes.map(Lineage.Element.init) + entity.relationships.map(Lineage.Element.init)
            let memberMatches = Lineage.match(old: oldMembers, new: newMembers)
            for (stored, candidates) in memberMatches.ambiguous {
                lineageWarnings.append(.init(entity: entity.name, element: newMembers[candidates[0]].name,
                                             message: Self.ambiguity(candidates.map { "\(entity.name).\(newMembers[$0].name)" }, continuing: "\(previous.name).\(oldMembers[stored].name)")))
            }
            for (member, oldMember) in zip(newMembers, memberMatches.continued) {
                guard let oldMember else { continue }
                memberNames["\(previous.name).\(oldMembers[oldMember].name)"] = member.name
            }
        }
        // A relationship that now points at another entity holds keys of the old target's rows,
        // which mean nothing to the new one: it is removed and another added, not kept.
        for entity in old.entities {
            for relationship in entity.relationships {
                guard let newEntity = entityNames[entity.name], let newName = memberNames["\(entity.name).\(relationship.name)"] else { continue }
                if new.relationship(newEntity, newName)?.target != entityNames[relationship.target] {
                    memberNames["\(entity.name).\(relationship.name)"] = nil
                }
            }
        }
    }

    /// The warning for an old element that each of `candidates` could continue (their
    /// histories end alike), of which the first does.
    private static func ambiguity(_ candidates: [String], continuing old: String) -> String {
        let others = candidates.dropFirst().map { "'\($0)'" }.joined(separator: " and ")
        return "'\(candidates[0])' and \(others) could each continue the store's '\(old)' (their original names end alike): it becomes '\(candidates[0])', the first; remove '\(old)' from the originalName of the others if that is wrong"
    }

    /// The plan from `old` to `new`, for a store whose floating-point columns are declared as
    /// `store` says (`.real` in one an earlier ModelGen made: its tables with such columns are
    /// rebuilt, even when `old` is `new`).
    public static func plan(from old: ModelSchema, to new: ModelSchema, store: SQLiteFloatingPointColumns = .untyped) -> MigrationPlan {
        MigrationPlanner(old: old, new: new, storeFloatingPointColumns: store).makePlan()
    }

    // MARK: - Tables

    /// A table of either version, with an identity that survives renames.
    struct Table {
        var key: String
        var entity: String
        var definition: DDLGenerator.TableDefinition
        /// Identity of each column, by column name.
        var columnKeys: [String: String]
        var isJoinTable: Bool
    }

    func newMemberName(_ entity: String, _ member: String) -> String? {
        memberNames["\(entity).\(member)"]
    }

    /// Tables of the old version, under the new version's table names where matched, keyed by identity.
    func oldTables() -> [Table] {
        // The old schema with matched tables renamed, so references render as they will read after the renames.
        var entities = old.entities
        for index in entities.indices {
            if let newName = entityNames[entities[index].name], let newEntity = new.entity(named: newName) {
                entities[index].tableName = newEntity.tableName
            }
        }
        let tableOfEntity = Dictionary(entities.map { ($0.name, $0.tableName) }, uniquingKeysWith: { first, _ in first })
        var joinTables = old.joinTables
        for index in joinTables.indices {
            joinTables[index].table = tableOfEntity[joinTables[index].entity] ?? joinTables[index].table
            joinTables[index].targetTable = tableOfEntity[joinTables[index].target] ?? joinTables[index].targetTable
            if let match = newJoinTable(matching: old.joinTables[index]) { joinTables[index].name = match.name }
        }
        let renamed = ModelSchema(name: old.name, sourceFile: old.sourceFile, enums: old.enums, entities: entities, joinTables: joinTables)
        let ddl = DDLGenerator(schema: renamed, dialect: dialect, floatingPointColumns: storeFloatingPointColumns)
        var tables = renamed.entities.map { entity in
            Table(key: entityKey(entity.name, old: true), entity: entity.name, definition: ddl.tableDefinition(of: entity),
                  columnKeys: columnKeys(of: entity, old: true), isJoinTable: false)
        }
        for (original, table) in zip(old.joinTables, renamed.joinTables) {
            tables.append(Table(key: joinKey(original, old: true), entity: original.entity, definition: ddl.tableDefinition(of: table),
                                columnKeys: joinColumnKeys(original, old: true), isJoinTable: true))
        }
        return tables
    }

    func newTables() -> [Table] {
        let ddl = DDLGenerator(schema: new, dialect: dialect)
        return new.entities.map { entity in
            Table(key: entityKey(entity.name, old: false), entity: entity.name, definition: ddl.tableDefinition(of: entity),
                  columnKeys: columnKeys(of: entity, old: false), isJoinTable: false)
        } + new.joinTables.map { table in
            Table(key: joinKey(table, old: false), entity: table.entity, definition: ddl.tableDefinition(of: table),
                  columnKeys: joinColumnKeys(table, old: false), isJoinTable: true)
        }
    }

    private func entityKey(_ name: String, old: Bool) -> String {
        old ? entityNames[name].map { "entity:" + $0 } ?? "old-entity:" + name : "entity:" + name
    }

    /// `Entity.relationship` in the new version's names; unmatched old ones stay apart.
    func relationshipKey(_ entity: String, _ relationship: String, old: Bool) -> String {
        guard old else { return "\(entity).\(relationship)" }
        guard let newEntity = entityNames[entity], let newName = newMemberName(entity, relationship) else { return "old:\(entity).\(relationship)" }
        return "\(newEntity).\(newName)"
    }

    private func columnKeys(of entity: Entity, old: Bool) -> [String: String] {
        var keys = ["id": "id"]
        for attribute in entity.storedAttributes {
            let name = old ? newMemberName(entity.name, attribute.name).map { "attribute:" + $0 } ?? "old-attribute:" + attribute.name : "attribute:" + attribute.name
            keys[attribute.columnName] = name
        }
        for relationship in entity.relationships {
            guard case let .foreignKey(column, _) = relationship.storage else { continue }
            keys[column] = "key:" + relationshipKey(entity.name, relationship.name, old: old)
        }
        return keys
    }

    /// A join table is the same table when it stores the same pair of relationships.
    func joinKey(_ table: JoinTable, old: Bool) -> String {
        let sides = [relationshipKey(table.entity, table.relationship, old: old),
                     table.inverse.map { relationshipKey(table.target, $0, old: old) } ?? "→"]
        return "join:" + sides.sorted().joined(separator: "|")
    }

    /// Each column of a join table holds the ids of one side: named by that side's relationship.
    private func joinColumnKeys(_ table: JoinTable, old: Bool) -> [String: String] {
        let own = relationshipKey(table.entity, table.relationship, old: old)
        let other = table.inverse.map { "side:" + relationshipKey(table.target, $0, old: old) } ?? "target:" + own
        return [table.column: "side:" + own, table.targetColumn: other]
    }

    private func newJoinTable(matching table: JoinTable) -> JoinTable? {
        let key = joinKey(table, old: true)
        return new.joinTables.first { joinKey($0, old: false) == key }
    }

    // MARK: - The plan

    func makePlan() -> MigrationPlan {
        var plan = MigrationPlan(from: old.canonicalHash, to: new.canonicalHash)
        guard !plan.isEmpty || storeFloatingPointColumns == .real else { return plan }
        let olds = oldTables(), news = newTables()
        let oldByKey = Dictionary(olds.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        let newKeys = Set(news.map(\.key))
        let q = dialect.quote

        // 0. Links that change storage are read first, into temporary tables.
        let moves = linkMoves()
        for move in moves {
            planLinkMove(move, into: &plan)
            plan.statements += stagingStatements(move, dialect: dialect)
        }
        let movedFrom = Set(moves.map(\.oldStorage))

        // 1. Tables that go: their rows are lost (unless they are links that move).
        for (original, table) in zip(old.entities.map(\.tableName) + old.joinTables.map(\.name), olds) where !newKeys.contains(table.key) {
            guard !movedFrom.contains(table.key) else {
                plan.statements.append("DROP TABLE \(q(original));")
                continue
            }
            let what = table.isJoinTable ? "the links of the join table \(original)" : "the \(table.entity) objects"
            plan.operations.append(.init(kind: table.isJoinTable ? "dropTable" : "dropEntity", entity: table.entity, detail: "drop table \(original)", safety: .destructive))
            plan.checks.append(.init(kind: .dataLoss, entity: table.entity, message: "rows of \(what), which the new schema removes", countSQL: "SELECT count(*) FROM \(q(original))"))
            plan.statements.append("DROP TABLE \(q(original));")
        }

        // 2. Renames, in two steps so that names may be exchanged.
        let originalNames = Dictionary(zip(olds.map(\.key), old.entities.map(\.tableName) + old.joinTables.map(\.name)), uniquingKeysWith: { first, _ in first })
        var renames: [(from: String, to: String)] = []
        for table in news {
            guard let original = originalNames[table.key], original != table.definition.name else { continue }
            renames.append((original, table.definition.name))
            plan.renamedTables[original] = table.definition.name
            plan.operations.append(.init(kind: table.isJoinTable ? "renameTable" : "renameEntity", entity: table.entity, detail: "rename table \(original) to \(table.definition.name)", safety: .safe))
        }
        for (index, rename) in renames.enumerated() {
            plan.statements.append("ALTER TABLE \(q(rename.from)) RENAME TO \(q("modelgen_rename_\(index)"));")
        }
        for (index, rename) in renames.enumerated() {
            plan.statements.append("ALTER TABLE \(q("modelgen_rename_\(index)")) RENAME TO \(q(rename.to));")
            plan.checkedTables.append(rename.to)
        }

        // 3. Tables that stay: unchanged, grown by ADD COLUMN, or rebuilt.
        // The tables that stay, by their new name: their name before the migration.
        let namesBefore = Dictionary(news.compactMap { table in originalNames[table.key].map { (table.definition.name, $0) } }, uniquingKeysWith: { first, _ in first })
        for table in news {
            guard let previous = oldByKey[table.key], let original = originalNames[table.key] else { continue }
            planTable(table, from: previous, originalTable: original, namesBefore: namesBefore, moves: moves, into: &plan)
        }

        // 4. New tables (a join table that links move to is filled).
        for table in news where oldByKey[table.key] == nil {
            let move = moves.first { $0.destination == .joinTable(table.definition.name) }
            if move == nil {
                plan.operations.append(.init(kind: table.isJoinTable ? "createTable" : "addEntity", entity: table.entity, detail: "create table \(table.definition.name)", safety: .safe))
            }
            plan.statements.append(table.definition.createStatement(dialect: dialect))
            if let move, let fill = fillingStatement(move, joinTable: table.definition.name, dialect: dialect) { plan.statements.append(fill) }
            plan.checkedTables.append(table.definition.name)
        }
        for move in moves { plan.statements.append("DROP TABLE temp.\(q(move.stagingTable));") }
        planEnumCases(into: &plan)
        plan.indexes = DDLGenerator(schema: new, dialect: dialect).indexDefinitions()
        plan.checkedTables = plan.checkedTables.reduce(into: []) { tables, table in if !tables.contains(table) { tables.append(table) } }
        plan.warnings = lineageWarnings + undeclaredRenames(in: plan)
        return plan
    }

    /// `originalTable` is the table's name before the migration, which the checks (run first) read;
    /// `namesBefore` gives that of every table that stays, by its new name.
    private func planTable(_ table: Table, from previous: Table, originalTable: String, namesBefore: [String: String], moves: [LinkMove], into plan: inout MigrationPlan) {
        let q = dialect.quote
        let name = table.definition.name
        let oldColumnsByKey = Dictionary(previous.definition.columns.map { (previous.columnKeys[$0.name] ?? $0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let newKeys = Set(table.definition.columns.map { table.columnKeys[$0.name] ?? $0.name })
        var copies: [(column: String, expression: String)] = []
        var added: [(name: String, definition: String)] = []
        /// What each column will hold, as SQL over the original table (columns of moved links aside).
        var values: [String: String] = [:]
        /// The old column each column is copied from unchanged.
        var unchangedSources: [String: String] = [:]
        /// Columns whose only change is their name, which `ALTER TABLE … RENAME COLUMN` makes exactly.
        var renamed: [(from: String, to: String)] = []
        var needsRebuild = false
        let entity = table.isJoinTable ? nil : new.entity(named: table.entity)
        let oldEntity = table.isJoinTable ? nil : old.entities.first { entityNames[$0.name] == table.entity }
        // Unique values are checked as the migration will write them (`values`: an old column as
        // converted, NULLs a default fills, a new column's default for every row), unless the same
        // columns were unique before and are copied unchanged. After the checks of the columns'
        // own changes: a conversion they refuse is not run by a later check.
        let uniqueBefore = Set((oldEntity.map { $0.storedAttributes.filter(\.isUnique).map { [$0.columnName] } + $0.uniqueConstraints } ?? []).map(Set.init))
        func uniqueValueCheck(columns: [String], names: [String], element: String) {
            guard let entity else { return }
            let sources = columns.compactMap { unchangedSources[$0] }
            let unchanged = sources.count == columns.count
            if unchanged, uniqueBefore.contains(Set(sources)) { return }
            // A member holding only NULLs makes no duplicates; one read from moved links is checked with the move.
            let expressions = columns.compactMap { values[$0] }
            guard expressions.count == columns.count, !expressions.contains("NULL") else { return }
            let why = unchanged ? "which becomes unique (NULLs are not duplicates)"
                : "which is unique, with the values the migration gives them (a new attribute's default, a default filling NULLs, a converted value; NULLs are not duplicates)"
            plan.checks.append(duplicateCheck(table: originalTable, expressions: expressions, names: names, entity: entity.name, element: element, why: why))
        }
        func checkUniqueAttribute(_ column: String) {
            guard let attribute = entity?.storedAttributes.first(where: { $0.columnName == column }), attribute.isUnique else { return }
            uniqueValueCheck(columns: [column], names: [attribute.name], element: attribute.name)
        }

        // Columns that go.
        for column in previous.definition.columns where !newKeys.contains(previous.columnKeys[column.name] ?? column.name) {
            needsRebuild = true
            // Links that move elsewhere are not lost.
            if let key = previous.columnKeys[column.name], moves.contains(where: { $0.oldStorage == key }) { continue }
            let attribute = oldEntity?.storedAttributes.first { $0.columnName == column.name }
            let relationship = oldEntity?.relationships.first { $0.storage == .foreignKey(column: column.name, isUnique: false) || $0.storage == .foreignKey(column: column.name, isUnique: true) }
            let element = attribute?.name ?? relationship?.name ?? column.name
            plan.operations.append(.init(kind: attribute != nil ? "dropAttribute" : "dropRelationship", entity: table.entity, element: element,
                                         detail: "remove column \(column.name) of \(name)", safety: .destructive))
            plan.checks.append(.init(kind: .dataLoss, entity: table.entity, element: element,
                                     message: "values in column \(column.name) of \(originalTable), which the new schema removes",
                                     countSQL: "SELECT count(*) FROM \(q(originalTable)) WHERE \(q(column.name)) IS NOT NULL"))
        }
        // Columns that stay or come.
        for column in table.definition.columns {
            let key = table.columnKeys[column.name] ?? column.name
            if let move = moves.first(where: { $0.newStorage == key && $0.destination == .column(table: name, column: column.name) }) {
                // Links moved here from elsewhere, read from their temporary table.
                needsRebuild = true
                copies.append((column.name, "(SELECT target_id FROM \(q(move.stagingTable)) WHERE owner_id = \(q(name)).id)"))
                continue
            }
            guard let oldColumn = oldColumnsByKey[key] else {
                added.append(column)
                planAddedColumn(column.name, in: table, originalTable: originalTable, entity: entity, into: &plan)
                // Every existing row gets the column's default.
                let defaultValue = entity?.storedAttributes.first { $0.columnName == column.name }?.defaultValue
                values[column.name] = defaultValue.map { "coalesce(\(dialect.literal($0)), NULL)" } ?? "NULL"
                checkUniqueAttribute(column.name)
                continue
            }
            var expression = q(oldColumn.name)
            if oldColumn.name != column.name {
                renamed.append((oldColumn.name, column.name))
            }
            if oldColumn.definition.dropFirst(q(oldColumn.name).count) != column.definition.dropFirst(q(column.name).count) { needsRebuild = true }
            if oldColumn.name != column.name {
                let element = String(key.split(separator: ":").last ?? "")
                plan.operations.append(.init(kind: key.hasPrefix("attribute:") ? "renameAttribute" : key.hasPrefix("key:") ? "renameRelationship" : "renameColumn",
                                             entity: table.entity, element: element, detail: "column \(oldColumn.name) of \(name) becomes \(column.name)", safety: .safe))
            }
            if key.hasPrefix("attribute:"), let entity, let oldEntity,
               let attribute = entity.attributes.first(where: { "attribute:" + $0.name == key }),
               let oldAttribute = oldEntity.attributes.first(where: { newMemberName(oldEntity.name, $0.name) == attribute.name }) {
                expression = planChangedAttribute(attribute, from: oldAttribute, source: renamingCases(expression, caseRenames(attribute.type, from: oldAttribute.type)),
                                                  table: originalTable, entity: entity.name, into: &plan)
            } else if key.hasPrefix("key:"), let entity, let oldEntity,
                      let relationship = entity.relationships.first(where: { "key:\(entity.name).\($0.name)" == key }),
                      let oldRelationship = oldEntity.relationships.first(where: { newMemberName(oldEntity.name, $0.name) == relationship.name }) {
                if relationship.isRequired, !oldRelationship.isRequired {
                    plan.operations.append(.init(kind: "changeRelationship", entity: entity.name, element: relationship.name, detail: "\(relationship.name) becomes required", safety: .dataDependent))
                    plan.checks.append(.init(kind: .refusal, entity: entity.name, element: relationship.name,
                                             message: "\(entity.name) objects with no \(relationship.name), which becomes required", countSQL: "SELECT count(*) FROM \(q(originalTable)) WHERE \(q(oldColumn.name)) IS NULL"))
                }
                if case .foreignKey(_, isUnique: true) = relationship.storage, case .foreignKey(_, isUnique: false) = oldRelationship.storage {
                    plan.operations.append(.init(kind: "changeRelationship", entity: entity.name, element: relationship.name, detail: "\(relationship.name) becomes one-to-one", safety: .dataDependent))
                    plan.checks.append(.init(kind: .refusal, entity: entity.name, element: relationship.name,
                                             message: "\(relationship.target) objects that more than one \(entity.name) has as its \(relationship.name), which becomes one-to-one",
                                             countSQL: "SELECT count(*) FROM (SELECT 1 FROM \(q(originalTable)) WHERE \(q(oldColumn.name)) IS NOT NULL GROUP BY \(q(oldColumn.name)) HAVING count(*) > 1) AS shared"))
                }
            }
            if expression != q(oldColumn.name) {
                needsRebuild = true
                // A computed value (converted, or a default filling NULLs), not a bare constant, which GROUP BY would read as a position.
                values[column.name] = expression == "NULL" ? "NULL" : "coalesce(\(expression), NULL)"
            } else {
                values[column.name] = expression
                unchangedSources[column.name] = oldColumn.name
            }
            copies.append((column.name, expression))
            checkUniqueAttribute(column.name)
        }
        // Table constraints (compound unique) that are new; one whose columns are only renamed is not.
        let carried = carriedUniqueConstraints(of: oldEntity, from: previous, in: table)
        for constraint in table.definition.constraints where !previous.definition.constraints.contains(constraint) {
            needsRebuild = true
            if let entity, !carried.contains(constraint), entity.uniqueConstraints.contains(where: { uniqueConstraint($0) == constraint }) {
                plan.operations.append(.init(kind: "changeEntity", entity: entity.name, detail: "add \(constraint)", safety: .dataDependent))
            }
        }
        if let entity {
            for group in entity.uniqueConstraints {
                uniqueValueCheck(columns: group, names: group, element: group.joined(separator: ", "))
            }
        }
        if previous.definition.constraints.contains(where: { !table.definition.constraints.contains($0) }) { needsRebuild = true }
        // A join table whose owning side changed (a rename can change it: two entities exchanging
        // names) keys its pairs the other way round, though its lines may read the same.
        if table.isJoinTable, previous.definition.columns.map({ previous.columnKeys[$0.name] }) != table.definition.columns.map({ table.columnKeys[$0.name] }) {
            needsRebuild = true
        }

        let addable = added.allSatisfy { column in columnIsAddable(column.name, in: table, entity: entity) }
        if !needsRebuild, addable {
            // Renamed in two steps, so that columns may exchange names.
            for (index, rename) in renamed.enumerated() { plan.statements.append("ALTER TABLE \(q(name)) RENAME COLUMN \(q(rename.from)) TO \(q("modelgen_column_\(index)"));") }
            for (index, rename) in renamed.enumerated() { plan.statements.append("ALTER TABLE \(q(name)) RENAME COLUMN \(q("modelgen_column_\(index)")) TO \(q(rename.to));") }
            for column in added {
                plan.statements.append("ALTER TABLE \(q(name)) ADD COLUMN \(column.definition);")
            }
            if !added.isEmpty { plan.checkedTables.append(name) }
            return
        }
        // SQLite's 12 steps (lang_altertable.html, steps 4 to 7): new table, copy, drop, rename.
        let temporary = SQLNames.shortened("modelgen_new_" + name)
        plan.operations.append(.init(kind: "rebuildTable", entity: table.entity, detail: "rebuild table \(name) (its definition changes in a way ALTER TABLE cannot make)", safety: .safe))
        plan.statements.append(table.definition.createStatement(dialect: dialect, as: temporary))
        if !copies.isEmpty {
            if copies.map(\.expression) == previous.definition.columns.map({ q($0.name) }), copies.map(\.column) == table.definition.columns.map(\.name) {
                plan.wholeRowCopies[plan.statements.count] = .init(table: name, columns: previous.definition.columns.map(\.name), temporaryTable: temporary,
                                                                   sql: "INSERT INTO \(q(temporary)) SELECT * FROM \(q(name));")
            }
            plan.statements.append("INSERT INTO \(q(temporary)) (\(copies.map { q($0.column) }.joined(separator: ", "))) SELECT \(copies.map(\.expression).joined(separator: ", ")) FROM \(q(name));")
        }
        plan.statements.append("DROP TABLE \(q(name));")
        plan.statements.append("ALTER TABLE \(q(temporary)) RENAME TO \(q(name));")
        plan.checkedTables.append(name)
        // Tables that refer to the rebuilt one must keep every row (a DROP that fired ON DELETE would not).
        for referring in new.foreignKeys where referring.targetTable == name && referring.table != name {
            countTable(referring.table, namesBefore: namesBefore, in: &plan)
        }
        for joinTable in new.joinTables where joinTable.table == name || joinTable.targetTable == name {
            countTable(joinTable.name, namesBefore: namesBefore, in: &plan)
        }
    }

    /// Counts the rows of the table the new schema names `table`, before the migration under its
    /// name then, and after; not a table the migration creates (it has no rows to keep).
    private func countTable(_ table: String, namesBefore: [String: String], in plan: inout MigrationPlan) {
        guard !plan.countedTables.contains(where: { $0.after == table }), let before = namesBefore[table] else { return }
        plan.countedTables.append(.init(before: before, after: table))
    }

    /// A compound unique constraint as the DDL writes it among a table's constraints: `UNIQUE ("a", "b")`.
    func uniqueConstraint(_ columns: [String]) -> String {
        "UNIQUE (\(columns.map(dialect.quote).joined(separator: ", ")))"
    }

    /// The old entity's compound unique constraints as the new table writes them, their columns
    /// under their new names (a constraint whose columns are only renamed is carried, not new).
    func carriedUniqueConstraints(of oldEntity: Entity?, from previous: Table, in table: Table) -> Set<String> {
        Set((oldEntity?.uniqueConstraints ?? []).map { uniqueConstraint(renamedColumns($0, from: previous, in: table)) })
    }

    /// `columns` of the old table under the names the new table gives them (a column the new
    /// table has not keeps its name).
    func renamedColumns(_ columns: [String], from previous: Table, in table: Table) -> [String] {
        columns.map { column in table.definition.columns.first { table.columnKeys[$0.name] == previous.columnKeys[column] }?.name ?? column }
    }

    /// A column `ALTER TABLE … ADD COLUMN` can add: no UNIQUE, NULL or a default for existing rows,
    /// and a default written as a constant (SQLite refuses an expression in parentheses, which is how
    /// a fractional `Double` is written: `SQLDialect.sqliteReal`) that the rows it was added to read
    /// as the rows written later do: SQLite reads a whole-number default of an untyped column
    /// (`Double`, `Float`, `Date`) in the rows that were already there as an integer, `-0.0` as 0.
    private func columnIsAddable(_ column: String, in table: Table, entity: Entity?) -> Bool {
        guard let entity else { return false }
        if let attribute = entity.storedAttributes.first(where: { $0.columnName == column }) {
            let isConstant = attribute.defaultValue.map { !SQLDialect.sqlite.literal($0).hasPrefix("(") } ?? true
            let isFloatingPoint = if case let .scalar(type) = attribute.type { type.isFloatingPoint } else { false }
            return !attribute.isUnique && (attribute.isOptional || attribute.defaultValue != nil) && isConstant && !(isFloatingPoint && attribute.defaultValue != nil)
        }
        if let relationship = entity.relationships.first(where: { if case let .foreignKey(key, _) = $0.storage { return key == column } else { return false } }),
           case let .foreignKey(_, isUnique) = relationship.storage {
            return !isUnique && !relationship.isRequired
        }
        return false
    }

    private func planAddedColumn(_ column: String, in table: Table, originalTable: String, entity: Entity?, into plan: inout MigrationPlan) {
        guard let entity else { return }
        let q = dialect.quote
        if let attribute = entity.storedAttributes.first(where: { $0.columnName == column }) {
            plan.operations.append(.init(kind: "addAttribute", entity: entity.name, element: attribute.name, detail: "add column \(column) to \(table.definition.name)",
                                         safety: attribute.isOptional || attribute.defaultValue != nil ? .safe : .dataDependent))
            if !attribute.isOptional, attribute.defaultValue == nil {
                plan.checks.append(.init(kind: .refusal, entity: entity.name, element: attribute.name,
                                         message: "existing \(entity.name) objects, which would have no value for the new required attribute \(attribute.name) (give it a default)",
                                         countSQL: "SELECT count(*) FROM \(q(originalTable))"))
            }
        } else if let relationship = entity.relationships.first(where: { if case let .foreignKey(key, _) = $0.storage { return key == column } else { return false } }) {
            plan.operations.append(.init(kind: "addRelationship", entity: entity.name, element: relationship.name, detail: "add column \(column) to \(table.definition.name)",
                                         safety: relationship.isRequired ? .dataDependent : .safe))
            if relationship.isRequired {
                plan.checks.append(.init(kind: .refusal, entity: entity.name, element: relationship.name,
                                         message: "existing \(entity.name) objects, which would have no \(relationship.name) for the new required relationship",
                                         countSQL: "SELECT count(*) FROM \(q(originalTable))"))
            }
        }
    }

    /// The expression copying an attribute's old column into its new one, and the checks its change needs.
    private func planChangedAttribute(_ attribute: Attribute, from oldAttribute: Attribute, source: String, table: String, entity: String, into plan: inout MigrationPlan) -> String {
        let q = dialect.quote
        var expression = source
        if attribute.type != oldAttribute.type {
            let change = "\(attribute.name) changes type from \(oldAttribute.type.name) to \(attribute.type.name)"
            let unconverted = "values of \(attribute.name) that do not convert from \(oldAttribute.type.name) to \(attribute.type.name)"
            // The values refused (a condition added to `IS NOT NULL`), and how the refusal says so.
            let refusal: (condition: String, message: String)?
            switch conversion(from: oldAttribute.type, to: attribute.type, source: source) {
            case let .exact(converted, check):
                expression = converted
                refusal = check.map { (" AND NOT (\($0))", unconverted + " exactly") }
            case .nothingConverts:
                // Only NULLs carry over: a column holding a value is refused, counted and named.
                expression = "NULL"
                refusal = ("", unconverted + ", which have no exact conversion "
                           + "(add a new attribute, copy the values in code, then remove this one; or, if it is optional, set them to nil first)")
            }
            plan.operations.append(.init(kind: "changeAttribute", entity: entity, element: attribute.name, detail: change, safety: refusal == nil ? .safe : .dataDependent))
            if let refusal {
                let refused = "FROM \(q(table)) WHERE \(source) IS NOT NULL\(refusal.condition)"
                plan.checks.append(.init(kind: .refusal, entity: entity, element: attribute.name, message: refusal.message,
                                         countSQL: "SELECT count(*) \(refused)",
                                         exampleSQL: "SELECT \(quotedValue(source)) \(refused) ORDER BY \(source) LIMIT 1"))
            }
        }
        // A store an earlier ModelGen made kept a `Decimal` default as spelled (`12.50`), and so do
        // the rows it filled; the app stores the shortest digits, which a unique index compares.
        if dialect == .sqlite, attribute.type == .scalar(.decimal), oldAttribute.type == .scalar(.decimal),
           case let .decimal(text)? = oldAttribute.defaultValue, DefaultValue.decimalDigits(text) != text {
            expression = "\(SQLNames.sqliteDecimalTextFunction)(\(expression))"
            plan.operations.append(.init(kind: "changeAttribute", entity: entity, element: attribute.name,
                                         detail: "\(attribute.name) is written in its shortest digits (its old default was spelled \(text))", safety: .safe))
        }
        if oldAttribute.isOptional, !attribute.isOptional {
            if let value = attribute.defaultValue {
                expression = "coalesce(\(expression), \(dialect.literal(value)))"
                plan.operations.append(.init(kind: "changeAttribute", entity: entity, element: attribute.name, detail: "\(attribute.name) becomes required; NULLs become its default", safety: .safe))
            } else {
                plan.operations.append(.init(kind: "changeAttribute", entity: entity, element: attribute.name, detail: "\(attribute.name) becomes required", safety: .dataDependent))
                plan.checks.append(.init(kind: .refusal, entity: entity, element: attribute.name,
                                         message: "\(entity) objects whose \(attribute.name) is nil, which becomes required (give it a default)",
                                         countSQL: "SELECT count(*) FROM \(q(table)) WHERE \(source) IS NULL"))
            }
        }
        if attribute.isUnique, !oldAttribute.isUnique {
            plan.operations.append(.init(kind: "changeAttribute", entity: entity, element: attribute.name, detail: "\(attribute.name) becomes unique", safety: .dataDependent))
        }
        return expression
    }

    /// Refuses when rows share the values of `expressions` (named `names` in the report).
    private func duplicateCheck(table: String, expressions: [String], names: [String], entity: String, element: String, why: String) -> MigrationPlan.Check {
        let list = expressions.joined(separator: ", ")
        let notNull = expressions.map { "\($0) IS NOT NULL" }.joined(separator: " AND ")
        let groups = "FROM \(dialect.quote(table)) WHERE \(notNull) GROUP BY \(list) HAVING count(*) > 1"
        // The first group in the columns' order, by its values: code = 'a', n = 1 in 2 objects.
        let values = zip(names, expressions).map { "\(dialect.literal($0.0 + " = ")) || \(quotedValue($0.1))" }.joined(separator: " || ', ' || ")
        return .init(kind: .refusal, entity: entity, element: element,
                     message: "groups of \(entity) objects sharing a value of \(element), \(why)",
                     countSQL: "SELECT count(*) FROM (SELECT 1 \(groups)) AS duplicate_groups",
                     exampleSQL: "SELECT \(values) || ' in ' || CAST(count(*) AS text) || ' objects' \(groups) ORDER BY \(list) LIMIT 1")
    }

    /// A value as an SQL literal, for a report (`'it''s'`, `7`): SQLite's `quote`; PostgreSQL's
    /// `quote_nullable` of its text.
    func quotedValue(_ expression: String) -> String {
        dialect == .sqlite ? "quote(\(expression))" : "quote_nullable(CAST(\(expression) AS text))"
    }

    /// An element removed and another of the same kind and type added to the same entity, with
    /// no `originalName` linking them: most likely a rename the schema forgot to declare.
    private func undeclaredRenames(in plan: MigrationPlan) -> [MigrationPlan.Warning] {
        var warnings: [MigrationPlan.Warning] = []
        for entity in new.entities {
            guard let oldEntity = old.entities.first(where: { entityNames[$0.name] == entity.name }) else { continue }
            let removed = oldEntity.storedAttributes.filter { newMemberName(oldEntity.name, $0.name) == nil }
            for attribute in entity.storedAttributes where !oldEntity.attributes.contains(where: { newMemberName(oldEntity.name, $0.name) == attribute.name }) {
                for candidate in removed where candidate.type == attribute.type {
                    warnings.append(.init(entity: entity.name, element: attribute.name,
                                          message: "'\(entity.name).\(attribute.name)' is added and '\(candidate.name)' removed, both \(attribute.type.name): if this is a rename, did you mean 'originalName: \(candidate.name)'? Otherwise the values of '\(candidate.name)' are lost"))
                }
            }
            let removedRelationships = oldEntity.relationships.filter { newMemberName(oldEntity.name, $0.name) == nil }
            for relationship in entity.relationships where !oldEntity.relationships.contains(where: { newMemberName(oldEntity.name, $0.name) == relationship.name }) {
                for candidate in removedRelationships where entityNames[candidate.target] == relationship.target && candidate.cardinality == relationship.cardinality {
                    warnings.append(.init(entity: entity.name, element: relationship.name,
                                          message: "'\(entity.name).\(relationship.name)' is added and '\(candidate.name)' removed, both to \(relationship.target): if this is a rename, did you mean 'originalName: \(candidate.name)'? Otherwise the links of '\(candidate.name)' are lost"))
                }
            }
        }
        let removedEntities = old.entities.filter { entityNames[$0.name] == nil }
        for entity in new.entities where !entityNames.values.contains(entity.name) {
            for candidate in removedEntities where candidate.storedAttributes.map(\.type) == entity.storedAttributes.map(\.type) {
                warnings.append(.init(entity: entity.name,
                                      message: "entity '\(entity.name)' is added and '\(candidate.name)' removed, with attributes of the same types: if this is a rename, did you mean 'originalName: \(candidate.name)'?"))
            }
        }
        return warnings
    }

    /// The cases of an enum attribute renamed between the versions (`originalName` on a case):
    /// the old raw value and the new one.
    func caseRenames(_ type: AttributeType, from oldType: AttributeType) -> [(from: String, to: String)] {
        continuedCases(type, from: oldType).filter { $0.from != $0.to }
    }

    /// Each old case of an enum attribute that a new case continues (`Lineage`: by name or
    /// `originalName`), with that new case.
    private func continuedCases(_ type: AttributeType, from oldType: AttributeType) -> [(from: String, to: String)] {
        guard case let .enumeration(name) = type, case let .enumeration(oldName) = oldType,
              let enumeration = new.enums.first(where: { $0.name == name }),
              let oldEnumeration = old.enums.first(where: { $0.name == oldName }) else { return [] }
        let matches = Lineage.match(old: Lineage.Element.cases(of: oldEnumeration), new: Lineage.Element.cases(of: enumeration)).continued
        return zip(enumeration.cases, matches).compactMap { newCase, match in match.map { (oldEnumeration.cases[$0], newCase) } }
    }

    /// `CASE column WHEN 'old' THEN 'new' … ELSE column END`, or the column itself.
    func renamingCases(_ source: String, _ renames: [(from: String, to: String)]) -> String {
        guard !renames.isEmpty else { return source }
        return "CASE \(source) " + renames.map { "WHEN \(dialect.literal($0.from)) THEN \(dialect.literal($0.to))" }.joined(separator: " ") + " ELSE \(source) END"
    }

    /// Rows that use an enum case the new version removes.
    private func planEnumCases(into plan: inout MigrationPlan) {
        let q = dialect.quote
        for entity in new.entities {
            guard let oldEntity = old.entities.first(where: { entityNames[$0.name] == entity.name }) else { continue }
            for attribute in entity.storedAttributes {
                guard case let .enumeration(name) = attribute.type,
                      let oldAttribute = oldEntity.storedAttributes.first(where: { newMemberName(oldEntity.name, $0.name) == attribute.name }),
                      // Another enumeration is a type change, whose conversion counts the values not among its cases.
                      case let .enumeration(oldName) = oldAttribute.type, oldName == name,
                      let oldCases = old.enums.first(where: { $0.name == oldName })?.cases else { continue }
                let continued = Set(continuedCases(attribute.type, from: oldAttribute.type).map(\.from))
                let removed = oldCases.filter { !continued.contains($0) }
                guard !removed.isEmpty else { continue }
                plan.operations.append(.init(kind: "changeAttribute", entity: entity.name, element: attribute.name, detail: "the cases \(removed.joined(separator: ", ")) of \(name) are removed", safety: .dataDependent))
                plan.checks.append(.init(kind: .refusal, entity: entity.name, element: attribute.name,
                                         message: "\(entity.name) objects whose \(attribute.name) is a removed case (\(removed.joined(separator: ", ")))",
                                         countSQL: "SELECT count(*) FROM \(q(oldEntity.tableName)) WHERE \(q(oldAttribute.columnName)) IN (\(removed.map(dialect.literal).joined(separator: ", ")))"))
            }
        }
    }

    /// How a stored value of one type becomes one of the other, in the planner's dialect.
    enum Conversion {
        /// An expression on `source` and, when not every value converts, a condition true for
        /// those that do (a refusal counts the others).
        case exact(String, check: String?)
        /// No value converts: Swift has no exact conversion between the types, or none that SQL
        /// repeats exactly on both backends (`Int` → `Date`, `String` → `Decimal`). SPEC §6
        /// refuses a change while values do not convert, so only a column holding nothing but
        /// NULLs (or a table without rows) changes type.
        case nothingConverts
    }

    /// The values an integer type holds.
    private static func range(of type: ScalarType) -> ClosedRange<Int64> {
        switch type {
        case .int16: Int64(Int16.min)...Int64(Int16.max)
        case .int32: Int64(Int32.min)...Int64(Int32.max)
        default: Int64.min...Int64.max
        }
    }

    func conversion(from oldType: AttributeType, to newType: AttributeType, source: String) -> Conversion {
        let integers: [ScalarType] = [.int16, .int32, .int, .int64]
        switch (oldType, newType) {
        case let (.scalar(from), .scalar(to)) where integers.contains(from) && integers.contains(to):
            let range = Self.range(of: to)
            let narrows = (integers.firstIndex(of: to) ?? 0) < (integers.firstIndex(of: from) ?? 0) && range.lowerBound != Int64.min
            return .exact(source, check: narrows ? "\(source) BETWEEN \(range.lowerBound) AND \(range.upperBound)" : nil)
        case (.scalar(.float), .scalar(.double)):
            return .exact(source, check: nil)
        case let (.scalar(from), .scalar(.double)) where integers.contains(from):
            // Exact when the Double holds the integer itself: every integer up to 2^53, and above
            // that those that are multiples of a power of two (2^60, Int64.min). Int64.max becomes
            // 2^63, which SQLite casts back to Int64.max and PostgreSQL cannot cast back at all.
            if dialect == .sqlite {
                return .exact("CAST(\(source) AS REAL)", check: "\(source) <> 9223372036854775807 AND CAST(CAST(\(source) AS REAL) AS INTEGER) = \(source)")
            }
            return .exact("CAST(\(source) AS double precision)",
                          check: "CASE WHEN CAST(\(source) AS double precision) >= 9223372036854775807 THEN false ELSE CAST(CAST(\(source) AS double precision) AS bigint) = \(source) END")
        case let (.scalar(from), .scalar(.string)) where integers.contains(from):
            return .exact("CAST(\(source) AS TEXT)", check: nil)
        case let (.scalar(from), .scalar(to)) where [.double, .float].contains(from) && integers.contains(to):
            return integer(fromFloatingPoint: source, in: Self.range(of: to))
        case let (.scalar(from), .scalar(.decimal)) where integers.contains(from):
            // A Decimal holds 38 digits, an Int64 19: every integer, written as Decimal writes it.
            return .exact(dialect == .sqlite ? "CAST(\(source) AS TEXT)" : "CAST(\(source) AS numeric)", check: nil)
        case (.scalar(.double), .scalar(.string)):
            return .exact(description(ofFloatingPoint: source, double: true), check: nil)
        case (.scalar(.float), .scalar(.string)):
            return .exact(description(ofFloatingPoint: source, double: false), check: nil)
        case (.scalar(.decimal), .scalar(.string)):
            // As Swift's description writes it (`12.5`). SQLite holds the text another program may
            // have written (`12.50`, `007.5`, `1e3`): the runtime's function gives its shortest digits.
            // PostgreSQL writes a numeric's scale (`12.50`), never an exponent or a leading zero.
            guard dialect == .postgresql else { return .exact("\(SQLNames.sqliteDecimalTextFunction)(\(source))", check: nil) }
            let text = "CAST(\(source) AS text)"
            return .exact("CASE WHEN strpos(\(text), '.') > 0 THEN rtrim(rtrim(\(text), '0'), '.') ELSE \(text) END", check: nil)
        case (.scalar(.uuid), .scalar(.string)):
            // `uuidString`: upper case (PostgreSQL writes a uuid in lower case).
            return .exact(dialect == .sqlite ? "upper(\(source))" : "upper(CAST(\(source) AS text))", check: nil)
        case (.enumeration, .scalar(.string)), (.scalar(.url), .scalar(.string)):
            return .exact(source, check: nil)
        case let (.scalar(.string), .enumeration(name)):
            let cases = new.enums.first { $0.name == name }?.cases ?? []
            return .exact(source, check: "\(source) IN (\(cases.map(dialect.literal).joined(separator: ", ")))")
        case let (.scalar(.string), .scalar(to)) where integers.contains(to):
            // Exact when the text is the integer's own spelling ("7", not "007" or "7.0"), in range.
            let range = Self.range(of: to)
            if dialect == .sqlite {
                return .exact("CAST(\(source) AS INTEGER)", check: "CAST(CAST(\(source) AS INTEGER) AS TEXT) = \(source) AND CAST(\(source) AS INTEGER) BETWEEN \(range.lowerBound) AND \(range.upperBound)")
            }
            // PostgreSQL raises on a cast of text that is no integer, or one out of bigint's range:
            // the text is tested first, and compared as a numeric (which holds any such spelling).
            return .exact("CAST(\(source) AS bigint)",
                          check: "CASE WHEN \(source) ~ '^(0|-?[1-9][0-9]{0,18})$' THEN CAST(\(source) AS numeric) BETWEEN \(range.lowerBound) AND \(range.upperBound) ELSE false END")
        case let (.enumeration, .enumeration(to)):
            let cases = new.enums.first { $0.name == to }?.cases ?? []
            return .exact(source, check: "\(source) IN (\(cases.map(dialect.literal).joined(separator: ", ")))")
        case let (.scalar(.string), .scalar(to)) where to == .double || to == .float:
            // `Double(text)`, `Float(text)` for the decimal spellings (`SQLNames.textDoubleFunction`).
            let function = to == .double ? SQLNames.textDoubleFunction : SQLNames.textFloatFunction
            let call = dialect == .sqlite ? "\(function)(\(source))" : "pg_temp.\(function)(\(source))"
            return .exact(call, check: "\(call) IS NOT NULL")
        case let (.scalar(from), .scalar(.float)) where integers.contains(from) || from == .double:
            return float(fromNumber: source, isInteger: from != .double)
        case (.scalar(.bool), .scalar(.string)):
            // `String(flag)`: `true` or `false`.
            return .exact("CASE \(source) WHEN \(dialect.literal(.bool(true))) THEN 'true' WHEN \(dialect.literal(.bool(false))) THEN 'false' END", check: nil)
        case (.scalar(.string), .scalar(.bool)):
            // `Bool(text)`: exactly `true` or `false`.
            return .exact("CASE \(source) WHEN 'true' THEN \(dialect.literal(.bool(true))) WHEN 'false' THEN \(dialect.literal(.bool(false))) END", check: "\(source) IN ('true', 'false')")
        case (.scalar(.string), .scalar(.uuid)):
            // `UUID(uuidString:)`: 32 hexadecimal digits in groups of 8-4-4-4-12, in either case,
            // stored as `uuidString` writes them (upper case; PostgreSQL's uuid has no case).
            if dialect == .sqlite {
                let pattern = [8, 4, 4, 4, 12].map { String(repeating: "[0-9A-Fa-f]", count: $0) }.joined(separator: "-")
                return .exact("upper(\(source))", check: "\(source) GLOB '\(pattern)'")
            }
            return .exact("CAST(\(source) AS uuid)", check: "\(source) ~ '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$'")
        default:
            return .nothingConverts
        }
    }

    /// The integer a `Double` or `Float` in `source` holds, when it holds one in `range`: integral,
    /// and inside the range (whose ends, as floating-point literals, are exact; 2⁶³ is just past
    /// `Int64`). Infinities and NaN are not integers.
    private func integer(fromFloatingPoint source: String, in range: ClosedRange<Int64>) -> Conversion {
        let (lower, upper) = (range.lowerBound == Int64.min ? "-9223372036854775808.0" : "\(range.lowerBound)", range.upperBound == Int64.max ? "9223372036854775808.0" : "\(range.upperBound + 1)")
        if dialect == .sqlite {
            return .exact("CAST(\(source) AS INTEGER)", check: "\(source) >= \(lower) AND \(source) < \(upper) AND CAST(\(source) AS INTEGER) = \(source)")
        }
        return .exact("CAST(\(source) AS bigint)", check: "\(source) >= CAST(\(lower) AS double precision) AND \(source) < CAST(\(upper) AS double precision) AND \(source) = trunc(\(source))")
    }

    /// The `Float` an integer or a `Double` in `source` is, when it is exactly one (`Float(exactly:)`:
    /// `16777217` and `0.1` are not; infinities are). SQLite calls a function the runtime registers
    /// (`SQLNames.sqliteExactFloatFunction`). PostgreSQL's `real` rounds as Swift's `Float` does, and
    /// the value must come back unchanged; the range is tested first, since a cast of a number
    /// beyond `real`'s range (or to zero from one that is not) raises, as does a `real` of 2⁶³ cast
    /// back to `bigint`.
    private func float(fromNumber source: String, isInteger: Bool) -> Conversion {
        if dialect == .sqlite {
            let exact = "\(SQLNames.sqliteExactFloatFunction)(\(source))"
            return .exact(exact, check: "\(exact) IS NOT NULL")
        }
        let float = "CAST(\(source) AS real)"
        if isInteger {
            return .exact(float, check: "CASE WHEN \(float) >= CAST(9223372036854775808.0 AS double precision) THEN false ELSE CAST(\(float) AS bigint) = \(source) END")
        }
        let outOfRange = "abs(\(source)) > CAST(3.4028234663852886e38 AS double precision) OR (\(source) <> 0 AND abs(\(source)) < CAST(1.401298464324817e-45 AS double precision))"
        return .exact(float, check: "CASE WHEN \(source) IN ('Infinity', '-Infinity') THEN true WHEN \(outOfRange) THEN false ELSE CAST(\(float) AS double precision) = \(source) END")
    }

    /// Swift's `description` of the `Double` (`double: true`) or `Float` in `source`, through a
    /// function the runtime registers on SQLite and the migration creates on PostgreSQL
    /// (`FloatingPointText`).
    private func description(ofFloatingPoint source: String, double: Bool) -> String {
        let function = FloatingPointText.functionName(double: double)
        return dialect == .postgresql ? "pg_temp.\(function)(\(source))" : "\(function)(\(source))"
    }
}

extension AttributeType {
    /// The type as the schema writes it.
    public var name: String {
        switch self {
        case let .scalar(scalar): return scalar.rawValue
        case let .enumeration(name): return name
        }
    }
}
