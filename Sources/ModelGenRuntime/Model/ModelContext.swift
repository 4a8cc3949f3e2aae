import Foundation

/// An error saving or fetching, saying what happened and where.
public enum ModelContextError: Error, Equatable, CustomStringConvertible {
    /// A unique attribute would hold the same value twice.
    case uniqueViolation(entity: String, attribute: String)
    /// Another constraint failed (a required relationship left empty, a foreign key).
    case constraintViolation(String)
    /// A `#Predicate` or sort the runtime cannot translate to SQL, naming the construct.
    case unsupportedPredicate(String)
    /// A value the store cannot hold exactly (a `Double` or `Float` NaN, which SQLite stores as NULL).
    case unstorableValue(entity: String, attribute: String, reason: String)

    public var description: String {
        switch self {
        case let .uniqueViolation(entity, attribute):
            return "cannot save: another \(entity) already has this \(attribute) (\(entity).\(attribute) is unique); nothing was saved"
        case let .constraintViolation(message):
            return "cannot save: \(message); nothing was saved"
        case let .unstorableValue(entity, attribute, reason):
            return "cannot save \(entity).\(attribute): \(reason); nothing was saved"
        case let .unsupportedPredicate(construct):
            return "cannot translate \(construct) to SQL; rewrite the predicate with comparisons, &&, ||, !, nil checks, contains or hasPrefix"
        }
    }
}

/// Tracks model objects, their changes and deletions, and saves them in one transaction
/// (SwiftData's `ModelContext`). One object per row per context (an identity map).
public final class ModelContext {
    public let container: ModelContainer
    var database: SQLiteDatabase { container.database }
    /// Loaded and saved objects, by entity (`ObjectIdentifier` of its description) and row id. An
    /// object with no unsaved change lives only while the app holds it (as in SwiftData), so memory
    /// follows what the app keeps, not every row it ever read: entries are unowned and leave when
    /// their model goes (its backing data's deinit calls `forget`). Objects with unsaved changes
    /// are held by `changed`.
    private var registries: [ObjectIdentifier: Registry] = [:]
    /// The schema's model classes by entity name.
    private let modelTypes: [String: any PersistentModel.Type]
    /// The query that loads each relationship, built on first use.
    private var loadQueries: [RelationshipKey: (target: any PersistentModel.Type, sql: String)] = [:]

    /// The registered objects of one entity: the backing data of each, by row id (its model is
    /// `backing.object`). Unretained: an entry leaves when its model goes (`forget`, called from
    /// the model's deinit and, at the latest, from the backing data's own), before the backing
    /// data it names is freed.
    private final class Registry {
        private var table = RowIDTable()

        subscript(id: Int64) -> ModelBackingData? { table[id] }

        var isEmpty: Bool { table.count == 0 }
        var all: [(id: Int64, backing: ModelBackingData)] { table.all }

        func register(_ backing: ModelBackingData, id: Int64) { table.insert(backing, for: id) }

        func remove(_ id: Int64) { table.remove(id) }

        /// Removes the entry of `id` if it is `backing`'s (not a later object's for the same row).
        func remove(_ id: Int64, ifItIs backing: ModelBackingData) { table.remove(id) { $0 === backing } }
    }

    private struct RelationshipKey: Hashable {
        var entity: ObjectIdentifier
        var index: Int
    }
    private var inserted: [any PersistentModel] = []
    private var changed: [any PersistentModel] = []
    private var deleted: [any PersistentModel] = []
    /// Membership of `inserted` and `changed`, so that tracking stays linear in the objects touched.
    /// Each inserted object's place in the order of insertion (the order its id will have).
    private var insertionOrder: [ObjectIdentifier: Int] = [:]
    private var insertions = 0
    /// Unsaved objects by entity and attribute value, for fetches that ask for one value.
    private var pendingIndexes: [PendingIndexKey: PendingValueIndex] = [:]

    private struct PendingIndexKey: Hashable {
        var entity: ObjectIdentifier
        var attribute: Int
    }
    private var changedIdentities: Set<ObjectIdentifier> = []
    /// SwiftData saves on its own run loop; here `autosaveEnabled` makes every `insert` and
    /// `delete` save at once.
    public var autosaveEnabled = false

