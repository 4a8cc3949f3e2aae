@_spi(Backend) import ModelGenRuntime

/// The members a PostgreSQL context loads for a relationship of saved objects (the owners) while
/// it holds unsaved changes: the links the store holds, corrected in memory by the objects of the
/// other side that changed — what the save would write, and what a context that loads on access
/// (SQLite) shows. Nothing is written for a load, so unsaved changes that break a constraint
/// (two objects holding one unique value, a required relationship still nil) refuse the save, not
/// the load.
///
/// An owner's side is not loaded (that is why it is loaded), so it holds no change of its own:
/// the changes that move its links are on the members' side, a key in their rows or their list
/// of the other side of a many-to-many relationship.
enum UnsavedLinks {
    /// Members kept through a key in their rows (`.inverseColumn`), the key being relationship
    /// `key` of their entity: `stored` are the objects whose rows hold one of `owners` in the
    /// store (in id order), `unsaved` the inserted and changed objects of the members' entity (in
    /// the order they were inserted or changed). Each belongs to the owner its key names now;
    /// each owner's members come in id order, the new ones last, in the order they were inserted.
    static func membersByKey(stored: [any PersistentModel], unsaved: [any PersistentModel], key: Int,
                             owners: Set<Int64>) -> [Int64: [any PersistentModel]] {
        // The stored rows of unsaved objects are among those objects; with none, the stored rows
        // are the members, in id order already.
        let unsavedIdentities = Set(unsaved.lazy.map { ObjectIdentifier($0) })
        var saved = unsavedIdentities.isEmpty ? stored : stored.filter { !unsavedIdentities.contains(ObjectIdentifier($0)) }
        var new: [any PersistentModel] = []
        let storedCount = saved.count
        for object in unsaved {
            if object.persistentBackingData.id == nil { new.append(object) } else { saved.append(object) }
        }
        if saved.count > storedCount { saved.sort { $0.persistentBackingData.id! < $1.persistentBackingData.id! } }
        var byOwner: [Int64: [any PersistentModel]] = [:]
        for object in [saved, new].joined() {
            guard let owner = object.persistentBackingData.foreignID(key), owners.contains(owner) else { continue }
            byOwner[owner, default: []].append(object)
        }
        return byOwner
    }

    /// Members kept in a join table: `stored` are the ids of each owner's members as the store
    /// holds them, `unsaved` the inserted and changed objects of the members' entity, whose list
    /// `inverse` (when the relationship has an inverse) holds the owners on their side. A member
    /// whose list changed adds the owners it gained and drops those it lost (the pairs a save
    /// writes); one whose list replaced its stored members unread holds exactly the owners in
    /// it; a new one holds those in its list. Returns, per owner, the saved members' ids
    /// (ascending) and the new members (in the order they were inserted).
    static func joinTableMembers(stored: [Int64: [Int64]], unsaved: [any PersistentModel], inverse: Int?,
                                 owners: Set<Int64>) -> (ids: [Int64: [Int64]], new: [Int64: [any PersistentModel]]) {
        var added: [Int64: [Int64]] = [:], new: [Int64: [any PersistentModel]] = [:]
        var removed = Set<Pair>(), replaced = Set<Int64>()
        if let inverse {
            for object in unsaved {
                let backing = object.persistentBackingData
                guard case let .toMany(list) = backing.relationship(inverse) else { continue }
                guard let member = backing.id else {
                    for owner in list.objects.compactMap(\.persistentBackingData.id) where owners.contains(owner) { new[owner, default: []].append(object) }
                    continue
                }
                if list.replacesStoredMembers {
                    replaced.insert(member)
                    for owner in list.objects.compactMap(\.persistentBackingData.id) where owners.contains(owner) { added[owner, default: []].append(member) }
                } else if list.membersChanged {
                    let (current, saved) = backing.memberIDs(inverse)
                    current.forEach(notIn: saved) { owner in if owners.contains(owner) { added[owner, default: []].append(member) } }
                    saved.forEach(notIn: current) { owner in if owners.contains(owner) { removed.insert(Pair(owner: owner, member: member)) } }
                }
            }
        }
        // With nothing unsaved that moves links, the store's.
        guard !added.isEmpty || !removed.isEmpty || !replaced.isEmpty else { return (stored, new) }
        var ids: [Int64: [Int64]] = [:]
        for owner in owners {
            let kept = (stored[owner] ?? []).filter { !replaced.contains($0) && !removed.contains(Pair(owner: owner, member: $0)) }
            let members = Set(kept + (added[owner] ?? [])).sorted()
            if !members.isEmpty { ids[owner] = members }
        }
        return (ids, new)
    }

    private struct Pair: Hashable {
        var owner: Int64, member: Int64
    }
}
