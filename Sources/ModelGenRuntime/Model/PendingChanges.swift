import Foundation

/// A context's unsaved work: the objects inserted (in the order of insertion, which their ids
/// will follow), changed and deleted, each listed once, with membership answered in constant time
/// so that tracking stays linear in the objects touched. The SQLite and PostgreSQL contexts keep
/// their work in one.
@_spi(Backend) public struct PendingChanges {
    /// The inserted objects, in the order of insertion.
    private var insertedObjects = OrderedObjects(indexed: true)
    /// The objects marked deleted, in the order they were.
    private var deletedObjects = OrderedObjects(indexed: true)
    public var inserted: [any PersistentModel] { insertedObjects.elements }
    public private(set) var changed: [any PersistentModel] = []
    public var deleted: [any PersistentModel] { deletedObjects.elements }
    /// How many objects of each entity (by `ObjectIdentifier` of its description) are inserted.
    private var insertedCounts: [ObjectIdentifier: Int] = [:]
    /// Membership of `changed`.
    public private(set) var changedIdentities: Set<ObjectIdentifier> = []
    /// How many objects of each entity (by `ObjectIdentifier` of its description) are in `changed`.
    public private(set) var changedCounts: [ObjectIdentifier: Int] = [:]
    /// The inserted and changed objects by entity and attribute value, for the fetches that ask
    /// for one value (`PendingChanges+ValueIndexes`).
    var valueIndexes: [ValueIndexKey: PendingValueIndex] = [:]

    /// Whether the last save of this work threw, and nothing was added to the work since: the
    /// app was told the work is not saved, so a context dropped then says nothing more.
    public var lastSaveFailed = false

    public init() {}

    public var isEmpty: Bool { insertedObjects.isEmpty && changed.isEmpty && deletedObjects.isEmpty }

    /// Whether some object is inserted or changed (deleted ones aside).
    public var hasInsertedOrChanged: Bool { !insertedObjects.isEmpty || !changed.isEmpty }

    /// Whether `model` is an inserted object.
    public func isInserted(_ model: AnyObject) -> Bool { insertedObjects.contains(model) }

    /// The inserted object whose temporary identifier is `identifier` (nil for any other
    /// identifier), in constant time: an app that looks each new object up by the identifier it
    /// kept does not search them all.
    public func insertedObject(for identifier: PersistentIdentifier) -> (any PersistentModel)? {
        guard let temporary = identifier.temporary, let object = insertedObjects.element(identifiedBy: temporary),
              object.persistentModelID == identifier else { return nil }
        return object
    }

    /// How many objects of `entity` are inserted (in constant time).
    public func insertedCount(of entity: EntityDescription) -> Int { insertedCounts[ObjectIdentifier(entity), default: 0] }

    /// A number that sorts inserted objects in the order of insertion (nil for any other object).
    func insertionPosition(of model: AnyObject) -> Int? { insertedObjects.position(of: model) }

    /// Adds an inserted object; false when it is one already.
    public mutating func insert(_ model: any PersistentModel) -> Bool {
        guard !insertedObjects.contains(model) else { return false }
        lastSaveFailed = false
        insertedObjects.appendNew(model)
        insertedCounts[ObjectIdentifier(model.persistentBackingData.entity), default: 0] += 1
        addToValueIndexes(model)
        return true
    }

    /// Takes an inserted object back (deleted before it was saved); false when it is not one.
    public mutating func removeInserted(_ model: any PersistentModel) -> Bool {
        guard insertedObjects.remove(model) else { return false }
        insertedCounts[ObjectIdentifier(model.persistentBackingData.entity), default: 0] -= 1
        removeFromValueIndexes(model)
        return true
    }

    /// Adds a saved object with a change; false when it is one already.
    public mutating func change(_ model: any PersistentModel) -> Bool {
        guard changedIdentities.insert(ObjectIdentifier(model)).inserted else { return false }
        changed.append(model)
        lastSaveFailed = false
        changedCounts[ObjectIdentifier(model.persistentBackingData.entity), default: 0] += 1
        addToValueIndexes(model)
        return true
    }

    /// The entities of `entities` that objects in `changed` belong to.
    public func changedEntities(among entities: [EntityDescription]) -> [EntityDescription] {
        entities.filter { changedCounts[ObjectIdentifier($0)] != nil }
    }

    /// Adds an object to delete at the save.
    public mutating func delete(_ model: any PersistentModel) {
        if !deletedObjects.contains(model) { deletedObjects.appendNew(model) }
        lastSaveFailed = false
    }

    /// Takes a deletion back (the object was inserted again before the save); false when the
    /// object is not to be deleted.
    public mutating func undelete(_ model: any PersistentModel) -> Bool {
        deletedObjects.remove(model)
    }

    /// Objects whose rows a delete removed are no longer changed nor to be deleted.
    public mutating func forget(_ detached: Set<ObjectIdentifier>) {
        guard !detached.isEmpty else { return }
        changed.removeAll { detached.contains(ObjectIdentifier($0)) }
        deletedObjects.removeAll(in: detached)
        changedIdentities.subtract(detached)
        valueIndexes = [:]
        changedCounts = changed.reduce(into: [:]) { counts, object in counts[ObjectIdentifier(object.persistentBackingData.entity), default: 0] += 1 }
    }

    /// Everything saved or rolled back.
    public mutating func removeAll() { self = PendingChanges() }

    /// What a context that goes with unsaved work drops, said once on standard error (a context
    /// cannot throw from its deinit, and dropping the work without a word loses it silently);
    /// nothing when the last save threw (`lastSaveFailed`: the app has been told). `context`
    /// names the context and `event` what dropped the work:
    ///
    ///     ModelContext was freed with unsaved changes, which were discarded: 2 inserted (Animal), 1 deleted (AnimalCategory). Call save() or rollback() before a context goes
    public func reportDiscarded(by context: String, event: String = "was freed", advice: String = "Call save() or rollback() before a context goes") {
        guard !isEmpty, !lastSaveFailed else { return }
        func part(_ objects: [any PersistentModel], _ verb: String) -> String? {
            guard !objects.isEmpty else { return nil }
            let entities = Set(objects.map { $0.persistentBackingData.entity.name }).sorted()
            return "\(objects.count) \(verb) (\(entities.joined(separator: ", ")))"
        }
        let parts = [part(inserted, "inserted"), part(changed, "changed"), part(deleted, "deleted")].compactMap { $0 }
        FileHandle.standardError.write(Data("""
            \(context) \(event) with unsaved changes, which were discarded: \(parts.joined(separator: ", ")). \(advice)

            """.utf8))
    }
}