    public init(_ container: ModelContainer) {
        self.container = container
        modelTypes = Dictionary(container.schema.models.map { ($0.entity.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    public var hasChanges: Bool { !inserted.isEmpty || !changed.isEmpty || !deleted.isEmpty }
    public var insertedModelsArray: [any PersistentModel] { inserted }
    public var changedModelsArray: [any PersistentModel] { changed }
    public var deletedModelsArray: [any PersistentModel] { deleted }

    // MARK: - Insert and delete

    /// Inserts a new object, and the new objects it refers to, into the context.
    public func insert<Model: PersistentModel>(_ model: Model) {
        insertGraph(model)
        if autosaveEnabled { try? save() }
    }

    /// Inserts `model` if it is new and in no context, and the new objects it refers to.
    func insertGraph(_ model: any PersistentModel) {
        let backing = model.persistentBackingData
        guard backing.id == nil, backing.context == nil || backing.context === self, insertionOrder[ObjectIdentifier(model)] == nil else { return }
        insertionOrder[ObjectIdentifier(model)] = insertions
        insertions += 1
        backing.object = model
        backing.context = self
        inserted.append(model)
        indexPending(model)
        for state in backing.relationships {
            switch state {
            case let .toOne(object?): insertGraph(object)
            case let .toMany(list): list.objects.forEach(insertGraph)
            default: break
            }
        }
    }

    /// Marks an object for deletion when the context saves: `isDeleted` is true until then.
    /// Saving runs the entity's safe-deletion plan: cascades, deny checks, nullification.
    public func delete<Model: PersistentModel>(_ model: Model) {
        let backing = model.persistentBackingData
        if insertionOrder.removeValue(forKey: ObjectIdentifier(model)) != nil {
            inserted.removeAll { $0 === model }
            for (key, index) in pendingIndexes where key.entity == ObjectIdentifier(backing.entity) {
                index.remove(model, value: backing.values[index.attribute])
            }
            backing.detachFromRelated()
            backing.context = nil
            return
        }
        guard backing.context === self, !backing.isDeleted else { return }
        backing.isDeleted = true
        deleted.append(model)
        if autosaveEnabled { try? save() }
    }

    /// Deletes every object of `model` matching the predicate (all when nil) through the entity's
    /// deletion plan, in one transaction, at once (as SwiftData's `delete(model:where:)`), and
    /// reports what was deleted and nullified. A dry run reports the same and changes nothing.
    /// A refused delete throws `DeletionRefused` and changes nothing.
    @discardableResult
    public func delete<Model: PersistentModel>(model: Model.Type, where predicate: Predicate<Model>? = nil, dryRun: Bool = false) throws -> DeletionReport {
        guard let program = container.schema.deletionProgram(for: Model.entity.name) else {
            preconditionFailure("\(Model.entity.name) is not in schema \(container.schema)")
        }
        let seed: DeletionSeed
        if let predicate {
            let (condition, bindings) = try PredicateTranslator<Model>.translate(predicate)
            seed = .matching(condition: condition, bindings: bindings)
        } else {
            seed = .all
        }
        let report = try DeletionExecutor(database: database).run(program, seed: seed, dryRun: dryRun)
        if !dryRun { try refreshAfterDeletion() }
        return report
    }

    func didChange(_ backing: ModelBackingData) {
        guard backing.id != nil, let object = backing.object, changedIdentities.insert(ObjectIdentifier(object)).inserted else { return }
        changed.append(object)
        indexPending(object)
    }

    /// Whether some fetch indexed unsaved objects by an attribute's value (see `pendingValueChanged`).
    var indexesPendingValues: Bool { !pendingIndexes.isEmpty }

    /// An unsaved object's attribute changed from `old`: the indexes of that attribute follow.
    func pendingValueChanged(_ backing: ModelBackingData, attribute: Int, from old: SQLiteValue) {
        guard let object = backing.object, let index = pendingIndexes[PendingIndexKey(entity: ObjectIdentifier(backing.entity), attribute: attribute)],
              insertionOrder[ObjectIdentifier(object)] != nil || changedIdentities.contains(ObjectIdentifier(object)) else { return }
        index.move(object, from: old)
    }

    /// A newly unsaved object joins the indexes of its entity.
    private func indexPending(_ object: any PersistentModel) {
        guard !pendingIndexes.isEmpty else { return }
        for (key, index) in pendingIndexes where key.entity == ObjectIdentifier(object.persistentBackingData.entity) { index.add(object) }
    }

    /// The index of the unsaved objects of `entity` by `attribute`, made on first use.
    private func pendingIndex(_ entity: EntityDescription, _ attribute: Int) -> PendingValueIndex {
        let key = PendingIndexKey(entity: ObjectIdentifier(entity), attribute: attribute)
        if let index = pendingIndexes[key] { return index }
        let index = PendingValueIndex(attribute: attribute, objects: (inserted + changed).lazy.filter { $0.persistentBackingData.entity === entity })
        pendingIndexes[key] = index
        return index
    }

    // MARK: - Save and rollback

    /// Writes inserts, changes and deletions in one transaction; on failure nothing is written
    /// and the error says why.
    public func save() throws {
        guard hasChanges else { return }
        let newObjects = inserted
        try database.execute("BEGIN IMMEDIATE; PRAGMA defer_foreign_keys = ON")
        var assigned: [ModelBackingData] = []
        var savedMembers: [(ModelBackingData, Int, MemberIDs)] = []
        do {
            try writeRows(of: newObjects, assigning: &assigned)
            savedMembers = try writeJoinRows(of: newObjects + changed)
            var deletedIDs: [(entity: String, ids: [Int64])] = []
            var positions: [String: Int] = [:]
            for object in deleted {
                let entity = type(of: object).entity.name
                if positions[entity] == nil {
                    positions[entity] = deletedIDs.count
                    deletedIDs.append((entity, []))
                }
                deletedIDs[positions[entity]!].ids.append(object.persistentBackingData.id!)
            }
            for (entity, ids) in deletedIDs {
                guard let program = container.schema.deletionProgram(for: entity) else { continue }
                _ = try DeletionExecutor(database: database).run(program, seed: .ids(ids))
            }
            try database.execute("COMMIT")
        } catch {
            try? database.execute("ROLLBACK")
            for backing in assigned { backing.id = nil }
            throw translate(error)
        }
        for object in newObjects { register(object) }
        for object in newObjects + changed { object.persistentBackingData.didSave() }
        for (backing, index, ids) in savedMembers { backing.didSaveMembers(index, ids) }
        let hadDeletions = !deleted.isEmpty
        for object in deleted {
            let backing = object.persistentBackingData
            registries[ObjectIdentifier(backing.entity)]?.remove(backing.id!)
            backing.isDeleted = false
            backing.context = nil
        }
        clearPendingChanges()
        if hadDeletions { try refreshAfterDeletion() }
    }

    /// Gives new objects ids and writes their rows, and the changed columns of changed objects.
    private func writeRows(of newObjects: [any PersistentModel], assigning assigned: inout [ModelBackingData]) throws {
        try assignIDs(newObjects, &assigned)
        for object in newObjects { try write(object, isNew: true) }
        for object in changed where !object.persistentBackingData.isDeleted { try write(object, isNew: false) }
    }

    /// Discards unsaved inserts, changes and deletions.
    public func rollback() {
        for object in inserted { object.persistentBackingData.context = nil }
        for object in changed + deleted { object.persistentBackingData.revert() }
        for object in registeredObjects { object.persistentBackingData.revert() }
        clearPendingChanges()
    }

    private func clearPendingChanges() {
        inserted = []
        changed = []
        deleted = []
        insertionOrder = [:]
        changedIdentities = []
        pendingIndexes = [:]
    }

    /// Gives new objects row ids: one past the largest id of their table.
    private func assignIDs(_ objects: [any PersistentModel], _ assigned: inout [ModelBackingData]) throws {
        var next: [String: Int64] = [:]
        for object in objects {
            let entity = type(of: object).entity
            if next[entity.name] == nil {
                next[entity.name] = try database.scalar("SELECT coalesce(max(id), 0) + 1 FROM \(entity.table)")
            }
            object.persistentBackingData.id = next[entity.name]!
            next[entity.name]! += 1
            assigned.append(object.persistentBackingData)
        }
    }

    /// Inserts a new object's row, or updates the columns of a changed one that changed: the
    /// attributes set since the last save and the keys that differ from the stored ones.
    private func write(_ object: any PersistentModel, isNew: Bool) throws {
        let backing = object.persistentBackingData
        let entity = backing.entity
        for (index, attribute) in entity.attributes.enumerated() where attribute.column != nil && (isNew || backing.changedAttributes.contains(index)) {
            if case let .real(number) = backing.values[index], number.isNaN {
                throw ModelContextError.unstorableValue(entity: entity.name, attribute: attribute.name, reason: "NaN cannot be stored (SQLite would read it back as nil); store nil or a number")
            }
        }
        if isNew {
            // Bound straight from the object, through the entity's one INSERT statement.
            try database.runEach(entity.insertSQL, CollectionOfOne(backing)) { statement, backing in
                statement.bind(.integer(backing.id!), at: 1)
                var position: Int32 = 2
                for (index, attribute) in entity.attributes.enumerated() where attribute.column != nil {
                    statement.bind(backing.values[index], at: position)
                    position += 1
                }
                for (index, _) in entity.foreignKeys {
                    statement.bind(backing.foreignID(index).map(SQLiteValue.integer) ?? .null, at: position)
                    position += 1
                }
            }
            return
        }
        var columns: [String] = [], values: [SQLiteValue] = []
        for (index, attribute) in entity.attributes.enumerated() {
            guard let column = attribute.column, backing.changedAttributes.contains(index) else { continue }
            columns.append(column)
            values.append(backing.values[index])
        }
        for (index, column) in entity.foreignKeys {
            let foreignID = backing.foreignID(index)
            guard foreignID != backing.savedForeignID(index) else { continue }
            columns.append(column)
            values.append(foreignID.map(SQLiteValue.integer) ?? .null)
        }
        guard !columns.isEmpty else { return }
        let assignments = columns.map { "\($0) = ?" }.joined(separator: ", ")
        try database.run("UPDATE \(entity.table) SET \(assignments) WHERE id = ?", values + [.integer(backing.id!)])
    }

    /// The pairs of one join table that a save adds and removes; ids in the order of `columns`.
    /// Both sides of a many-to-many relationship may report the same pair: they are written once,
    /// in key order (which keeps the join table's index appending rather than seeking).
    private struct JoinTableChanges {
        var columns: (String, String)
        var added: [JoinPair] = []
        var removed: [JoinPair] = []
    }

    private struct JoinPair: Comparable {
        var first: Int64, second: Int64

        static func < (lhs: JoinPair, rhs: JoinPair) -> Bool {
            (lhs.first, lhs.second) < (rhs.first, rhs.second)
        }
    }

    /// The pairs sorted, each once.
    private func ordered(_ pairs: [JoinPair]) -> [JoinPair] {
        var unique: [JoinPair] = []
        for pair in pairs.sorted() where unique.last != pair { unique.append(pair) }
        return unique
    }

    /// Writes the join rows added and removed since the last save; returns the members written,
    /// which become the saved ones when the transaction commits.
    private func writeJoinRows(of objects: [any PersistentModel]) throws -> [(ModelBackingData, Int, MemberIDs)] {
        var tables: [String: JoinTableChanges] = [:]
        var written: [(ModelBackingData, Int, MemberIDs)] = []
        for object in objects {
            let backing = object.persistentBackingData
            guard let id = backing.id else { continue }
            for (index, current, saved) in backing.changedMembers() {
                guard case let .joinTable(table, own, target) = backing.entity.relationships[index].storage else { continue }
                // Both sides name the same two columns; the pair is kept in the order of their names.
                let ownFirst = own < target
                func pair(_ member: Int64) -> JoinPair { ownFirst ? JoinPair(first: id, second: member) : JoinPair(first: member, second: id) }
                // Changed in place in the dictionary (a copy taken out would copy the lists at each append).
                tables[table, default: JoinTableChanges(columns: ownFirst ? (own, target) : (target, own))].added += current.subtracting(saved).map(pair)
                tables[table]!.removed += saved.subtracting(current).map(pair)
                written.append((backing, index, current))
            }
        }
        for (table, changes) in tables.sorted(by: { $0.key < $1.key }) {
            let (first, second) = changes.columns
            try database.runEach("DELETE FROM \(table) WHERE \(first) = ? AND \(second) = ?", ordered(changes.removed)) { statement, pair in
                statement.bind(.integer(pair.first), at: 1)
                statement.bind(.integer(pair.second), at: 2)
            }
            try database.runEach("INSERT OR IGNORE INTO \(table) (\(first), \(second)) VALUES (?, ?)", ordered(changes.added)) { statement, pair in
                statement.bind(.integer(pair.first), at: 1)
                statement.bind(.integer(pair.second), at: 2)
            }
        }
        return written
    }

    /// SQLite's constraint messages, in the schema's words.
    private func translate(_ error: Error) -> Error {
        guard let sqliteError = error as? SQLiteError, sqliteError.isConstraintViolation else { return error }
        if let range = sqliteError.message.range(of: "UNIQUE constraint failed: ") {
            let failed = sqliteError.message[range.upperBound...].split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            for model in container.schema.models {
                for attribute in model.entity.attributes where "\(model.entity.table).\(attribute.column ?? "")" == failed {
                    return ModelContextError.uniqueViolation(entity: model.entity.name, attribute: attribute.name)
                }
            }
        }
        return ModelContextError.constraintViolation(sqliteError.message)
    }

    // MARK: - Fetch

    /// The objects matching the descriptor, one object per row for this context.
    ///
    ///     SELECT id, … FROM "volume" WHERE … ORDER BY … LIMIT … OFFSET …
    ///
    /// Unsaved changes count, as in SwiftData (`includePendingChanges`, true by default): inserted
    /// objects that match are included, changed ones match by their values now, and objects
    /// deleted but not yet saved are left out. A fetch in id order (no sort, no offset) whose
    /// predicate reads only the entity's own columns queries the saved rows and then matches the
    /// unsaved objects of the entity in memory (`Predicate.evaluate`, which selects what the SQL
    /// selects), looking only at those holding the value an equality in the predicate requires
    /// (`PendingValueIndex`). Any other fetch runs on the rows of the unsaved objects written into
    /// a transaction that is then rolled back: predicates, order, offset and limit mean exactly
    /// what they mean for saved rows, at a cost that grows with the number of unsaved objects.
    public func fetch<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>) throws -> [Model] {
        let entity = Model.entity
        var result: [Model]
        if !descriptor.includePendingChanges || !hasChanges {
            result = try storedMatches(descriptor)
        } else {
            let deletedIDs = deleted.compactMap { $0.persistentBackingData.entity === entity ? $0.persistentBackingData.id : nil }
            // Through a relationship, any unsaved object may change what matches or the order.
            let readsRelationships = try descriptor.readsRelationships()
            if descriptor.sortBy.isEmpty, descriptor.fetchOffset == nil, !readsRelationships {
                result = try matchesInMemory(descriptor, excluding: deletedIDs)
            } else if readsRelationships ? !inserted.isEmpty || !changed.isEmpty
                        : inserted.contains(where: { $0.persistentBackingData.entity === entity }) || changed.contains(where: { $0.persistentBackingData.entity === entity }) {
                result = try withUnsavedRows { try storedMatches(descriptor, excluding: deletedIDs) }
            } else {
                result = try storedMatches(descriptor, excluding: deletedIDs)
            }
        }
        for keyPath in descriptor.relationshipKeyPathsForPrefetching {
            guard let name = Model.propertyName(for: keyPath), let index = entity.relationships.firstIndex(where: { $0.name == name }) else {
                throw ModelContextError.unsupportedPredicate("prefetching \(keyPath), which is not a relationship of \(entity.name)")
            }
            try prefetch(index, of: result.map(\.persistentBackingData))
        }
        return result
    }

    /// The rows matching the descriptor, but `excluded`, as objects.
    private func storedMatches<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>, excluding excluded: [Int64] = []) throws -> [Model] {
        let (clauses, bindings) = try descriptor.sqlClauses(excluding: excluded)
        // The registry holds only `Model`s for `Model.entity`, so the cast cannot fail.
        return try objects(ofType: Model.self, Model.entity.selectSQL + clauses, bindings).map { unsafeDowncast($0, to: Model.self) }
    }

    /// A fetch in id order whose predicate reads only the entity's columns: the saved rows that
    /// match, corrected by the entity's unsaved objects matched in memory; new objects come last,
    /// in the order they were inserted (the order their ids will have). When the predicate
    /// requires an attribute to equal a value, only the unsaved objects holding that value are
    /// looked at (`PendingValueIndex`).
    private func matchesInMemory<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>, excluding deletedIDs: [Int64]) throws -> [Model] {
        let entity = Model.entity
        func matches(_ object: Model) throws -> Bool { try descriptor.predicate?.evaluate(object) ?? true }
        var stored = descriptor
        // A changed object may leave the page, so the limit applies after the merge.
        if !changed.isEmpty { stored.fetchLimit = nil }
        var result = try storedMatches(stored, excluding: deletedIDs).filter { try !changedIdentities.contains(ObjectIdentifier($0)) || matches($0) }
        let candidates: [any PersistentModel]
        if let predicate = descriptor.predicate, let term = try PredicateTranslator<Model>.condition(predicate).requiredEquality,
           PendingValueIndex.indexes(term.kind), let attribute = entity.attributes.firstIndex(where: { $0.column.map(SQLDialect.unquoted) == term.column }) {
            candidates = pendingIndex(entity, attribute).objects(withValue: term.value)
        } else {
            candidates = (inserted + changed).filter { $0.persistentBackingData.entity === entity }
        }
        let found = Set(result.map(ObjectIdentifier.init))
        var joining: [Model] = [], new: [Model] = []
        for candidate in candidates where !candidate.persistentBackingData.isDeleted && !found.contains(ObjectIdentifier(candidate)) {
            let object = unsafeDowncast(candidate, to: Model.self)
            guard try matches(object) else { continue }
            if object.persistentBackingData.id == nil { new.append(object) } else { joining.append(object) }
        }
        if !joining.isEmpty {
            result = (result + joining).sorted { $0.persistentBackingData.id! < $1.persistentBackingData.id! }
        }
        result += new.sorted { insertionOrder[ObjectIdentifier($0)] ?? 0 < insertionOrder[ObjectIdentifier($1)] ?? 0 }
        if let limit = descriptor.fetchLimit { result = Array(result.prefix(limit)) }
        return result
    }

    /// Loads relationship `index` of every object that has not loaded it, in one query:
    ///
    ///     SELECT … FROM "book" WHERE "writer_id" IN (SELECT value FROM json_each(?)) ORDER BY id
    private func prefetch(_ index: Int, of objects: [ModelBackingData]) throws {
        let pending = objects.filter { if case .unloaded = $0.relationship(index) { return true } else { return false } }
        guard let first = pending.first, let target = modelTypes[first.entity.relationships[index].target] else { return }
        let relationship = first.entity.relationships[index]
        func json(_ ids: some Sequence<Int64>) -> SQLiteValue { .text("[" + ids.map(String.init).joined(separator: ",") + "]") }
        switch relationship.storage {
        case .column:
            let foreignIDs = Set(pending.compactMap { backing -> Int64? in
                if case let .unloaded(foreignID) = backing.relationship(index) { return foreignID }
                return nil
            })
            let found = try fetchAny(target, where: "id IN (SELECT value FROM json_each(?))", [json(foreignIDs)])
            let byID = Dictionary(found.map { ($0.persistentBackingData.id!, $0) }, uniquingKeysWith: { first, _ in first })
            for backing in pending {
                guard case let .unloaded(foreignID) = backing.relationship(index) else { continue }
                backing.relationships[index] = .toOne(foreignID.flatMap { byID[$0] })
            }
        case let .inverseColumn(column):
            let found = try fetchAny(target, where: "\(column) IN (SELECT value FROM json_each(?))", [json(pending.compactMap(\.id))])
            let key = target.entity.relationships.firstIndex { if case .column(column) = $0.storage { return true } else { return false } }
            var byOwner: [Int64: [any PersistentModel]] = [:]
            for object in found {
                if let key, let owner = object.persistentBackingData.savedForeignID(key) { byOwner[owner, default: []].append(object) }
            }
            for backing in pending {
                let members = backing.id.flatMap { byOwner[$0] } ?? []
                backing.relationships[index] = relationship.isToMany ? .toMany(.init(members)) : .toOne(members.first)
            }
        case let .joinTable(table, own, other):
            var pairs: [Int64: [Int64]] = [:]
            for row in try database.query("SELECT \(own), \(other) FROM \(table) WHERE \(own) IN (SELECT value FROM json_each(?)) ORDER BY \(other)", [json(pending.compactMap(\.id))]) {
                if let owner = row[0].integer, let member = row[1].integer { pairs[owner, default: []].append(member) }
            }
            let found = try fetchAny(target, where: "id IN (SELECT value FROM json_each(?))", [json(Set(pairs.values.joined()))])
            let byID = Dictionary(found.map { ($0.persistentBackingData.id!, $0) }, uniquingKeysWith: { first, _ in first })
            for backing in pending {
                let members = (backing.id.flatMap { pairs[$0] } ?? []).compactMap { byID[$0] }
                backing.relationships[index] = .toMany(.init(saved: members))
            }
        }
    }

    /// How many objects match the descriptor (its limit and offset apply).
    public func fetchCount<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>) throws -> Int {
        if descriptor.includePendingChanges && hasChanges { return try fetch(descriptor).count }
        let (clauses, bindings) = try descriptor.sqlClauses()
        return Int(try database.scalar("SELECT count(*) FROM (SELECT id FROM \(Model.entity.table)\(clauses))", bindings))
    }

