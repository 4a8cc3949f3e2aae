import ModelGenSchema

/// The unique values a save takes from rows its deletions may cascade to, for either backend.
///
/// `UniqueValuesSetAside` frees the values the save's own changed and deleted rows give up; a
/// row that goes only because a cascade reaches it (the seats of a stand the save deletes) is not
/// one of them, and a new row taking its value (the new stand's seat with the same code) would
/// collide with it before the deletion runs. So, when the save deletes objects, each stored row
/// outside the save that holds a unique value (or combination) one of the save's new or changed
/// rows takes, in an entity a cascade from the deleted objects' entities can reach, is found and
/// set aside before anything is written; once the deletions have run, any of those rows still
/// there is a real collision, and the save is refused as the constraint would have refused it.
///
/// This type says what to look for: per unique constraint, the values the save takes. A backend
/// finds the rows holding them, sets them aside (`UniqueVacancy`) and checks after the deletions.
@_spi(Backend) public struct UniqueValuesOfCascadedRows {
    /// One unique constraint of one entity, and what the save takes in it.
    @_spi(Backend) public struct Constraint {
        @_spi(Backend) public var entity: EntityDescription
        /// Its columns, as the entity's description names them (quoted where the name needs it).
        @_spi(Backend) public var columns: [String]
        /// The column a found row sets aside (the first of `columns` that can be), and how.
        @_spi(Backend) public var setAside: String
        @_spi(Backend) public var vacancy: UniqueVacancy
        /// The values the save's new and changed rows take, one per column (none with a NULL,
        /// which never collides), each combination once.
        @_spi(Backend) public var taken: [[SQLiteValue]]
        /// The rows that give up their values in the constraint in this save, which
        /// `UniqueValuesSetAside` handles: those of the objects it deletes, and of those whose
        /// values in the constraint change. A row found among them is not set aside here (a
        /// changed object that keeps its values is: a cascade may remove its row too).
        @_spi(Backend) public var ownIDs: Set<Int64>
        /// The properties the constraint covers, as a refusal names them (`code`, `aisle, place`).
        @_spi(Backend) public var properties: String

        /// The values the save takes in the column set aside (which a vacancy must not be).
        @_spi(Backend) public var takenInSetAside: [SQLiteValue] {
            let position = columns.firstIndex(of: setAside)!
            return taken.map { $0[position] }
        }
    }

    /// In a fixed order: entities by name, then the schema's order of constraints.
    @_spi(Backend) public private(set) var constraints: [Constraint] = []

    /// What to look for in a save of `inserted`, `changed` and `deleted` objects of `entities`;
    /// `unique` gives an entity's unique constraints (unquoted column names, as
    /// `Entity.uniqueColumnGroups`) and the columns that can be set aside (`Entity.uniqueVacancies`).
    @_spi(Backend) public init(inserted: [any PersistentModel], changed: [any PersistentModel], deleted: [any PersistentModel],
                               entities: [EntityDescription],
                               unique: (EntityDescription) -> (groups: [[String]], vacancies: [String: UniqueVacancy])) {
        guard !deleted.isEmpty else { return }
        let byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        // The entities a cascade from the deleted objects' entities can reach.
        var reached: Set<String> = [], queue = Set(deleted.map { $0.persistentBackingData.entity.name }).sorted()
        while let name = queue.popLast() {
            for relationship in byName[name]?.relationships ?? [] where relationship.deleteRule == "cascade" && !reached.contains(relationship.target) {
                reached.insert(relationship.target)
                queue.append(relationship.target)
            }
        }
        var takers: [String: [ModelBackingData]] = [:], deletedIDs: [String: Set<Int64>] = [:]
        for object in inserted + changed {
            let backing = object.persistentBackingData
            guard reached.contains(backing.entity.name), !backing.isMarkedDeleted else { continue }
            takers[backing.entity.name, default: []].append(backing)
        }
        for object in deleted {
            let backing = object.persistentBackingData
            if let id = backing.id { deletedIDs[backing.entity.name, default: []].insert(id) }
        }
        for name in takers.keys.sorted() {
            let entity = byName[name]!, backings = takers[name]!
            let (groups, vacancies) = unique(entity)
            // Each column's slot in the values' layout (attributes, then keys).
            var slots: [String: (slot: Int, column: String, property: String)] = [:]
            for (index, attribute) in entity.attributes.enumerated() {
                if let column = attribute.column { slots[SQLDialect.unquoted(column)] = (index, column, attribute.name) }
            }
            for (position, key) in entity.foreignKeys.enumerated() {
                slots[SQLDialect.unquoted(key.column)] = (entity.attributes.count + position, key.column, entity.relationships[key.index].name)
            }
            for group in groups {
                guard let setAside = group.first(where: { vacancies[$0] != nil }), group.allSatisfy({ slots[$0] != nil }) else { continue }
                let members = group.map { slots[$0]! }
                var taken: Set<[SQLiteValue]> = [], own = deletedIDs[name] ?? []
                for backing in backings where backing.id == nil || members.contains(where: { backing.changes(slot: $0.slot) }) {
                    if let id = backing.id { own.insert(id) }
                    let values = members.map { backing.value(slot: $0.slot) }
                    if !values.contains(.null) { taken.insert(values) }
                }
                guard !taken.isEmpty else { continue }
                constraints.append(Constraint(entity: entity, columns: members.map(\.column), setAside: slots[setAside]!.column,
                                              vacancy: vacancies[setAside]!, taken: Array(taken), ownIDs: own,
                                              properties: members.map(\.property).joined(separator: ", ")))
            }
        }
    }
}
