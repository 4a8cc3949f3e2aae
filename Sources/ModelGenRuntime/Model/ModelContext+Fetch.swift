import Foundation

/// Fetching: descriptors with the context's unsaved changes, prefetching, lazy relationship loads,
/// and the one decoder that turns rows into objects (the registered one for a row, else a new one).
extension ModelContext {
    /// The objects matching the descriptor, one object per row for this context.
    ///
    ///     SELECT id, … FROM "volume" WHERE … ORDER BY … LIMIT … OFFSET …
    ///
    /// Unsaved changes count, as in SwiftData (`includePendingChanges`, true by default): inserted
    /// objects that match are included, changed ones match by their values now, and objects
    /// deleted but not yet saved are left out. A fetch in id order (no sort, no offset) whose
    /// predicate reads only the entity's own columns queries the saved rows and then matches the
    /// unsaved objects of the entity by the values they hold (`UnsavedRowTest`: the same SQL on
    /// a row made of them), looking only at those holding the value an equality in the predicate
    /// requires (`PendingValueIndex`). Any other fetch runs on the rows of the unsaved objects written into
    /// a transaction that is then rolled back: predicates, order, offset and limit mean exactly
    /// what they mean for saved rows, at a cost that grows with the number of unsaved objects.
    public func fetch<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>) throws -> [Model] {
        let entity = Model.entity
        let condition = try descriptor.loweredPredicate()
        var result: [Model]
        if !descriptor.includePendingChanges || !hasChanges {
            result = try storedMatches(descriptor, condition)
        } else {
            let deletedIDs = pending.deletedIDs(of: entity)
            // Through a relationship, any unsaved object may change what matches or the order.
            let readsRelationships = descriptor.readsRelationships(condition)
            if descriptor.sortBy.isEmpty, descriptor.fetchOffset == nil, !readsRelationships {
                result = try matchesInMemory(descriptor, condition, excluding: deletedIDs)
            } else if pending.fetchNeedsUnsavedRows(of: entity, readsRelationships: readsRelationships) {
                result = try withUnsavedRows { try storedMatches(descriptor, condition, excluding: deletedIDs) }
            } else {
                result = try storedMatches(descriptor, condition, excluding: deletedIDs)
            }
        }
        try prefetchRelationships(descriptor, of: result)
        return result
    }

    /// Calls `block` with each object matching the descriptor, in its order, loading
    /// `batchSize` of them at a time (SwiftData's `enumerate(_:batchSize:block:)`): the objects
    /// the block does not keep are freed batch by batch, so memory is bounded by the batch, not
    /// by the result.
    ///
    ///     SELECT id FROM "volume" WHERE … ORDER BY …                                  -- once
    ///     SELECT id, … FROM "volume" WHERE id IN (SELECT value FROM json_each(?))     -- per batch
    ///
    /// The matching identifiers are read first: what the block changes moves no object in or
    /// out, and an object the block deletes before its turn is skipped. With unsaved changes
    /// that count, the objects are those of `fetch(descriptor)`, made all at once.
    public func enumerate<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>, batchSize: Int = 5_000, block: (Model) throws -> Void) throws {
        guard batchSize > 0 else { throw ModelContextError.invalidDescriptor("the batch size is \(batchSize); it must be at least 1") }
        guard !descriptor.includePendingChanges || !hasChanges else {
            for object in try fetch(descriptor) { try block(object) }
            return
        }
        let ids = try fetchIdentifiers(descriptor).compactMap(\.id)
        for start in stride(from: 0, to: ids.count, by: batchSize) {
            let batch = ids[start..<min(start + batchSize, ids.count)]
            let loaded = try fetchAny(Model.self, where: "id \(Self.idListClause)", [Self.jsonArray(batch)])
            let byID = Dictionary(uniqueKeysWithValues: loaded.map { ($0.persistentBackingData.id!, unsafeDowncast($0, to: Model.self)) })
            let objects = batch.compactMap { byID[$0] }
            try prefetchRelationships(descriptor, of: objects)
            for object in objects where !object.persistentBackingData.isDeleted { try block(object) }
        }
    }

    /// Loads the relationships the descriptor names for prefetching, for all of `objects`.
    private func prefetchRelationships<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>, of objects: [Model]) throws {
        let entity = Model.entity
        for keyPath in descriptor.relationshipKeyPathsForPrefetching {
            guard let name = Model.propertyName(for: keyPath), let index = entity.relationshipIndex(named: name) else {
                throw ModelContextError.unsupportedPredicate("prefetching \(keyPath), which is not a relationship of \(entity.name)")
            }
            try prefetch(index, of: objects.map(\.persistentBackingData))
        }
    }

    /// The rows matching the descriptor (its predicate lowered: `condition`), but `excluded`, as objects.
    private func storedMatches<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>, _ condition: QueryCondition?, excluding excluded: [Int64] = []) throws -> [Model] {
        let (clauses, bindings) = try descriptor.sqlClauses(condition, excluding: excluded)
        let made = ObjectsMade()
        try forEachObject(ofType: Model.self, Model.entity.selectSQL + clauses, bindings) { made.append($0) }
        return made.take(as: Model.self)
    }

    /// A fetch in id order whose predicate reads only the entity's columns: the saved rows that
    /// match, corrected by the entity's unsaved objects matched in memory
    /// (`PendingChanges.mergedInIDOrder`, as on PostgreSQL). When the predicate
    /// requires an attribute to equal a value, only the unsaved objects holding that value are
    /// looked at (`PendingValueIndex`).
    private func matchesInMemory<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>, _ condition: QueryCondition?, excluding deletedIDs: [Int64]) throws -> [Model] {
        let entity = Model.entity
        let test = UnsavedRowTest(condition, entity: entity)
        func matches(_ object: Model) throws -> Bool { try test?.matches(object.persistentBackingData, in: database) ?? true }
        var stored = descriptor
        stored.fetchLimit = pending.savedRowLimit(for: descriptor.fetchLimit, of: entity)
        let saved = try storedMatches(stored, condition, excluding: deletedIDs)
        let candidates = pending.candidates(for: condition, of: entity)
        return try pending.mergedInIDOrder(saved: saved, candidates: candidates, limit: descriptor.fetchLimit, matches: matches)
    }

    /// Where a statement reads a list of ids bound as one JSON array (`jsonArray`).
    static let idListClause = "IN (SELECT value FROM json_each(?))"

    /// `ids` as a JSON array, the one binding a statement reads them from (`json_each(?)`).
    static func jsonArray(_ ids: some Sequence<Int64>) -> SQLiteValue {
        .text("[" + ids.map(String.init).joined(separator: ",") + "]")
    }

    /// Loads relationship `index` of every object that has not loaded it, in one query:
    ///
    ///     SELECT … FROM "book" WHERE "writer_id" IN (SELECT value FROM json_each(?)) ORDER BY "writer_id", id
    private func prefetch(_ index: Int, of objects: [ModelBackingData]) throws {
        let pending = objects.filter { if case .unloaded = $0.relationship(index) { return true } else { return false } }
        guard let first = pending.first, let target = modelTypes[first.entity.relationships[index].target] else { return }
        let relationship = first.entity.relationships[index]
        switch relationship.storage {
        case .column:
            let foreignIDs = Set(pending.compactMap { backing -> Int64? in
                if case let .unloaded(foreignID) = backing.relationship(index) { return foreignID }
                return nil
            })
            let found = try fetchAny(target, where: "id \(Self.idListClause)", [Self.jsonArray(foreignIDs)])
            let byID = Dictionary(found.map { ($0.persistentBackingData.id!, $0) }, uniquingKeysWith: { first, _ in first })
            for backing in pending {
                guard case let .unloaded(foreignID) = backing.relationship(index) else { continue }
                backing.relationships[index] = .toOne(foreignID.flatMap { byID[$0] })
            }
        case let .inverseColumn(column):
            // In the order of the key column's index (owner, then id): no sort, and each owner's
            // members come together, so each list is made as its run of rows ends (no array of
            // all the members at once).
            let key = target.entity.relationshipIndex(keyedBy: column)
            let owners = Dictionary(pending.compactMap { backing in backing.id.map { ($0, backing) } }, uniquingKeysWith: { first, _ in first })
            var owner: Int64?, members: [any PersistentModel] = []
            func endRun() {
                guard let owner, let backing = owners[owner] else { return }
                // A copy of the run's length (the buffer, kept for the next run, has room for the longest).
                backing.relationships[index] = relationship.isToMany ? .toMany(.init(Array(members[...]))) : .toOne(members.first)
            }
            try forEachObject(ofType: target, "\(target.entity.selectSQL) WHERE \(column) \(Self.idListClause) ORDER BY \(column), id", [Self.jsonArray(owners.keys)]) { object in
                let memberOwner = key.flatMap { object.persistentBackingData.savedForeignID($0) }
                if memberOwner != owner {
                    endRun()
                    owner = memberOwner
                    members.removeAll(keepingCapacity: true)
                }
                members.append(object)
            }
            endRun()
            for backing in pending {
                guard case .unloaded = backing.relationship(index) else { continue }
                backing.relationships[index] = relationship.isToMany ? .toMany(.init()) : .toOne(nil)
            }
        case let .joinTable(table, own, other):
            var pairs: [Int64: [Int64]] = [:]
            for row in try database.query("SELECT \(own), \(other) FROM \(table) WHERE \(own) \(Self.idListClause) ORDER BY \(other)", [Self.jsonArray(pending.compactMap(\.id))]) {
                if let owner = row[0].integer, let member = row[1].integer { pairs[owner, default: []].append(member) }
            }
            let found = try fetchAny(target, where: "id \(Self.idListClause)", [Self.jsonArray(Set(pairs.values.joined()))])
            let byID = Dictionary(found.map { ($0.persistentBackingData.id!, $0) }, uniquingKeysWith: { first, _ in first })
            for backing in pending {
                let members = (backing.id.flatMap { pairs[$0] } ?? []).compactMap { byID[$0] }
                backing.relationships[index] = .toMany(.init(saved: members))
            }
        }
    }

    /// The identifiers of the objects matching the descriptor, in its order (SwiftData's
    /// `fetchIdentifiers`). With no unsaved changes that count, they are read from the rows alone,
    /// making no objects:
    ///
    ///     SELECT id FROM "volume" WHERE … ORDER BY … LIMIT … OFFSET …
    ///
    /// otherwise they are those of `fetch(descriptor)`'s objects (an inserted object's has no row
    /// id until it is saved).
    public func fetchIdentifiers<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>) throws -> [PersistentIdentifier] {
        let condition = try descriptor.loweredPredicate()
        guard descriptor.includePendingChanges, hasChanges else {
            let (clauses, bindings) = try descriptor.sqlClauses(condition, excluding: [])
            var identifiers: [PersistentIdentifier] = []
            try database.forEachRow("SELECT id FROM \(Model.entity.table)\(clauses)", bindings) { row in
                identifiers.append(PersistentIdentifier(entity: Model.entity.name, id: row.integer(at: 0)))
            }
            return identifiers
        }
        return try fetch(descriptor).map(\.persistentModelID)
    }

    /// How many objects match the descriptor (its limit and offset apply), unsaved changes
    /// included as `fetch` includes them; without a limit or offset, and with a predicate on the
    /// entity's own attributes, the saved rows but those of changed objects are counted in SQL and
    /// the unsaved objects that can match (`PendingChanges.candidates`) are tested in memory.
    public func fetchCount<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>) throws -> Int {
        let condition = try descriptor.loweredPredicate()
        guard descriptor.includePendingChanges, hasChanges else { return try storedCount(descriptor, condition) }
        guard descriptor.fetchLimit == nil, descriptor.fetchOffset == nil, !descriptor.readsRelationships(condition) else { return try fetch(descriptor).count }
        let entity = Model.entity
        // Without a predicate (no test) every object counts: the stored rows but the deleted ones,
        // and the inserted objects (a count after each insert does not look at those inserted before).
        guard let test = UnsavedRowTest(condition, entity: entity) else {
            return try storedCount(descriptor, nil, excluding: pending.deletedIDs(of: entity)) + pending.insertedCount(of: entity)
        }
        let matching = try pending.candidates(for: condition, of: entity).filter { object in
            try !object.persistentBackingData.isDeleted && test.matches(object.persistentBackingData, in: database)
        }
        return try storedCount(descriptor, condition, excluding: pending.deletedIDs(of: entity) + pending.changedIDs(of: entity)) + matching.count
    }

    /// How many saved rows but `excluded` match the descriptor (its predicate lowered: `condition`).
    ///
    ///     SELECT count(*) FROM (SELECT id FROM "volume" WHERE … LIMIT … OFFSET …)
    private func storedCount<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>, _ condition: QueryCondition?, excluding excluded: [Int64] = []) throws -> Int {
        let (clauses, bindings) = try descriptor.sqlClauses(condition, excluding: excluded)
        return Int(try database.scalar("SELECT count(*) FROM (SELECT id FROM \(Model.entity.table)\(clauses))", bindings))
    }

    /// Runs `body` with the rows (and join rows) of inserted and changed objects written, in a transaction then
    /// rolled back (the store never holds them); inserted objects are registered under their
    /// passing ids meanwhile, so a query finds them rather than new copies.
    private func withUnsavedRows<T>(_ body: () throws -> T) throws -> T {
        let newObjects = inserted
        var assigned: [ModelBackingData] = []
        try database.execute("BEGIN; PRAGMA defer_foreign_keys = ON")
        defer {
            try? database.execute("ROLLBACK")
            for backing in assigned {
                registries[ObjectIdentifier(backing.entity)]?.remove(backing.id!, ifItIs: backing)
                backing.id = nil
            }
        }
        do {
            try writeRows(of: newObjects, assigning: &assigned)
            // The links too, which a count through a to-many relationship reads.
            _ = try writeJoinRows(of: [newObjects, changed].joined())
        } catch {
            throw translate(error)
        }
        for backing in assigned { registry(for: backing.entity).register(backing, id: backing.id!) }
        return try body()
    }

    /// Loads relationship `index` of a registered object (one query, prepared once per relationship).
    /// A load the store fails (an I/O error, a table another process dropped) stops the program with
    /// the error, as a fault Core Data cannot fulfil does: a property cannot throw, and an empty
    /// answer would be a wrong one.
    @_spi(Backend) public func load(_ index: Int, of backing: ModelBackingData, foreignID: Int64?) -> ModelBackingData.RelationshipState? {
        let relationship = backing.entity.relationships[index]
        guard let id = backing.id, let (target, sql) = loadQuery(index, of: backing.entity) else {
            return relationship.isToMany ? .toMany(.init()) : .toOne(nil)
        }
        func members(_ key: Int64) -> [any PersistentModel] {
            do {
                // An array of the list's length: a list that grew row by row has room to spare.
                return Array(try objects(ofType: target, sql, [.integer(key)])[...])
            } catch {
                preconditionFailure("loading \(backing.entity.name).\(relationship.name) of \(backing.entity.name)#\(id) failed: \(error)")
            }
        }
        switch relationship.storage {
        case .column:
            guard let foreignID else { return .toOne(nil) }
            return .toOne(members(foreignID).first)
        case .inverseColumn:
            let found = members(id)
            return relationship.isToMany ? .toMany(.init(found)) : .toOne(found.first)
        case .joinTable:
            return .toMany(.init(saved: members(id)))
        }
    }

    /// Never called: this context loads every relationship it is asked for.
    @_spi(Backend) public func relationshipNotLoaded(_ index: Int, of backing: ModelBackingData) -> Never {
        preconditionFailure("\(backing.entity.name).\(backing.entity.relationships[index].name) could not be loaded")
    }

    /// Never called: this context loads every relationship on access, so a partner's old partner
    /// is always read before it is let go of.
    @_spi(Backend) public func relationshipReplacedUnread(_ backing: ModelBackingData, through index: Int) {
        preconditionFailure("\(backing.entity.name).\(backing.entity.relationships[index].name) was taken unread in a context that loads on access")
    }

    /// Never called: this context loads every list on access, so a list gains members loaded.
    @_spi(Backend) public func listNotLoadedGained(_ member: ModelBackingData, _ backing: ModelBackingData, through index: Int) {
        preconditionFailure("\(backing.entity.name).\(backing.entity.relationships[index].name) gained a member unloaded in a context that loads on access")
    }

    /// The query that loads relationship `index` of `entity` for one object:
    ///
    ///     SELECT id, … FROM "volume" WHERE "writer_id" = ? ORDER BY id
    private func loadQuery(_ index: Int, of entity: EntityDescription) -> (target: any PersistentModel.Type, sql: String)? {
        let key = RelationshipKey(entity: ObjectIdentifier(entity), index: index)
        if let query = loadQueries[key] { return query }
        guard let target = modelTypes[entity.relationships[index].target] else { return nil }
        let condition = switch entity.relationships[index].storage {
        case .column: "id = ?"
        case let .inverseColumn(column): "\(column) = ?"
        case let .joinTable(table, own, other): "id IN (SELECT \(other) FROM \(table) WHERE \(own) = ?)"
        }
        let query = (target, "\(target.entity.selectSQL) WHERE \(condition) ORDER BY id")
        loadQueries[key] = query
        return query
    }

    private func fetchAny(_ type: any PersistentModel.Type, where condition: String, _ bindings: [SQLiteValue]) throws -> [any PersistentModel] {
        try objects(ofType: type, "\(type.entity.selectSQL) WHERE \(condition) ORDER BY id", bindings)
    }

    /// Runs a query selecting `type.entity.selectSQL`'s columns and returns, for each row, the
    /// object this context has registered for it, else a new one built from the row.
    func objects(ofType type: any PersistentModel.Type, _ sql: String, _ bindings: [SQLiteValue]) throws -> [any PersistentModel] {
        var result: [any PersistentModel] = []
        try forEachObject(ofType: type, sql, bindings) { result.append($0) }
        return result
    }

    /// Runs a query selecting `type.entity.selectSQL`'s columns and calls `body` with, for each
    /// row, the object this context has registered for it, else a new one built from the row.
    func forEachObject(ofType type: any PersistentModel.Type, _ sql: String, _ bindings: [SQLiteValue], _ body: (any PersistentModel) -> Void) throws {
        let entity = type.entity
        let registry = registry(for: entity)
        try database.forEachRow(sql, bindings) { row in
            let id = row.integer(at: 0)
            // The model made for a new row: the registry and the backing data do not retain it.
            var made: (any PersistentModel)?
            let backing = registry.registered(id) {
                let backing = ModelBackingData(entity: entity, id: id, contextReference: objectReference) { slot in
                    entity.selectedPositions[slot].map(row.value(at:)) ?? .null
                }
                let model = type.init(backingData: backing)
                backing.object = model
                made = model
                return backing
            }
            body(made ?? backing.object!)
        }
    }
}