    /// Runs `body` with the rows of inserted and changed objects written, in a transaction then
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
        } catch {
            throw translate(error)
        }
        for backing in assigned { registry(for: backing.entity).register(backing, id: backing.id!) }
        return try body()
    }

    /// Loads relationship `index` of a registered object (one query, prepared once per relationship).
    func load(_ index: Int, of backing: ModelBackingData, foreignID: Int64?) -> ModelBackingData.RelationshipState? {
        let relationship = backing.entity.relationships[index]
        guard let id = backing.id, let (target, sql) = loadQuery(index, of: backing.entity) else { return nil }
        switch relationship.storage {
        case .column:
            guard let foreignID else { return .toOne(nil) }
            return .toOne((try? objects(ofType: target, sql, [.integer(foreignID)]))?.first)
        case .inverseColumn:
            let found = (try? objects(ofType: target, sql, [.integer(id)])) ?? []
            return relationship.isToMany ? .toMany(.init(found)) : .toOne(found.first)
        case .joinTable:
            return .toMany(.init(saved: (try? objects(ofType: target, sql, [.integer(id)])) ?? []))
        }
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
    private func objects(ofType type: any PersistentModel.Type, _ sql: String, _ bindings: [SQLiteValue]) throws -> [any PersistentModel] {
        let entity = type.entity
        let registry = registry(for: entity)
        var result: [any PersistentModel] = []
        try database.forEachRow(sql, bindings) { row in
            let id = row.integer(at: 0)
            if let existing = registry[id]?.object {
                result.append(existing)
                return
            }
            var values: [SQLiteValue] = []
            values.reserveCapacity(entity.attributes.count + entity.foreignKeys.count)
            var position = 1
            for attribute in entity.attributes {
                if attribute.column != nil {
                    values.append(row.value(at: position))
                    position += 1
                } else {
                    values.append(.null)
                }
            }
            for _ in entity.foreignKeys {
                values.append(row.value(at: position))
                position += 1
            }
            let backing = ModelBackingData(entity: entity, id: id, values: values, context: self)
            let model = type.init(backingData: backing)
            backing.object = model
            registry.register(backing, id: id)
            result.append(model)
        }
        return result
    }

    /// After a delete ran in the database: detach objects whose rows are gone and bring every
    /// registered object's relationships up to date with the store, without losing unsaved work.
    /// An object with no pending changes forgets its loaded relationships (they load again on
    /// access); one with pending changes (and every inserted object) keeps them, minus the objects
    /// whose rows the delete removed, so the next `save` writes them.
    private func refreshAfterDeletion() throws {
        var detached: Set<ObjectIdentifier> = []
        var survivors: [(backing: ModelBackingData, foreignIDs: [Int64?])] = []
        for model in container.schema.models {
            let entity = model.entity
            guard let registry = registries[ObjectIdentifier(entity)], !registry.isEmpty else { continue }
            let objects = Dictionary(registry.all.compactMap { entry in entry.backing.object.map { (entry.id, $0) } }, uniquingKeysWith: { first, _ in first })
            let ids = "[" + objects.keys.map(String.init).joined(separator: ",") + "]"
            let columns = entity.foreignKeys.map(\.column)
            var rows: [Int64: [SQLiteValue]] = [:]
            for row in try database.query("SELECT id\(columns.map { ", " + $0 }.joined()) FROM \(entity.table) WHERE id IN (SELECT value FROM json_each(?))", [.text(ids)]) {
                if let id = row[0].integer { rows[id] = Array(row.dropFirst()) }
            }
            for (id, object) in objects {
                let backing = object.persistentBackingData
                guard let row = rows[id] else {
                    registry.remove(id)
                    backing.isDeleted = false
                    backing.context = nil
                    detached.insert(ObjectIdentifier(object))
                    continue
                }
                var foreignIDs = [Int64?](repeating: nil, count: entity.relationships.count)
                for (position, key) in entity.foreignKeys.enumerated() {
                    foreignIDs[key.index] = row[position].integer
                }
                survivors.append((backing, foreignIDs))
            }
        }
        for (backing, foreignIDs) in survivors {
            for (index, _) in backing.entity.foreignKeys { backing.setSavedForeignID(index, foreignIDs[index]) }
            if backing.isChanged {
                backing.forgetRelated(detached, storedForeignIDs: foreignIDs)
            } else {
                backing.unloadRelationships()
            }
        }
        for object in inserted { object.persistentBackingData.forgetRelated(detached, storedForeignIDs: nil) }
        if !detached.isEmpty {
            changed.removeAll { detached.contains(ObjectIdentifier($0)) }
            deleted.removeAll { detached.contains(ObjectIdentifier($0)) }
            changedIdentities.subtract(detached)
            pendingIndexes = [:]
        }
    }

    /// Forgets every registered object (after `deleteAllData`).
    func forgetAll() {
        for object in registeredObjects { object.persistentBackingData.context = nil }
        registries = [:]
        clearPendingChanges()
    }

    // MARK: - Identity

    /// Every registered object.
    private var registeredObjects: [any PersistentModel] {
        registries.values.flatMap { $0.all.compactMap(\.backing.object) }
    }

    private func registry(for entity: EntityDescription) -> Registry {
        if let registry = registries[ObjectIdentifier(entity)] { return registry }
        let registry = Registry()
        registries[ObjectIdentifier(entity)] = registry
        return registry
    }

    /// Registers a saved object.
    private func register(_ object: any PersistentModel) {
        let backing = object.persistentBackingData
        registry(for: backing.entity).register(backing, id: backing.id!)
    }

    /// A registered object's model went away: its entry goes too (unless the row has another object now).
    func forget(_ backing: ModelBackingData, id: Int64) {
        registries[ObjectIdentifier(backing.entity)]?.remove(id, ifItIs: backing)
    }

    /// The object this context has registered for the identifier, if any (SwiftData's
    /// `registeredModel(for:)`); an inserted object is found by its temporary identifier.
    public func registeredModel<Model: PersistentModel>(for identifier: PersistentIdentifier) -> Model? {
        guard let id = identifier.id else { return inserted.first { $0.persistentModelID == identifier } as? Model }
        guard let type = modelTypes[identifier.entity] else { return nil }
        return registries[ObjectIdentifier(type.entity)]?[id]?.object as? Model
    }

    /// The object with this identifier: the one registered, else loaded from the store (SwiftData's
    /// `model(for:)`, which cannot say that the row is gone: here that is nil).
    ///
    ///     SELECT id, … FROM "animal" WHERE id = ?
    public func model(for identifier: PersistentIdentifier) throws -> (any PersistentModel)? {
        guard let id = identifier.id else { return inserted.first { $0.persistentModelID == identifier } }
        guard let type = modelTypes[identifier.entity] else { return nil }
        if let object = registries[ObjectIdentifier(type.entity)]?[id]?.object { return object }
        return try fetchAny(type, where: "id = ?", [.integer(id)]).first
    }
}
