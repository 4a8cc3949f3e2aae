@_spi(Backend) import ModelGenRuntime

/// Which objects' loaded lists of a many-to-many relationship hold an owner: what a PostgreSQL
/// context looks up when an owner's list of the other side is replaced unread
/// (`ModelBackingContext.relationshipReplacedUnread`), so that the old members let go of the owner
/// without a look at every object the context holds for each replacement.
///
/// The index of a relationship is made at the first replacement through it since the last save
/// or rollback, from the registered and the inserted objects of the members' entity; from then on
/// lists loaded are added as they load (`noteLoaded`), and a list that gains an owner whose side
/// is not loaded as it gains it (`noteJoined`). An entry may be stale (a member that let go of the
/// owner since): letting go checks the list itself.
struct ListsHoldingOwners {
    /// Relationship `index` of `entity`: the owners' side, stored in a join table.
    struct OwnerRelationship: Hashable {
        var entity: ObjectIdentifier
        var index: Int

        init(_ entity: EntityDescription, _ index: Int) {
            (self.entity, self.index) = (ObjectIdentifier(entity), index)
        }
    }

    /// An object whose list holds an owner: a saved one by its row id (the registry has it while
    /// it is in memory), a new one itself (the context holds it until the save or rollback).
    enum Member {
        case saved(Int64)
        case new(ModelBackingData)
    }

    /// Per owner relationship indexed: the members whose list (the inverse) holds each owner, by
    /// the owner's id.
    private var membersByOwner: [OwnerRelationship: [Int64: [Member]]] = [:]

    /// The objects whose list `inverse` holds `ownerID` through `relationship`, as far as the
    /// index knows; `candidates` gives the objects of the members' entity the context holds
    /// (registered and inserted), read once to make the index.
    mutating func members(holding ownerID: Int64, through relationship: OwnerRelationship, inverse: Int,
                          candidates: () -> [ModelBackingData]) -> [Member] {
        if membersByOwner[relationship] == nil {
            var byOwner: [Int64: [Member]] = [:]
            for backing in candidates() { Self.add(backing, inverse, to: &byOwner) }
            membersByOwner[relationship] = byOwner
        }
        return membersByOwner[relationship]![ownerID] ?? []
    }

    /// `backings` loaded their list `inverse`, the other side of `relationship`: indexed where
    /// the relationship is.
    mutating func noteLoaded(_ backings: [ModelBackingData], _ inverse: Int, otherSide relationship: OwnerRelationship) {
        guard membersByOwner[relationship] != nil else { return }
        for backing in backings { Self.add(backing, inverse, to: &membersByOwner[relationship]!) }
    }

    /// `member`'s list gained `ownerID`, whose side (`relationship`) is not loaded.
    mutating func noteJoined(_ member: ModelBackingData, owner ownerID: Int64, through relationship: OwnerRelationship) {
        guard membersByOwner[relationship] != nil else { return }
        membersByOwner[relationship]![ownerID, default: []].append(Self.member(member))
    }

    /// The unsaved changes were saved or rolled back: the next replacement indexes anew (so the
    /// index holds no object the context has let go of since).
    mutating func removeAll() {
        membersByOwner = [:]
    }

    private static func add(_ backing: ModelBackingData, _ inverse: Int, to byOwner: inout [Int64: [Member]]) {
        guard case let .toMany(list) = backing.relationship(inverse) else { return }
        for owner in list.objects {
            if let ownerID = owner.persistentBackingData.id { byOwner[ownerID, default: []].append(member(backing)) }
        }
    }

    private static func member(_ backing: ModelBackingData) -> Member {
        backing.id.map(Member.saved) ?? .new(backing)
    }
}
