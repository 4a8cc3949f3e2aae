import ModelGenSchema

/// The unique values a save sets aside before it writes anything, for either backend
/// (`UniqueVacancy`): in each unique column, the values that changed rows give up and deleted
/// rows hold, when the save's new rows or changed rows take one of them. Then no order of the
/// save's statements collides with a value the save itself gives up (two objects swapping names,
/// a new object taking a deleted one's name, a one-to-one partner replaced); every changed row
/// then gets its new value, and every deleted row goes. A save that takes no value it gives up
/// (most: new names, new objects) sets nothing aside.
@_spi(Backend) public struct UniqueValuesSetAside {
    /// One statement: the rows `ids` of `entity` set aside their value of `column`.
    @_spi(Backend) public struct Step {
        @_spi(Backend) public var entity: EntityDescription
        /// The column, as the entity's description names it (quoted where the name needs it).
        @_spi(Backend) public var column: String
        @_spi(Backend) public var vacancy: UniqueVacancy
        @_spi(Backend) public var ids: [Int64]
        /// The values the save's rows take in the column (which a vacancy must not be), in no order.
        @_spi(Backend) public var taken: [SQLiteValue]
    }

    /// In a fixed order: entities by name, columns by name, ids ascending.
    @_spi(Backend) public private(set) var steps: [Step] = []

    /// The steps for a save of `inserted`, `changed` and `deleted` objects, where `changedEntities`
    /// are the entities of the changed objects (`PendingChanges.changedEntities(among:)`); `vacancies`
    /// gives an entity's unique columns that can be set aside (unquoted names, as
    /// `Entity.uniqueVacancies`). The changed objects are looked at only when one of their entities
    /// has such a column: a save that changes prices reads no object here.
    @_spi(Backend) public init(inserted: [any PersistentModel], changed: [any PersistentModel], deleted: [any PersistentModel],
                               changedEntities: [EntityDescription], vacancies: (EntityDescription) -> [String: UniqueVacancy]) {
        // Only changed and deleted rows give values up: a save of new objects alone has none.
        guard !changed.isEmpty || !deleted.isEmpty else { return }
        /// One unique column of one entity: the rows giving up a value and the values given up
        /// and taken (NULL, which never collides, left out).
        struct Column {
            var entity: EntityDescription
            var name: String
            var vacancy: UniqueVacancy
            var ids: [Int64] = []
            var givenUp: Set<SQLiteValue> = []
            var taken: Set<SQLiteValue> = []
        }
        var columns: [ObjectIdentifier: [Column]] = [:]
        /// Per entity, each settable column's slot in the values' layout (attributes, then keys).
        var slots: [ObjectIdentifier: [(slot: Int, column: Int)]] = [:]
        func settable(_ entity: EntityDescription) -> [(slot: Int, column: Int)] {
            if let found = slots[ObjectIdentifier(entity)] { return found }
            let found = vacancies(entity)
            let names = entity.attributes.map(\.column) + entity.foreignKeys.map { Optional($0.column) }
            var entityColumns: [Column] = [], entitySlots: [(slot: Int, column: Int)] = []
            for (slot, name) in names.enumerated() {
                guard let name, let vacancy = found[SQLDialect.unquoted(name)] else { continue }
                entitySlots.append((slot, entityColumns.count))
                entityColumns.append(Column(entity: entity, name: name, vacancy: vacancy))
            }
            columns[ObjectIdentifier(entity)] = entityColumns
            slots[ObjectIdentifier(entity)] = entitySlots
            return entitySlots
        }
        let changesGiveUp = changedEntities.contains { !settable($0).isEmpty }
        guard changesGiveUp || !deleted.isEmpty else { return }
        for object in inserted {
            let backing = object.persistentBackingData
            for (slot, column) in settable(backing.entity) {
                columns[ObjectIdentifier(backing.entity)]![column].taken.insert(backing.value(slot: slot))
            }
        }
        // A changed object that is also deleted counts once, as deleted: it gives up every value,
        // and takes the keys the save writes before it deletes the row (its deletion follows the
        // relationships it has now), as a changed object takes what it writes.
        for object in (changesGiveUp ? changed.filter { !$0.persistentBackingData.isMarkedDeleted } : []) + deleted {
            let backing = object.persistentBackingData
            guard let id = backing.id else { continue }
            for (slot, column) in settable(backing.entity) {
                let writes = backing.changes(slot: slot)
                guard writes || backing.isMarkedDeleted else { continue }
                columns[ObjectIdentifier(backing.entity)]![column].ids.append(id)
                columns[ObjectIdentifier(backing.entity)]![column].givenUp.insert(backing.value(slot: slot, saved: true))
                if writes {
                    columns[ObjectIdentifier(backing.entity)]![column].taken.insert(backing.value(slot: slot))
                }
            }
        }
        for column in columns.values.joined().sorted(by: { ($0.entity.name, $0.name) < ($1.entity.name, $1.name) }) {
            let collides = !column.givenUp.subtracting([.null]).isDisjoint(with: column.taken.subtracting([.null]))
            guard collides else { continue }
            steps.append(Step(entity: column.entity, column: column.name, vacancy: column.vacancy, ids: column.ids.sorted(),
                              taken: Array(column.taken.subtracting([.null]))))
        }
    }
}

extension ModelBackingData {
    /// The value in slot `slot` (attributes, then keys: the layout of the values) as the save
    /// writes it, or as last saved or loaded (`saved`); for a key, the id its relationship names.
    func value(slot: Int, saved: Bool = false) -> SQLiteValue {
        guard slot >= entity.attributes.count else { return saved ? savedStoredValue(at: slot) : storedValue(at: slot) }
        let index = entity.foreignKeys[slot - entity.attributes.count].index
        return (saved ? savedForeignID(index) : foreignID(index)).map(SQLiteValue.integer) ?? .null
    }

    /// Whether the save writes slot `slot` of this saved object (of an object it deletes, only
    /// the keys: its deletion follows the relationships it has now).
    func changes(slot: Int) -> Bool {
        guard slot >= entity.attributes.count else { return !isMarkedDeleted && changedAttributeIndexes.contains(slot) }
        return writesKey(entity.foreignKeys[slot - entity.attributes.count].index)
    }
}
