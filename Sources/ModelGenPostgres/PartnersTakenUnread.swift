@_spi(Backend) import ModelGenRuntime

/// The partners a PostgreSQL context gave other holders without reading which objects held them
/// (`ModelBackingContext.relationshipReplacedUnread`: the partner's side was not loaded) — a one-to-one's
/// partner given another object or none, a one-to-many's owner given another list of members —
/// and how the old holders let go of them, as they do in a context that reads the partner's side:
/// - the objects the context holds whose key names a taken partner, and which it no longer refers
///   to, let go of it at once (`take`), and so does each object it reads from a row until the
///   save (`keysLetGo`);
/// - a save, and a query on the unsaved rows, first empty the key of the rows that hold a taken
///   partner by then (`releases`; one `UPDATE` per relationship, shown at
///   `PostgresModelContext.releasePartnersTakenUnread`); the rows of objects the save writes or
///   deletes anyway, and each partner's new holders, are left to it.
///
/// A row to which another context gave the partner after this one took it lets go of it too: the
/// last save to give a partner wins, as on SQLite when the other save came first.
struct PartnersTakenUnread {
    /// The key relationship of a one-to-one or one-to-many: relationship `index` of `entity`, kept
    /// in a column of its rows.
    struct KeyRelationship: Hashable {
        var entity: ObjectIdentifier
        var index: Int
    }

    /// One statement: the rows of `entity` whose key `column` (quoted) names one of `partnerIDs`,
    /// but not the rows `keptIDs`, let go of their partner.
    struct Release {
        var entity: EntityDescription
        var keyIndex: Int
        var column: String
        var partnerIDs: [Int64]
        var keptIDs: [Int64]
    }

    /// A taken partner, and the index of its side of the one-to-one.
    private typealias Taken = (partner: ModelBackingData, index: Int)
    /// Taken partners by id, by the key relationship through which their holders name them
    /// (of entity `keyEntity`).
    private var taken: [KeyRelationship: (keyEntity: EntityDescription, partners: [Int64: Taken])] = [:]
    /// For each key relationship through which a partner was taken since the last save or
    /// rollback: the ids of the registered objects by the key they held when the first partner was
    /// taken, or when they registered since (`noteHolder`); a change in between takes a partner itself.
    private var holdersByKey: [KeyRelationship: [Int64: [Int64]]] = [:]

    /// Whether no partner is taken.
    var isEmpty: Bool { taken.isEmpty }

    /// Whether rows of `entity` may hold a taken partner: a query of them must run on those rows
    /// released (`releases`), as one of an entity with unsaved objects runs on their rows written.
    func releasesRows(of entity: EntityDescription) -> Bool {
        !taken.isEmpty && taken.keys.contains { $0.entity == ObjectIdentifier(entity) }
    }

    /// Relationship `index` of `partner`, kept in the rows of `keyEntity`'s objects, now refers to
    /// other objects or to none. Returns the key relationship's index and the registered objects
    /// (`registered` gives one by id, `allRegistered` all of `keyEntity`'s) whose key names
    /// `partner` but which are not among its new holders: they let go of it.
    mutating func take(_ partner: ModelBackingData, through index: Int, keyEntity: EntityDescription,
                       registered: (Int64) -> ModelBackingData?, allRegistered: () -> [ModelBackingData]) -> (keyIndex: Int, holders: [ModelBackingData])? {
        guard let partnerID = partner.id, case let .inverseColumn(column) = partner.entity.relationships[index].storage,
              let keyIndex = keyEntity.relationshipIndex(keyedBy: column) else { return nil }
        let key = KeyRelationship(entity: ObjectIdentifier(keyEntity), index: keyIndex)
        taken[key, default: (keyEntity, [:])].partners[partnerID] = (partner, index)
        if holdersByKey[key] == nil {
            var byKey: [Int64: [Int64]] = [:]
            for backing in allRegistered() {
                if let foreignID = backing.foreignID(keyIndex), let id = backing.id { byKey[foreignID, default: []].append(id) }
            }
            holdersByKey[key] = byKey
        }
        let kept = Self.holders(of: (partner, index))
        let holders = (holdersByKey[key]?[partnerID] ?? []).compactMap(registered).filter { kept[ObjectIdentifier($0)] == nil && $0.foreignID(keyIndex) == partnerID }
        return (keyIndex, holders)
    }

    /// `backing` registered, or a save wrote it: it counts among the holders of the partner its key names.
    mutating func noteHolder(_ backing: ModelBackingData) {
        guard !holdersByKey.isEmpty, let id = backing.id else { return }
        for key in holdersByKey.keys where key.entity == ObjectIdentifier(backing.entity) {
            if let foreignID = backing.foreignID(key.index) { holdersByKey[key]![foreignID, default: []].append(id) }
        }
    }

    /// The key relationships through which `backing`, just read from its row, names a taken
    /// partner: it lets go of them. (It is none of the partners' new holders: those are objects in
    /// memory, which the context holds, so their rows are never read into new objects.)
    func keysLetGo(by backing: ModelBackingData) -> [Int] {
        guard !taken.isEmpty else { return [] }
        return taken.compactMap { key, entry in
            guard key.entity == ObjectIdentifier(backing.entity), let partnerID = backing.foreignID(key.index),
                  let partner = entry.partners[partnerID] else { return nil }
            assert(Self.holders(of: partner)[ObjectIdentifier(backing)] == nil, "a row of \(backing.entity.name) was read into a second object")
            return key.index
        }
    }

    /// What a save (or the writing of the unsaved rows for a query) empties before it writes
    /// anything, given the ids of the objects it writes or deletes anyway, by entity; in a fixed order.
    func releases(written: [ObjectIdentifier: [Int64]]) -> [Release] {
        taken.compactMap { key, entry in
            guard case let .column(column) = entry.keyEntity.relationships[key.index].storage else { return nil }
            var kept = Set(written[key.entity] ?? [])
            for partner in entry.partners.values {
                for holder in Self.holders(of: partner).values { if let id = holder.id { kept.insert(id) } }
            }
            return Release(entity: entry.keyEntity, keyIndex: key.index, column: postgresQuoted(column), partnerIDs: entry.partners.keys.sorted(), keptIDs: kept.sorted())
        }
        .sorted { ($0.entity.name, $0.column) < ($1.entity.name, $1.column) }
    }

    /// The objects a taken partner's side refers to now, by identity of their backing data.
    private static func holders(of taken: Taken) -> [ObjectIdentifier: ModelBackingData] {
        switch taken.partner.relationship(taken.index) {
        case let .toOne(holder?): [ObjectIdentifier(holder.persistentBackingData): holder.persistentBackingData]
        case let .toMany(list): Dictionary(list.objects.lazy.map { (ObjectIdentifier($0.persistentBackingData), $0.persistentBackingData) }, uniquingKeysWith: { first, _ in first })
        default: [:]
        }
    }

    /// The unsaved changes were saved or rolled back: no partner is taken any more (and the next
    /// take indexes the holders anew, so the index holds no object the context has let go since).
    mutating func removeAll() {
        taken = [:]
        holdersByKey = [:]
    }
}
