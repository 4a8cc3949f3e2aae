/// The parts of a fetch amid unsaved changes that both contexts share: the unsaved objects of an
/// entity and the rows of its changed and deleted ones, whether the unsaved rows must be written
/// for it, and, when it matches the unsaved objects by the values those hold (a
/// fetch in id order whose predicate reads only the entity's own columns), how many saved rows to
/// read and how the saved rows and the unsaved objects make one result.
extension PendingChanges {
    /// The inserted and changed objects of `entity` (changed ones may also be marked deleted).
    func unsavedObjects(of entity: EntityDescription) -> [any PersistentModel] {
        (inserted + changed).filter { $0.persistentBackingData.entity === entity }
    }

    /// The row ids of the changed objects of `entity`: rows a count amid unsaved changes leaves to
    /// the objects' values now.
    public func changedIDs(of entity: EntityDescription) -> [Int64] {
        changed.compactMap { $0.persistentBackingData.entity === entity ? $0.persistentBackingData.id : nil }
    }

    /// The row ids of the objects of `entity` marked deleted: rows a fetch or count amid unsaved
    /// changes leaves out.
    public func deletedIDs(of entity: EntityDescription) -> [Int64] {
        deleted.compactMap { $0.persistentBackingData.entity === entity ? $0.persistentBackingData.id : nil }
    }

    /// Whether a fetch of `entity` that does not match the unsaved objects by their values must
    /// run on their rows written (in a transaction then rolled back). Through a relationship
    /// (`readsRelationships`) any unsaved change may change what matches or the order; otherwise
    /// only the entity's own inserted and changed objects can (its deleted ones are left out by
    /// id), so a fetch of one entity is not refused for what the unsaved rows of another would
    /// break (a unique value two of them hold) — alike on both backends.
    public func fetchNeedsUnsavedRows(of entity: EntityDescription, readsRelationships: Bool) -> Bool {
        if readsRelationships { return hasInsertedOrChanged }
        func isUnsaved(_ object: any PersistentModel) -> Bool { object.persistentBackingData.entity === entity && !object.persistentBackingData.isDeleted }
        return inserted.contains(where: isUnsaved) || changed.contains(where: isUnsaved)
    }

    /// The limit for the page of saved rows behind a fetch of `limit` objects of `entity`: longer
    /// by the number of the entity's changed objects, which may no longer match, so that the page
    /// still holds the first rows that did not change (nil: no limit).
    public func savedRowLimit(for limit: Int?, of entity: EntityDescription) -> Int? {
        guard let limit else { return nil }
        let (longer, overflow) = limit.addingReportingOverflow(changedCounts[ObjectIdentifier(entity), default: 0])
        return overflow ? .max : longer
    }

    /// The objects of a fetch in id order: the saved rows that matched (`saved`, read with
    /// `savedRowLimit`) but the changed ones that no longer `match`, and the `candidates` (unsaved
    /// objects of the entity) that match and are not among them, those with a row in id order
    /// and the new ones last, in the order they were inserted (the order their ids will have);
    /// at most `limit`.
    public func mergedInIDOrder<Model: PersistentModel>(
        saved: [Model], candidates: some Sequence<any PersistentModel>, limit: Int?, matches: (Model) throws -> Bool
    ) rethrows -> [Model] {
        // A lookup before each insert (a fetch with a limit of 1 by a unique value) comes here once
        // per object imported: each step below is skipped when it would change nothing.
        var result = changedIdentities.isEmpty ? saved : try saved.filter { try !changedIdentities.contains(ObjectIdentifier($0)) || matches($0) }
        let found = result.isEmpty ? [] : Set(result.map(ObjectIdentifier.init))
        var joining: [Model] = [], new: [Model] = []
        for candidate in candidates where !candidate.persistentBackingData.isDeleted && !found.contains(ObjectIdentifier(candidate)) {
            let object = unsafeDowncast(candidate, to: Model.self)
            guard try matches(object) else { continue }
            if object.persistentBackingData.id == nil { new.append(object) } else { joining.append(object) }
        }
        if !joining.isEmpty {
            result = (result + joining).sorted { $0.persistentBackingData.id! < $1.persistentBackingData.id! }
        }
        if new.count > 1 { new.sort { insertionPosition(of: $0) ?? 0 < insertionPosition(of: $1) ?? 0 } }
        if result.isEmpty { result = new } else if !new.isEmpty { result += new }
        if let limit, result.count > limit { result.removeSubrange(limit...) }
        return result
    }
}
