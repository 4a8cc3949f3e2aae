import ModelGenQuery

/// Relationships whose links change storage between the versions: a key column becomes a join
/// table (a to-one turns to-many), a join table becomes a key column (a to-many turns to-one), a
/// one-to-one's key moves to the other side, a join table gains or loses its inverse.
///
/// The links are read before anything changes into a temporary table of (owner, target) pairs —
/// the owner being the row of the table that will hold them — and written into the new storage
/// from there, so the order in which tables are rebuilt or dropped does not matter. Checks refuse,
/// with counts, what the new storage cannot hold: more than one object for a new to-one, one
/// object shared by two for a new one-to-one, no object for a new required to-one.
extension MigrationPlanner {
    /// One relationship pair's links, moving from one storage to another.
    struct LinkMove {
        /// The temporary table holding the pairs: `owner_id`, `target_id`.
        var stagingTable: String
        /// The new relationship that owns the new storage, and its entity.
        var entity: String
        var relationship: String
        /// The storage before and after, as identities (`storageKey`).
        var oldStorage: String
        var newStorage: String
        /// Where the links go: a key column of an entity's table, or a join table.
        var destination: Destination
        /// `SELECT … AS owner_id, … AS target_id` on the database before the migration.
        var pairsSQL: String
        var description: String

        enum Destination: Equatable {
            case column(table: String, column: String)
            case joinTable(String)
        }
    }

    /// The identity of where a relationship pair's links are stored, in either version: the key
    /// column's (`key:Entity.relationship`) or the join table's (`join:…`), in the new names.
    func storageKey(of relationship: Relationship, old isOld: Bool) -> String? {
        let schema = isOld ? old : new
        switch relationship.storage {
        case .foreignKey:
            return "key:" + relationshipKey(relationship.entity, relationship.name, old: isOld)
        case .inverseForeignKey:
            guard let inverse = relationship.inverse else { return nil }
            return "key:" + relationshipKey(relationship.target, inverse, old: isOld)
        case let .joinTable(name):
            return schema.joinTable(named: name).map { joinKey($0, old: isOld) }
        }
    }

    /// Every pair whose storage moves, in schema order (key columns, then join tables).
    func linkMoves() -> [LinkMove] {
        var owners: [(relationship: Relationship, destination: LinkMove.Destination)] = []
        for foreignKey in new.foreignKeys {
            guard let relationship = new.relationship(foreignKey.entity, foreignKey.relationship) else { continue }
            owners.append((relationship, .column(table: foreignKey.table, column: foreignKey.column)))
        }
        for table in new.joinTables {
            guard let relationship = new.relationship(table.entity, table.relationship) else { continue }
            owners.append((relationship, .joinTable(table.name)))
        }
        var moves: [LinkMove] = []
        for (relationship, destination) in owners {
            guard let newStorage = storageKey(of: relationship, old: false),
                  let (previous, reversed) = oldCounterpart(of: relationship),
                  let oldStorage = storageKey(of: previous, old: true), oldStorage != newStorage,
                  let pairs = pairsSQL(of: previous) else { continue }
            let select = reversed ? "SELECT target_id AS owner_id, owner_id AS target_id FROM (\(pairs)) AS modelgen_links" : pairs
            let to = switch destination {
            case let .column(table, column): "column \(column) of \(table)"
            case let .joinTable(table): "join table \(table)"
            }
            moves.append(LinkMove(stagingTable: "modelgen_links_\(moves.count)", entity: relationship.entity, relationship: relationship.name,
                                  oldStorage: oldStorage, newStorage: newStorage, destination: destination, pairsSQL: select,
                                  description: "the links of \(relationship.entity).\(relationship.name) move from \(storageDescription(previous)) to \(to)"))
        }
        return moves
    }

    /// The old relationship that `relationship` (or, failing that, its inverse) continues, and
    /// whether it is the inverse (its pairs then read the other way round).
    private func oldCounterpart(of relationship: Relationship) -> (Relationship, reversed: Bool)? {
        func counterpart(_ entity: String, _ name: String) -> Relationship? {
            for oldEntity in old.entities where entityNames[oldEntity.name] == entity {
                return oldEntity.relationships.first { newMemberName(oldEntity.name, $0.name) == name }
            }
            return nil
        }
        if let previous = counterpart(relationship.entity, relationship.name) { return (previous, false) }
        if let inverse = relationship.inverse, let previous = counterpart(relationship.target, inverse) { return (previous, true) }
        return nil
    }

