/// The bounds a schema puts on a to-many relationship (`minimumModelCount`, `maximumModelCount`),
/// checked as SwiftData checks them: by a save, for the objects whose members it may change. Both
/// backends run the same checks in the save's transaction, after every row is written and every
/// deletion run, and before the commit; a violation throws
/// `ModelContextError.modelCountViolation` and nothing is saved. Saves on SQLite take turns (one
/// writer at a time); on PostgreSQL the objects are locked before they are counted (`lockSQL`).
///
/// The objects checked are those the save inserts or changes that hold a bounded relationship,
/// and the owners the save's objects join or leave: the keys (as they are and as they were) of
/// objects inserted or deleted on the other side, or changed there in that key; the members of
/// their join-table lists (all when inserted, as they are and were when changed); and the owners
/// of the join rows a deleted object takes with it. An object only renamed on the other side
/// leaves its owners unchecked. The count is read from the store, so a list that was never
/// loaded is counted too:
///
///     SELECT o.id, (SELECT count(*) FROM "player" AS m WHERE m."team_id" = o.id) FROM "team" AS o WHERE o.id IN …
///
/// Rows a cascade removes beyond the objects the app deleted are not counted against their other
/// owners (SwiftData's batch delete, `delete(model:where:)`, runs no validation either).
@_spi(Backend) public struct ModelCountCheck {
    /// The entity holding the bounded relationship.
    public let entity: EntityDescription
    /// The relationship's index in `entity.relationships`.
    public let relationship: Int
    /// The objects to count, by row id.
    public private(set) var ids: Set<Int64> = []
    /// For a relationship stored in a join table: the deleted objects of its target, whose join
    /// rows go with them; their owners are read before the deletion (`leavingOwnersSQL`).
    public private(set) var deletedMembers: [Int64] = []
    /// The table holding the members' references (quoted for SQLite), and its columns: the
    /// owner's and, for a join table, the member's.
    private let memberTable: String, ownerColumn: String, memberColumn: String?

    private var description: RelationshipDescription { entity.relationships[relationship] }

    private init?(entity: EntityDescription, relationship: Int, entities: [String: EntityDescription]) {
        self.entity = entity
        self.relationship = relationship
        let description = entity.relationships[relationship]
        switch description.storage {
        case let .inverseColumn(column):
            guard let target = entities[description.target] else { return nil }
            (memberTable, ownerColumn, memberColumn) = (target.table, column, nil)
        case let .joinTable(table, ownColumn, targetColumn):
            (memberTable, ownerColumn, memberColumn) = (table, ownColumn, targetColumn)
        case .column:
            return nil
        }
    }

    /// Owners that lost rows of a join table in ways the objects do not show (lists replaced
    /// without being read, on PostgreSQL): the table as the relationships' storage names it, the
    /// column holding the owners' ids, and those ids.
    public struct OwnersLeavingJoinRows {
        public var table: String
        public var column: String
        public var owners: [Int64]

        public init(table: String, column: String, owners: [Int64]) {
            (self.table, self.column, self.owners) = (table, column, owners)
        }
    }

