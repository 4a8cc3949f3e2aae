import ModelGenQuery

/// The unsaved objects a fetch amid unsaved changes looks at, on both backends: when its predicate
/// requires an attribute to equal a value, only those holding that value (`PendingValueIndex`, one
/// per entity and attribute asked about, made on first use and kept in step with every insert,
/// change and removal until the save or rollback). An import that looks up each object by a unique
/// value before inserting it then costs the same for the last object as for the first.
extension PendingChanges {
    struct ValueIndexKey: Hashable {
        var entity: ObjectIdentifier
        var attribute: Int
    }

    /// The unsaved objects of `entity` that can match `condition`: those holding the value it
    /// requires an attribute to equal (the first such term whose kind of values compares as
    /// stored: integers, booleans, texts, UUIDs, bytes), else all of them. A superset of the
    /// matches: the fetch still tests each one.
    public mutating func candidates(for condition: QueryCondition?, of entity: EntityDescription) -> [any PersistentModel] {
        guard let (attribute, value) = condition?.indexableEquality(on: entity) else { return unsavedObjects(of: entity) }
        let key = ValueIndexKey(entity: ObjectIdentifier(entity), attribute: attribute)
        if let index = valueIndexes[key] { return index.objects(withValue: value) }
        let index = PendingValueIndex(attribute: attribute, objects: unsavedObjects(of: entity))
        valueIndexes[key] = index
        return index.objects(withValue: value)
    }

    /// Whether some fetch indexed unsaved objects by an attribute's value (`valueChanged` has
    /// something to do).
    public var indexesValues: Bool { !valueIndexes.isEmpty }

    /// Attribute `attribute` of `backing`'s object changed from `old`: the index of that
    /// attribute follows, if the object is unsaved.
    public func valueChanged(_ backing: ModelBackingData, attribute: Int, from old: SQLValue) {
        guard let object = backing.object, let index = valueIndexes[ValueIndexKey(entity: ObjectIdentifier(backing.entity), attribute: attribute)],
              isInserted(object) || changedIdentities.contains(ObjectIdentifier(object)) else { return }
        index.move(object, from: old)
    }

    /// A newly unsaved object joins the indexes of its entity.
    func addToValueIndexes(_ object: any PersistentModel) {
        guard !valueIndexes.isEmpty else { return }
        for (key, index) in valueIndexes where key.entity == ObjectIdentifier(object.persistentBackingData.entity) { index.add(object) }
    }

    /// An inserted object taken back leaves the indexes of its entity.
    func removeFromValueIndexes(_ object: any PersistentModel) {
        guard !valueIndexes.isEmpty else { return }
        let backing = object.persistentBackingData
        for (key, index) in valueIndexes where key.entity == ObjectIdentifier(backing.entity) {
            index.remove(object, value: backing.storedValue(key.attribute))
        }
    }
}
