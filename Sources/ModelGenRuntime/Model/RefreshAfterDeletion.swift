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

    /// A refresh after a delete that removed the rows of `deletedObjects`, objects the app deleted.
    @_spi(Backend) public init(deletedObjects: Set<ObjectIdentifier> = []) {
        detached = deletedObjects
    }

    /// Sorts one registered object: `storedForeignIDs` are the keys its row holds now, by
    /// relationship index (nil when the row is gone), and `hadRow` says whether the row was there
    /// before the delete. Returns true when the delete removed the row: the object is no longer
    /// marked deleted and has left the context, and the caller takes it out of its registry.
    @_spi(Backend) public mutating func sort(_ backing: ModelBackingData, hadRow: Bool, storedForeignIDs: [Int64?]?) -> Bool {
        if let storedForeignIDs {
            survivors.append((backing, storedForeignIDs))
            return false
        }
        guard hadRow else {
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