    /// Where an old relationship's links are, for the operation's description.
    private func storageDescription(_ relationship: Relationship) -> String {
        switch relationship.storage {
        case let .foreignKey(column, _):
            return "column \(column) of \(old.entity(named: relationship.entity)?.tableName ?? relationship.entity)"
        case .inverseForeignKey:
            guard let inverse = relationship.inverse.flatMap({ old.relationship(relationship.target, $0) }), case let .foreignKey(column, _) = inverse.storage else { return "" }
            return "column \(column) of \(old.entity(named: relationship.target)?.tableName ?? relationship.target)"
        case let .joinTable(name):
            return "join table \(name)"
        }
    }

    /// The old relationship's links as (owner_id, target_id): the id of its entity's row, the id of its target's.
    private func pairsSQL(of relationship: Relationship) -> String? {
        let q = SQLDialect.sqlite.quote
        switch relationship.storage {
        case let .foreignKey(column, _):
            guard let table = old.entity(named: relationship.entity)?.tableName else { return nil }
            return "SELECT id AS owner_id, \(q(column)) AS target_id FROM \(q(table)) WHERE \(q(column)) IS NOT NULL"
        case .inverseForeignKey:
            guard let inverse = relationship.inverse.flatMap({ old.relationship(relationship.target, $0) }), case let .foreignKey(column, _) = inverse.storage,
                  let table = old.entity(named: relationship.target)?.tableName else { return nil }
            return "SELECT \(q(column)) AS owner_id, id AS target_id FROM \(q(table)) WHERE \(q(column)) IS NOT NULL"
        case let .joinTable(name):
            guard let table = old.joinTable(named: name) else { return nil }
            let owns = table.entity == relationship.entity && table.relationship == relationship.name
            let (own, other) = owns ? (table.column, table.targetColumn) : (table.targetColumn, table.column)
            return "SELECT \(q(own)) AS owner_id, \(q(other)) AS target_id FROM \(q(name))"
        }
    }

    /// The checks a move needs (run on the database before the migration), its operation, and the
    /// statement that stages its pairs.
    func planLinkMove(_ move: LinkMove, into plan: inout MigrationPlan) {
        let q = SQLDialect.sqlite.quote
        var checks: [MigrationPlan.Check] = []
        if case .column = move.destination, let relationship = new.relationship(move.entity, move.relationship),
           let oldEntity = old.entities.first(where: { entityNames[$0.name] == move.entity }) {
            checks.append(.init(kind: .refusal, entity: move.entity, element: move.relationship,
                                message: "\(move.entity) objects with more than one \(move.relationship), which becomes a to-one relationship",
                                countSQL: "SELECT count(*) FROM (SELECT owner_id FROM (\(move.pairsSQL)) AS modelgen_links GROUP BY owner_id HAVING count(*) > 1) AS shared"))
            if case .foreignKey(_, isUnique: true) = relationship.storage {
                checks.append(.init(kind: .refusal, entity: move.entity, element: move.relationship,
                                    message: "\(relationship.target) objects that more than one \(move.entity) has as its \(move.relationship), which becomes one-to-one",
                                    countSQL: "SELECT count(*) FROM (SELECT target_id FROM (\(move.pairsSQL)) AS modelgen_links GROUP BY target_id HAVING count(*) > 1) AS shared"))
            }
            if relationship.isRequired {
                let table = q(oldEntity.tableName)
                checks.append(.init(kind: .refusal, entity: move.entity, element: move.relationship,
                                    message: "\(move.entity) objects with no \(move.relationship), which becomes a required to-one relationship",
                                    countSQL: "SELECT count(*) FROM \(table) WHERE NOT EXISTS (SELECT 1 FROM (\(move.pairsSQL)) AS modelgen_links WHERE modelgen_links.owner_id = \(table).id)"))
            }
        }
        plan.operations.append(.init(kind: "moveRelationship", entity: move.entity, element: move.relationship, detail: move.description,
                                     safety: checks.isEmpty ? .safe : .dataDependent))
        plan.checks += checks
    }

    /// The statement copying a move's pairs into its temporary table, indexed by owner.
    func stagingStatements(_ move: LinkMove, dialect: SQLDialect) -> [String] {
        let q = dialect.quote
        if dialect == .postgresql {
            return ["CREATE TEMPORARY TABLE \(q(move.stagingTable)) ON COMMIT DROP AS \(move.pairsSQL);"]
        }
        return ["CREATE TEMPORARY TABLE \(q(move.stagingTable)) AS \(move.pairsSQL);",
                "CREATE INDEX temp.\(q(move.stagingTable + "_owner")) ON \(q(move.stagingTable)) (owner_id);"]
    }

    /// The statement filling a new join table from a move's pairs.
    func fillingStatement(_ move: LinkMove, joinTable name: String, dialect: SQLDialect) -> String? {
        guard let table = new.joinTable(named: name) else { return nil }
        let q = dialect.quote
        return "INSERT INTO \(q(name)) (\(q(table.column)), \(q(table.targetColumn))) SELECT owner_id, target_id FROM \(q(move.stagingTable));"
    }
}
