/// What a context does with the objects it holds after a delete ran in the store (a save that
/// deletes, `delete(model:where:)`), on both backends. The backend reads, for each entity with
/// registered objects, the keys the rows of those objects hold now, and hands each object to
/// `sort`; then `apply` brings the objects that stay in step.
///
/// - An object whose row the delete removed leaves the context (the backend takes it out of its
///   registry).
/// - An object whose row was gone before the delete (another context or process deleted it) stays,
///   so that a change to it is refused by the next save as `.deletedFromStore` instead of being
///   dropped with the object.
/// - Every object that stays, such a one and the unsaved ones too, forgets the objects that left:
///   its loaded relationships stay loaded, minus those objects, so it keeps showing what it read
///   (unloading them would show keys another context saved since); relationships not loaded take
///   the keys the store now holds.
@_spi(Backend) public struct RefreshAfterDeletion {
    /// The objects that left the context: those the app deleted (which left already) and those
    /// whose rows the delete removed.
    @_spi(Backend) public private(set) var detached: Set<ObjectIdentifier>
    /// Objects whose rows stay, with the keys those rows hold now (by relationship index).
    private var survivors: [(backing: ModelBackingData, storedForeignIDs: [Int64?])] = []
    /// Objects whose rows were gone before the delete.
    private var stale: [ModelBackingData] = []

    /// The ids of the rows of registered objects before the delete, by entity.
    private var rowsBefore: [ObjectIdentifier: Set<Int64>]

    /// A refresh after a delete that removed the rows of `deletedObjects`, objects the app deleted.
    /// `rowsBefore` are the rows the store held, before the delete, of the objects registered
    /// then; `written` are the new objects a save wrote before its deletions ran (registered
    /// after), whose rows those deletions may remove too (a cascade through a relationship a new
    /// object joined).
    @_spi(Backend) public init(rowsBefore: [ObjectIdentifier: Set<Int64>], written: [any PersistentModel] = [], deletedObjects: Set<ObjectIdentifier> = []) {
        self.rowsBefore = rowsBefore
        detached = deletedObjects
        for object in written {
            let backing = object.persistentBackingData
            if let id = backing.id { self.rowsBefore[ObjectIdentifier(backing.entity), default: []].insert(id) }
        }
    }

    /// Sorts one registered object by the keys its row holds now (`storedForeignIDs`, by
    /// relationship index; nil when the row is gone). Returns true when the delete removed the
    /// row: the object is no longer marked deleted and has left the context, and the caller takes
    /// it out of its registry.
    @_spi(Backend) public mutating func sort(_ backing: ModelBackingData, storedForeignIDs: [Int64?]?) -> Bool {
        if let storedForeignIDs {
            survivors.append((backing, storedForeignIDs))
            return false
        }
        guard let id = backing.id, rowsBefore[ObjectIdentifier(backing.entity)]?.contains(id) == true else {
            stale.append(backing)
            return false
        }
        backing.isDeleted = false
        backing.context = nil
        if let object = backing.object { detached.insert(ObjectIdentifier(object)) }
        return true
    }

    /// The objects that stay forget those that left (`inserted`: the context's unsaved new objects),
    /// and the survivors take the keys their rows hold.
    @_spi(Backend) public func apply(inserted: [any PersistentModel]) {
        for (backing, storedForeignIDs) in survivors {
            for (index, _) in backing.entity.foreignKeys { backing.setSavedForeignID(index, storedForeignIDs[index]) }
            backing.forgetRelated(detached, storedForeignIDs: storedForeignIDs)
        }
        for backing in stale + inserted.map(\.persistentBackingData) { backing.forgetRelated(detached, storedForeignIDs: nil) }
    }
}