    /// The checks a save of these changes needs, in the order of `entities` (the schema's) and
    /// of their relationships; none when the schema bounds no relationship. Objects inserted
    /// must have their row ids; `leavingJoinRows` are counted too.
    public static func checks(inserted: [any PersistentModel], changed: [any PersistentModel], deleted: [any PersistentModel],
                              entities: [EntityDescription],
                              leavingJoinRows: [OwnersLeavingJoinRows] = []) -> [ModelCountCheck] {
        let bounded = entities.flatMap { entity in entity.relationships.indices.filter { entity.relationships[$0].isBounded }.map { (entity, $0) } }
        guard !bounded.isEmpty else { return [] }
        let byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var checks = bounded.compactMap { ModelCountCheck(entity: $0.0, relationship: $0.1, entities: byName) }
        func position(_ entity: EntityDescription, _ relationship: Int) -> Int? {
            checks.firstIndex { $0.entity === entity && $0.relationship == relationship }
        }
        let deletedIdentities = Set(deleted.map(ObjectIdentifier.init))
        let insertedIdentities = Set(inserted.map(ObjectIdentifier.init))
        for object in inserted + changed + deleted {
            let backing = object.persistentBackingData
            let entity = backing.entity
            let isDeleted = deletedIdentities.contains(ObjectIdentifier(object))
            // An object inserted or changed is checked whole, as SwiftData validates it.
            if !isDeleted, let id = backing.id {
                for (index, check) in checks.enumerated() where check.entity === entity { checks[index].ids.insert(id) }
            }
            // The owners this object joins or leaves on the other side of its relationships: all
            // of them when it is inserted or deleted, those of a link it changed otherwise.
            let isNewOrGone = isDeleted || insertedIdentities.contains(ObjectIdentifier(object))
            for (index, relationship) in entity.relationships.enumerated() {
                guard let inverse = relationship.inverse, let owner = byName[relationship.target],
                      let ownerIndex = owner.relationshipIndex(named: inverse),
                      let checkIndex = position(owner, ownerIndex) else { continue }
                switch relationship.storage {
                case .column:
                    let (now, saved) = (backing.foreignID(index), backing.savedForeignID(index))
                    guard isNewOrGone || now != saved else { continue }
                    for id in [now, saved].compactMap({ $0 }) { checks[checkIndex].ids.insert(id) }
                case .joinTable:
                    guard case let .toMany(list) = backing.relationship(index), isNewOrGone || list.membersChanged else { continue }
                    for member in list.objects + list.savedMembers {
                        if let id = member.persistentBackingData.id { checks[checkIndex].ids.insert(id) }
                    }
                case .inverseColumn:
                    continue
                }
            }
        }
        for index in checks.indices where checks[index].memberColumn != nil {
            for rows in leavingJoinRows where checks[index].memberTable == rows.table && checks[index].ownerColumn == rows.column {
                checks[index].ids.formUnion(rows.owners)
            }
            let target = checks[index].description.target
            checks[index].deletedMembers = deleted.compactMap { object in
                let backing = object.persistentBackingData
                return backing.entity.name == target ? backing.id : nil
            }
        }
        return checks.filter { !$0.ids.isEmpty || !$0.deletedMembers.isEmpty }
    }

    /// The owners whose join rows the deleted members take with them, to be read before the
    /// deletion (nil when there are none): `ids` is where the ids go, as the backend binds a list
    /// (`IN (SELECT value FROM json_each(?))`, `= ANY($1::bigint[])`); `quote` requotes a name
    /// quoted for SQLite.
    ///
    ///     SELECT DISTINCT m."team_id" FROM "team_coach" AS m WHERE m."coach_id" IN …
    public func leavingOwnersSQL(ids: String, quote: (String) -> String) -> String? {
        guard let memberColumn, !deletedMembers.isEmpty else { return nil }
        return "SELECT DISTINCT m.\(quote(ownerColumn)) FROM \(quote(memberTable)) AS m WHERE m.\(quote(memberColumn)) \(ids)"
    }

    /// Adds owners `leavingOwnersSQL` found.
    public mutating func addOwners(_ owners: [Int64]) {
        ids.formUnion(owners)
    }

    /// Locks the objects to count, in id order, before they are counted (PostgreSQL): a
    /// concurrent save that counts one of them then waits for this one to commit and counts what
    /// it wrote, where two saves adding the last allowed member each would both pass. `FOR NO KEY
    /// UPDATE` does not wait for the key-share locks the members' inserts hold on their owner.
    ///
    ///     SELECT 1 FROM "team" AS o WHERE o.id = ANY($1::bigint[]) ORDER BY o.id FOR NO KEY UPDATE
    public func lockSQL(ids: String, quote: (String) -> String) -> String {
        "SELECT 1 FROM \(quote(entity.table)) AS o WHERE o.id \(ids) ORDER BY o.id FOR NO KEY UPDATE"
    }

    /// Reads each object's count, once the save has written and deleted everything: rows of
    /// (id, count), for `ids` in id order.
    public func countSQL(ids: String, quote: (String) -> String) -> String {
        "SELECT o.id, (SELECT count(*) FROM \(quote(memberTable)) AS m WHERE m.\(quote(ownerColumn)) = o.id) FROM \(quote(entity.table)) AS o WHERE o.id \(ids) ORDER BY o.id"
    }

    /// The ids to bind to `countSQL`, in order.
    public var sortedIDs: [Int64] { ids.sorted() }

    /// The error for the first object whose count is out of bounds, if any (rows as `countSQL`
    /// reads them).
    public func violation(in counts: [(id: Int64, count: Int)]) -> ModelContextError? {
        let description = description
        for (id, count) in counts {
            if let minimum = description.minimumModelCount, count < minimum {
                return .modelCountViolation(entity: entity.name, id: id, relationship: description.name, count: count, minimum: minimum, maximum: description.maximumModelCount)
            }
            if let maximum = description.maximumModelCount, count > maximum {
                return .modelCountViolation(entity: entity.name, id: id, relationship: description.name, count: count, minimum: description.minimumModelCount, maximum: maximum)
            }
        }
        return nil
    }
}
