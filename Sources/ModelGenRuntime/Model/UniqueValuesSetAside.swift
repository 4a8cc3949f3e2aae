import ModelGenSchema

/// The unique values a save sets aside before it writes anything, for either backend
/// (`UniqueVacancy`): in each unique column, the values that changed rows give up and deleted
/// rows hold, when another of the save's new rows or changed rows takes a value there. Then no
/// order of the save's statements collides with a value the save itself gives up (two objects
/// swapping names, a new object taking a deleted one's name, a one-to-one partner replaced);
/// every changed row then gets its new value, and every deleted row goes. The rows' values are
/// those the store holds, which another context may have changed since this one read them, so
/// the values the context read cannot tell whether they collide: any row giving a value up and
/// another taking one make a step. A save that changes no unique value (most: new objects,
/// changes of other attributes) sets nothing aside.
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
        /// One unique column of one entity: the rows giving up a value, the values taken (NULL,
        /// which never collides, left out), and the rows taking them (nil for a new one).
        struct Column {
            var entity: EntityDescription
            var name: String
            var vacancy: UniqueVacancy
            var ids: [Int64] = []
            var taken: Set<SQLiteValue> = []
            var takers: [Int64?] = []

            mutating func take(_ value: SQLiteValue, by id: Int64?) {
                guard value != .null else { return }
                taken.insert(value)
                takers.append(id)
            }

            /// A row gives a value up that another row of the save may take.
            var collides: Bool {
                !ids.isEmpty && takers.contains { $0 == nil || ids.count > 1 || $0 != ids[0] }
            }
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
                columns[ObjectIdentifier(backing.entity)]![column].take(backing.value(slot: slot), by: nil)
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
                if writes {
                    columns[ObjectIdentifier(backing.entity)]![column].take(backing.value(slot: slot), by: id)
                }
            }
        }
        for column in columns.values.joined().sorted(by: { ($0.entity.name, $0.name) < ($1.entity.name, $1.name) }) where column.collides {
            steps.append(Step(entity: column.entity, column: column.name, vacancy: column.vacancy, ids: column.ids.sorted(), taken: Array(column.taken)))
        }
    }
}

extension ModelBackingData {
    /// The value in slot `slot` (attributes, then keys: the layout of the values) as the save
    /// writes it; for a key, the id its relationship names.
    func value(slot: Int) -> SQLiteValue {
        guard slot >= entity.attributes.count else { return storedValue(at: slot) }
        return foreignID(entity.foreignKeys[slot - entity.attributes.count].index).map(SQLiteValue.integer) ?? .null
    }

    /// Whether the save writes slot `slot` of this saved object (of an object it deletes, only
    /// the keys: its deletion follows the relationships it has now).
    func changes(slot: Int) -> Bool {
        guard slot >= entity.attributes.count else { return !isMarkedDeleted && changedAttributeIndexes.contains(slot) }
        return writesKey(entity.foreignKeys[slot - entity.attributes.count].index)
    }
}
