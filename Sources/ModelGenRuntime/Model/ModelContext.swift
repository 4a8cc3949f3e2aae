import Foundation
import ModelGenSchema

/// An error saving or fetching, saying what happened and where.
public enum ModelContextError: Error, Equatable, CustomStringConvertible {
    /// A unique attribute would hold the same value twice; for a compound constraint
    /// (`unique: [[a, b]]`), `attribute` names its attributes, `"a, b"`.
    case uniqueViolation(entity: String, attribute: String)
    /// Another constraint failed (a required relationship left empty, a foreign key).
    case constraintViolation(String)
    /// A `#Predicate` or sort the runtime cannot translate to SQL, naming the construct; where the
    /// runtime knows what to do instead, that follows the construct after `"; "` (and replaces the
    /// general advice in the description).
    case unsupportedPredicate(String)
    /// A fetch descriptor no query can run (a negative `fetchLimit` or `fetchOffset`), saying why.
    case invalidDescriptor(String)
    /// A value the store cannot hold exactly (a `Double` or `Float` NaN, which SQLite stores as
    /// NULL; on PostgreSQL, text with a NUL character or a `Decimal.nan`).
    case unstorableValue(entity: String, attribute: String, reason: String)
    /// A changed object's row is no longer in the store (another context or process deleted it
    /// after this one read it): its changes have nowhere to go.
    case deletedFromStore(entity: String, id: Int64)
    /// Another connection (a process, an extension, a second container) held the store's write
    /// lock for longer than the wait allowed, `seconds`: nothing was written; try again.
    case storeBusy(seconds: Int)
    /// A to-many relationship would hold `count` objects, outside the schema's bounds
    /// (`minimumModelCount`, `maximumModelCount`), in the object `entity`#`id`.
    case modelCountViolation(entity: String, id: Int64, relationship: String, count: Int, minimum: Int?, maximum: Int?)

    public var description: String {
        switch self {
        case let .uniqueViolation(entity, attribute) where attribute.contains(", "):
            return "cannot save: another \(entity) already has these values of \(attribute) (unique together); nothing was saved"
        case let .uniqueViolation(entity, attribute):
            return "cannot save: another \(entity) already has this \(attribute) (\(entity).\(attribute) is unique); nothing was saved"
        case let .constraintViolation(message):
            return "cannot save: \(message); nothing was saved"
        case let .unstorableValue(entity, attribute, reason):
            return "cannot save \(entity).\(attribute): \(reason); nothing was saved"
        case let .deletedFromStore(entity, id):
            return "cannot save the changes of \(entity)#\(id): its row was deleted from the store after this context read it; nothing was saved (roll back, or insert a new object made with its values)"
        case let .modelCountViolation(entity, id, relationship, count, minimum, maximum):
            let bounds = [minimum.map { "at least \($0) (minimumModelCount)" }, maximum.map { "at most \($0) (maximumModelCount)" }].compactMap { $0 }
            return "cannot save: \(entity)#\(id).\(relationship) would hold \(count) \(count == 1 ? "object" : "objects"), and \(entity).\(relationship) holds \(bounds.joined(separator: " and ")); nothing was saved (change the relationship, or roll back)"
        case let .storeBusy(seconds):
            return "cannot write: another connection held the store's write lock for more than \(seconds) s; nothing was written; try again"
        case let .invalidDescriptor(reason):
            return "cannot fetch with \(reason)"
        case let .unsupportedPredicate(construct):
            if let advice = construct.range(of: "; ") {
                return "cannot translate \(construct[..<advice.lowerBound]) to SQL; \(construct[advice.upperBound...])"
            }
            return "cannot translate \(construct) to SQL; rewrite the predicate with comparisons, &&, ||, !, nil checks, contains or hasPrefix"
        }
    }
}

/// Tracks model objects, their changes and deletions, and saves them in one transaction
/// (SwiftData's `ModelContext`). One object per row per context (an identity map).
public final class ModelContext {
    /// The container of the context. A context made with `ModelContext(container)` keeps its
    /// container alive; the container's own `mainContext` does not (the container keeps it, and
    /// each keeping the other would keep both, and the store's connection, forever). The main
    /// context keeps the store and the schema, so it works on when the app holds only it; asked
    /// for its container then, it gives a container over the same store whose main context it is.
    public var container: ModelContainer {
        if let container = retainedContainer ?? mainContextContainer { return container }
        let container = ModelContainer(reopening: database, schema: schema, configuration: configuration, mainContext: self)
        mainContextContainer = container
        return container
    }
    private let retainedContainer: ModelContainer?
    private weak var mainContextContainer: ModelContainer?
    let database: SQLiteDatabase
    let schema: any ModelSchemaDefinition.Type
    private let configuration: ModelConfiguration
    /// Loaded and saved objects, by entity (`ObjectIdentifier` of its description) and row id. An
    /// object with no unsaved change lives only while the app holds it (as in SwiftData), so memory
    /// follows what the app keeps, not every row it ever read: entries are unowned and leave when
    /// their model goes (its backing data's deinit calls `forget`). Objects with unsaved changes
    /// are held by `changed`.
    @exclusivity(unchecked) var registries: [ObjectIdentifier: Registry] = [:]
    /// The registry `forget` used last, and its entity: objects are freed in runs of one entity,
    /// and each would otherwise hash its entity to find its registry.
    @exclusivity(unchecked) private var forgetting: (entity: ObjectIdentifier, registry: Unmanaged<Registry>)?
    /// The schema's model classes by entity name.
    let modelTypes: [String: any PersistentModel.Type]
    /// For each join table written, the column its rows are sorted by first (`sortColumn(of:)`).
    var joinTableSortColumns: [String: String] = [:]
    /// The query that loads each relationship, built on first use.
    var loadQueries: [RelationshipKey: (target: any PersistentModel.Type, sql: String)] = [:]
    /// The `UPDATE` of each set of columns a save has written (`updateStatement(_:writing:)`).
    private var updateStatements: [UpdateShape: SQLiteStatement] = [:]
    /// The update a save ran last: changed objects come in runs of one entity with the same
    /// changed columns, whose statement then needs no lookup.
    private var lastUpdate: (shape: UpdateShape, statement: SQLiteStatement)?
    /// The slots of the columns an update writes, kept from object to object (no array per object).
    private var updateSlots: [Int] = []
    /// Each entity's unique constraints and the columns of them a save can set aside, by entity
    /// name (`UniqueConstraintCatalog`), looked up on the first save that needs them.
    private lazy var uniqueConstraints = UniqueConstraintCatalog.constraints(of: schema)

    /// An entity and the slots of the columns an update writes.
    private struct UpdateShape: Hashable {
        let entity: ObjectIdentifier
        let slots: [Int]
    }

    /// The registered objects of one entity: the backing data of each, by row id (its model is
    /// `backing.object`). Unretained: an entry leaves when its model goes (`forget`, called from
    /// the model's deinit and, at the latest, from the backing data's own).
    ///
    /// Entries leave in batches. Objects go in the order the app drops them (a fetch's result is
    /// freed in its sort order), which is no order of ids: removing each entry as its model went
    /// cost a cache miss in the table per object, half the time of freeing a fetch's objects. A
    /// leaving entry is queued instead, with its backing data's address, and the queue is emptied
    /// before the table is next read or written, in one loop whose misses overlap. Until then the
    /// table may name freed backing data, which nothing reads: every access empties the queue
    /// first, and an entry is removed only while it still names the address queued (no entry can
    /// be made between the queueing and the removal, so an address reused by then is not in it).
    final class Registry {
        @exclusivity(unchecked) private var table = RowIDTable()
        /// Entries whose model went, still in the table.
        @exclusivity(unchecked) private var leaving: [(id: Int64, backing: Unmanaged<ModelBackingData>)] = []
        /// The most entries queued before they are removed (the queue's memory stays bounded).
        private static let batchSize = 4_096

        subscript(id: Int64) -> ModelBackingData? {
            removeLeaving()
            return table[id]
        }

        var isEmpty: Bool {
            removeLeaving()
            return table.count == 0
        }

        var all: [(id: Int64, backing: ModelBackingData)] {
            removeLeaving()
            return table.all
        }

        func register(_ backing: ModelBackingData, id: Int64) {
            removeLeaving()
            table.insert(backing, for: id)
        }

        /// The backing data registered for `id` whose model is alive, else the one `make` returns,
        /// registered (one probe of the table). `make` must not use the registry.
        func registered(_ id: Int64, orMake make: () -> ModelBackingData) -> ModelBackingData {
            removeLeaving()
            return table.registered(id, replacing: { $0.object == nil }, orMake: make)
        }

        func remove(_ id: Int64) {
            removeLeaving()
            table.remove(id)
        }

        /// Removes the entry of `id` if it is `backing`'s (not a later object's for the same row),
        /// with the next batch.
        func remove(_ id: Int64, ifItIs backing: ModelBackingData) {
            leaving.append((id, .passUnretained(backing)))
            if leaving.count >= Self.batchSize { removeLeaving() }
        }

        private func removeLeaving() {
            guard !leaving.isEmpty else { return }
            for (id, backing) in leaving { table.remove(id, ifItIs: backing.toOpaque()) }
            leaving.removeAll(keepingCapacity: leaving.count < Self.batchSize)
        }
    }

    struct RelationshipKey: Hashable {
        var entity: ObjectIdentifier
        var index: Int
    }
    /// The unsaved inserts, changes and deletions.
    var pending = PendingChanges()
    var inserted: [any PersistentModel] { pending.inserted }
    var changed: [any PersistentModel] { pending.changed }
    var deleted: [any PersistentModel] { pending.deleted }
    /// SwiftData saves on its own run loop; here `autosaveEnabled` makes every `insert` and
    /// `delete` save at once, and the context saves what it holds unsaved before it goes.
    public var autosaveEnabled = false

    public convenience init(_ container: ModelContainer) {
        self.init(container, isMainContext: false)
    }

    init(_ container: ModelContainer, isMainContext: Bool) {
        retainedContainer = isMainContext ? nil : container
        mainContextContainer = isMainContext ? container : nil
        database = container.database
        schema = container.schema
        configuration = container.configuration
        modelTypes = Dictionary(schema.models.map { ($0.entity.name, $0) }, uniquingKeysWith: { first, _ in first })
        objectReference.attach(self)
    }

    /// A context that goes with unsaved changes drops them, as SwiftData's does, but says so on
    /// standard error unless its last save threw (`PendingChanges.reportDiscarded`). With
    /// `autosaveEnabled` it saves them first, as SwiftData's autosave would have by then (changed
    /// attributes make no save of their own here, which has no run loop): only what that save
    /// cannot write is dropped, and said.
    deinit {
        if autosaveEnabled, !pending.isEmpty {
            do {
                try save()
            } catch {
                FileHandle.standardError.write(Data("ModelContext was freed with unsaved changes, which its autosave could not write and were discarded: \(error)\n".utf8))
            }
        }
        // Nothing to say once a save wrote everything, or threw (said above, or to the app).
        pending.reportDiscarded(by: "ModelContext")
        objectReference.contextDidEnd()
    }

    /// The reference by which this context's objects know it.
    @_spi(Backend) public let objectReference = ContextReference()

    public var hasChanges: Bool { !pending.isEmpty }
    public var insertedModelsArray: [any PersistentModel] { inserted }
    public var changedModelsArray: [any PersistentModel] { changed }
    public var deletedModelsArray: [any PersistentModel] { deleted }

    // MARK: - Insert and delete

    /// Inserts a new object, and the new objects it refers to, into the context. An object the
    /// context marked deleted stays after all (its deletion is taken back, its changes kept); an
    /// object whose deletion was saved comes back as a new object (a new row) with
    /// the values and relationships it shows.
    public func insert<Model: PersistentModel>(_ model: Model) {
        if !(model.persistentBackingData.insertAgain(into: self) && pending.undelete(model)) { insertGraph(model) }
        if autosaveEnabled { autosave() }
    }

    /// Inserts `model` if it is new and in no context, and the new objects it refers to.
    @_spi(Backend) public func insertGraph(_ model: any PersistentModel) {
        let backing = model.persistentBackingData
        guard backing.mayJoin(self), pending.insert(model) else { return }
        backing.object = model
        backing.context = self
        backing.reattachToRelated()
        backing.forEachLoadedRelatedObject(insertGraph)
    }

    /// Marks an object for deletion when the context saves: `isDeleted` is true until then.
    /// Saving runs the entity's safe-deletion plan: cascades, deny checks, nullification.
    public func delete<Model: PersistentModel>(_ model: Model) {
        let backing = model.persistentBackingData
        if pending.removeInserted(model) {
            let cascaded = backing.unsavedCascadeTargets
            backing.detachFromRelated()
            backing.context = nil
            for object in cascaded { delete(object) }
            return
        }
        guard backing.mayBeDeleted(by: self) else { return }
        backing.isDeleted = true
        pending.delete(model)
        if autosaveEnabled { autosave() }
    }

    /// Deletes every object of `model` matching the predicate (all when nil) through the entity's
    /// deletion plan, in one transaction, at once (as SwiftData's `delete(model:where:)`), and
    /// reports what was deleted and nullified. A dry run reports the same and changes nothing.
    /// A refused delete throws `DeletionRefused` and changes nothing.
    @discardableResult
    public func delete<Model: PersistentModel>(model: Model.Type, where predicate: Predicate<Model>? = nil, dryRun: Bool = false) throws -> DeletionReport {
        guard let program = schema.deletionProgram(for: Model.entity.name) else {
            preconditionFailure("\(Model.entity.name) is not in schema \(schema)")
        }
        let seed: DeletionSeed
        if let predicate {
            let (condition, bindings) = try PredicateTranslator<Model>.translate(predicate)
            seed = .matching(condition: condition, bindings: bindings)
        } else {
            seed = .all
        }
        let report: DeletionReport
        var rowsBefore: [ObjectIdentifier: Set<Int64>] = [:]
        do {
            if !dryRun { rowsBefore = try storedRowsOfRegisteredObjects() }
            report = try DeletionExecutor(database: database, recordingLargestIDsOf: schema.models.map { ($0.entity.tableName, $0.entity.table) })
                .run(program, seed: seed, dryRun: dryRun)
        } catch let error as SQLiteError {
            throw translate(error)
        }
        if !dryRun { try refreshAfterDeletion(RefreshAfterDeletion(rowsBefore: rowsBefore)) }
        return report
    }

    @_spi(Backend) public func didChange(_ backing: ModelBackingData) {
        guard backing.id != nil, let object = backing.object else { return }
        _ = pending.change(object)
    }

    /// Whether some fetch indexed unsaved objects by an attribute's value (see `pendingValueChanged`).
    @_spi(Backend) public var indexesPendingValues: Bool { pending.indexesValues }

    /// An unsaved object's attribute changed from `old`: the indexes of that attribute follow.
    @_spi(Backend) public func pendingValueChanged(_ backing: ModelBackingData, attribute: Int, from old: SQLiteValue) {
        pending.valueChanged(backing, attribute: attribute, from: old)
    }

    // MARK: - Save and rollback

    /// Writes inserts, changes and deletions in one transaction; on failure nothing is written
    /// and the error says why.
    public func save() throws {
        guard hasChanges else { return }
        let newObjects = inserted
        var rowsBeforeDeletion: [ObjectIdentifier: Set<Int64>] = [:]
        var assigned: [ModelBackingData] = []
        var savedMembers: [(ModelBackingData, Int)] = []
        var joinRowsWithDeletedEnd: [JoinRowChanges.Table] = []
        do {
            try database.execute("BEGIN IMMEDIATE; PRAGMA defer_foreign_keys = ON")
            let cascadedRows = try setUniqueValuesOfCascadedRowsAside(inserting: newObjects)
            try writeRows(of: newObjects, assigning: &assigned)
            (savedMembers, joinRowsWithDeletedEnd) = try writeJoinRows(of: [newObjects, changed].joined())
            let countChecks = try modelCountChecks(inserted: newObjects)
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
            if !deletedIDs.isEmpty {
                try database.recordLargestIDs(of: schema.models.map { $0.entity })
                rowsBeforeDeletion = try storedRowsOfRegisteredObjects()
            }
            try runDeletions(deletedIDs)
            try removeJoinRows(withDeletedEnd: joinRowsWithDeletedEnd)
            try checkCascadedRowsWent(cascadedRows)
            try checkModelCounts(countChecks)
            try database.execute("COMMIT")
        } catch {
            // A key to a row another connection deleted fails the commit (the keys are checked
            // then), which leaves the transaction open: it is asked which key, before the rollback.
            let error = (error as? SQLiteError)?.isForeignKeyViolation == true ? (brokenReference() ?? error) : error
            try? database.execute("ROLLBACK")
            for backing in assigned { backing.id = nil }
            pending.lastSaveFailed = true
            throw translate(error)
        }
        register(newObjects)
        for object in newObjects { object.persistentBackingData.didSave() }
        for object in changed { object.persistentBackingData.didSave() }
        for (backing, index) in savedMembers { backing.didSaveMembers(index) }
        let deletedIdentities = Set(deleted.map { ObjectIdentifier($0) })
        for object in deleted {
            let backing = object.persistentBackingData
            registries[ObjectIdentifier(backing.entity)]?.remove(backing.id!)
            backing.isDeleted = false
            backing.context = nil
        }
        pending.removeAll()
        if !deletedIdentities.isEmpty { try refreshAfterDeletion(RefreshAfterDeletion(rowsBefore: rowsBeforeDeletion, written: newObjects, deletedObjects: deletedIdentities)) }
    }

    /// Runs each entity's deletion plan on the ids of its objects the save deletes, in the order
    /// `SaveDeletionOrder` gives: a plan refused because of objects the save deletes through
    /// another entity's plan runs again after that one (each plan in a savepoint, which a refusal
    /// rolls back).
    private func runDeletions(_ deletedIDs: [(entity: String, ids: [Int64])]) throws {
        var order = SaveDeletionOrder<DeletionRefused>(count: deletedIDs.count)
        while let index = order.next() {
            guard let program = schema.deletionProgram(for: deletedIDs[index].entity) else { continue }
            do {
                _ = try DeletionExecutor(database: database).run(program, seed: .ids(deletedIDs[index].ids))
            } catch let refusal as DeletionRefused {
                try order.refused(index, refusal)
            }
        }
    }

    /// The bounded relationships a save of the unsaved changes must count (`ModelCountCheck`),
    /// with the owners that deleted objects' join rows leave, read before the deletions run.
    private func modelCountChecks(inserted newObjects: [any PersistentModel]) throws -> [ModelCountCheck] {
        var checks = ModelCountCheck.checks(inserted: newObjects, changed: changed, deleted: deleted, entities: schema.models.map { $0.entity })
        for index in checks.indices {
            guard let sql = checks[index].leavingOwnersSQL(ids: Self.idListClause, quote: Self.sqliteName) else { continue }
            let rows = try database.query(sql, [Self.jsonArray(checks[index].deletedMembers)])
            checks[index].addOwners(rows.compactMap { $0.first?.integer })
        }
        return checks
    }

    /// A name as `EntityDescription` holds it: quoted for SQLite already.
    private static func sqliteName(_ name: String) -> String { name }

    /// Throws for the first object a save leaves with too few or too many objects in a bounded
    /// relationship (`ModelCountCheck`), reading the counts the save's transaction sees.
    private func checkModelCounts(_ checks: [ModelCountCheck]) throws {
        for check in checks where !check.ids.isEmpty {
            let rows = try database.query(check.countSQL(ids: Self.idListClause, quote: Self.sqliteName), [Self.jsonArray(check.sortedIDs)])
            let counts = rows.compactMap { row -> (id: Int64, count: Int)? in
                guard let id = row.first?.integer, let count = row.last?.integer else { return nil }
                return (id, Int(count))
            }
            if let violation = check.violation(in: counts) { throw violation }
        }
    }

    /// Gives new objects ids and writes their rows, and the changed columns of changed objects.
    func writeRows(of newObjects: [any PersistentModel], assigning assigned: inout [ModelBackingData]) throws {
        try setUniqueValuesAside(inserting: newObjects)
        try assignIDs(newObjects, &assigned)
        for object in newObjects { try write(object, isNew: true) }
        // A deleted object's keys too: its deletion follows the relationships it has now.
        for object in changed { try write(object, isNew: false) }
    }

    /// Sets aside the unique values the save gives up, one statement per column
    /// (`UniqueValuesSetAside`), before any row is written (`setAside`).
    private func setUniqueValuesAside(inserting newObjects: [any PersistentModel]) throws {
        let setAside = UniqueValuesSetAside(inserted: newObjects, changed: changed, deleted: deleted,
                                            changedEntities: pending.changedEntities(among: schema.models.map { $0.entity })) {
            self.uniqueConstraints[$0.name]?.vacancies ?? [:]
        }
        for step in setAside.steps {
            try self.setAside(step.entity, column: step.column, vacancy: step.vacancy, ids: step.ids, taken: step.taken)
        }
    }

    /// Rows `ids` of `entity` set aside their values of unique `column` (`UniqueVacancy`), which
    /// then differ from every value held and from `taken`, the values the save writes there; one
    /// statement (after a look at the column's smallest and largest value, for an integer), or one
    /// per row for an integer column whose values lie at both ends of `Int64` (`IntegerVacancies`):
    ///
    ///     UPDATE "country" SET "name" = NULL WHERE id IN (SELECT value FROM json_each(?))
    ///     UPDATE "team" SET "rank" = ? - id WHERE id IN (…)
    ///     UPDATE "team" SET "code" = (SELECT replace(hex(zeroblob(max(coalesce(max(length("code")), 0), 7))), '00', '~')
    ///         FROM "team") || '#' || id WHERE id IN (…)
    private func setAside(_ entity: EntityDescription, column: String, vacancy: UniqueVacancy, ids: [Int64], taken: [SQLiteValue]) throws {
        let table = entity.table
        if let value = vacancy.valueSQL(column: column, table: table, dialect: .sqlite, longestTaken: taken.longestText) {
            try database.run("UPDATE \(table) SET \(column) = \(value) WHERE id \(Self.idListClause)", [Self.jsonArray(ids)])
            return
        }
        let integers = taken.compactMap(\.integer)
        let bounds = try database.query("SELECT min(\(column)), max(\(column)) FROM \(table)")[0]
        let vacancies = try IntegerVacancies.beside(ids: ids, storedMin: bounds[0].integer, storedMax: bounds[1].integer, taken: integers)
            ?? .gaps(count: ids.count, excluding: Set(database.query("SELECT \(column) FROM \(table)").compactMap { $0[0].integer } + integers))
        switch vacancies {
        case let .below(base):
            try database.run("UPDATE \(table) SET \(column) = ? - id WHERE id \(Self.idListClause)", [.integer(base), Self.jsonArray(ids)])
        case let .above(base):
            try database.run("UPDATE \(table) SET \(column) = ? + id WHERE id \(Self.idListClause)", [.integer(base), Self.jsonArray(ids)])
        case let .values(values):
            for (id, value) in zip(ids, values) { try database.run("UPDATE \(table) SET \(column) = ? WHERE id = ?", [.integer(value), .integer(id)]) }
        }
    }

    /// Sets aside the unique values the save takes from stored rows outside it, in entities its
    /// deletions can cascade to (`UniqueValuesOfCascadedRows`), before any row is written: each
    /// value taken is looked up (an index lookup per value, one cached statement per constraint),
    /// and the rows found are set aside (`setAside`):
    ///
    ///     SELECT id FROM "seat" WHERE "aisle" = ? AND "place" = ?
    ///
    /// Returns the rows set aside, which the deletions must then remove (`checkCascadedRowsWent`).
    private func setUniqueValuesOfCascadedRowsAside(inserting newObjects: [any PersistentModel]) throws -> [(UniqueValuesOfCascadedRows.Constraint, [Int64])] {
        let found = UniqueValuesOfCascadedRows(inserted: newObjects, changed: changed, deleted: deleted, entities: schema.models.map { $0.entity }) {
            self.uniqueConstraints[$0.name] ?? ([], [:])
        }
        var setAside: [(UniqueValuesOfCascadedRows.Constraint, [Int64])] = []
        for constraint in found.constraints {
            let table = constraint.entity.table
            let lookup = "SELECT id FROM \(table) WHERE " + constraint.columns.map { "\($0) = ?" }.joined(separator: " AND ")
            var ids: Set<Int64> = []
            for values in constraint.taken {
                for row in try database.query(lookup, values) {
                    if let id = row[0].integer, !constraint.ownIDs.contains(id) { ids.insert(id) }
                }
            }
            guard !ids.isEmpty else { continue }
            let rows = ids.sorted()
            try self.setAside(constraint.entity, column: constraint.setAside, vacancy: constraint.vacancy, ids: rows, taken: constraint.takenInSetAside)
            setAside.append((constraint, rows))
        }
        return setAside
    }

    /// Refuses the save when a row `setUniqueValuesOfCascadedRowsAside` set aside is still there
    /// after the deletions: its value is taken, as the unique constraint would have refused.
    private func checkCascadedRowsWent(_ setAside: [(UniqueValuesOfCascadedRows.Constraint, [Int64])]) throws {
        for (constraint, ids) in setAside {
            let left = try database.scalar("SELECT count(*) FROM \(constraint.entity.table) WHERE id \(Self.idListClause)", [Self.jsonArray(ids)])
            if left > 0 { throw ModelContextError.uniqueViolation(entity: constraint.entity.name, attribute: constraint.properties) }
        }
    }

    /// The save `autosaveEnabled` makes after an insert or a delete. Like SwiftData's it does not
    /// throw: a failure leaves the changes unsaved (the next save tries them again, and `save()`
    /// throws the error) and is written to standard error, not dropped without a word.
    private func autosave() {
        do {
            try save()
        } catch {
            FileHandle.standardError.write(Data("ModelContext autosave: nothing was saved, the changes stay unsaved: \(error)\n".utf8))
        }
    }

    /// Runs `block`, then saves what it changed together with the context's other unsaved
    /// changes, in one transaction (SwiftData's `transaction(block:)`). When `block` throws,
    /// nothing is saved and the error is rethrown; the changes stay unsaved, for `rollback()` to
    /// discard or a later `save()` to write.
    public func transaction(block: () throws -> Void) throws {
        try block()
        try save()
    }

    /// Discards unsaved inserts, changes and deletions.
    public func rollback() {
        for object in inserted { object.persistentBackingData.context = nil }
        for object in changed + deleted { object.persistentBackingData.revert() }
        for object in registeredObjects { object.persistentBackingData.revert() }
        pending.removeAll()
    }

    /// Gives new objects row ids (`newIDs`), in the order they were inserted.
    private func assignIDs(_ objects: [any PersistentModel], _ assigned: inout [ModelBackingData]) throws {
        guard !objects.isEmpty else { return }
        var counts: [ObjectIdentifier: Int] = [:]
        for object in objects { counts[ObjectIdentifier(type(of: object).entity), default: 0] += 1 }
        try database.makeLargestIDsTable()
        var ids: [ObjectIdentifier: (ids: NewIDs, used: Int)] = [:]
        var largest: [(table: String, id: Int64)] = []
        for object in objects {
            let entity = type(of: object).entity, key = ObjectIdentifier(entity)
            if ids[key] == nil {
                let new = try newIDs(counts[key]!, in: entity)
                ids[key] = (new, 0)
                if case let .counting(first) = new { largest.append((entity.tableName, first + Int64(counts[key]! - 1))) }
            }
            object.persistentBackingData.id = ids[key]!.ids[ids[key]!.used]
            ids[key]!.used += 1
            assigned.append(object.persistentBackingData)
        }
        try database.recordLargestIDs(largest)
    }

    /// The row ids a save gives the new objects of one table, in order.
    private enum NewIDs {
        /// `first`, `first + 1`, …
        case counting(from: Int64)
        case free([Int64])

        subscript(position: Int) -> Int64 {
            switch self {
            case let .counting(first): first + Int64(position)
            case let .free(ids): ids[position]
            }
        }
    }

    /// `count` row ids no row of `entity`'s table has or had: counting up from one past the
    /// largest it ever held (`SQLiteDatabase.largestIDEver`: the id of a deleted row is not given
    /// again); where that would pass `Int64.max` (a row another program wrote holds an id near
    /// it), the smallest free ones from 1, as SQLite then picks free ones itself (at random):
    ///
    ///     SELECT max(coalesce(max(id), 0), coalesce((SELECT largest FROM modelgen_largest_ids WHERE "table" = 'volume'), 0)) FROM "volume"
    ///     SELECT id FROM "volume"                 -- only when the largest id is near Int64.max
    private func newIDs(_ count: Int, in entity: EntityDescription) throws -> NewIDs {
        let largest = try database.largestIDEver(in: entity)
        if largest <= Int64.max - Int64(count) { return .counting(from: largest + 1) }
        let taken = Set(try database.query("SELECT id FROM \(entity.table)").compactMap { $0[0].integer })
        let ids = IntegerVacancies.smallestFree(count: count, excluding: taken, from: 1)
        guard ids.count == count else { throw ModelContextError.constraintViolation("\(entity.name) has no free row id left") }
        return .free(ids)
    }

    /// Inserts a new object's row, or updates the columns of a changed one that changed: the
    /// attributes set since the last save and the keys it writes (`writesKey`; only those for an
    /// object to delete).
    private func write(_ object: any PersistentModel, isNew: Bool) throws {
        let backing = object.persistentBackingData
        let entity = backing.entity
        let deleting = backing.isDeleted
        for (index, attribute) in entity.attributes.enumerated() where attribute.column != nil && (isNew || backing.changedAttributes.contains(index)) {
            if case let .real(number) = backing.storedValue(index), number.isNaN {
                throw ModelContextError.unstorableValue(entity: entity.name, attribute: attribute.name, reason: "NaN cannot be stored (SQLite would read it back as nil); store nil or a number")
            }
        }
        if isNew {
            // Bound straight from the object, through the entity's one INSERT statement.
            try database.runEach(entity.insertSQL, CollectionOfOne(backing)) { statement, backing in
                try statement.bind(.integer(backing.id!), at: 1)
                var position: Int32 = 2
                for (index, attribute) in entity.attributes.enumerated() where attribute.column != nil {
                    try bindAttribute(index, of: backing, to: statement, at: position)
                    position += 1
                }
                for (index, _) in entity.foreignKeys {
                    try statement.bind(backing.foreignID(index).map(SQLiteValue.integer) ?? .null, at: position)
                    position += 1
                }
            }
            return
        }
        // The changed columns' slots (in the values' layout), bound straight from the object, then the id.
        updateSlots.removeAll(keepingCapacity: true)
        for (index, attribute) in entity.attributes.enumerated() where !deleting && attribute.column != nil && backing.changedAttributes.contains(index) {
            updateSlots.append(index)
        }
        for (index, _) in entity.foreignKeys where backing.writesKey(index) { updateSlots.append(entity.keySlots[index]!) }
        guard !updateSlots.isEmpty else { return }
        let statement = try updateStatement(entity, writing: updateSlots)
        let rows = try database.run(statement) { statement in
            var position: Int32 = 1
            for slot in updateSlots {
                if slot < entity.attributes.count {
                    try bindAttribute(slot, of: backing, to: statement, at: position)
                } else {
                    try statement.bind(backing.value(slot: slot), at: position)
                }
                position += 1
            }
            try statement.bind(.integer(backing.id!), at: position)
        }
        // No row changed: another context or process deleted it since it was read, and the
        // changes would be lost without a word (unless the object is to go anyway).
        guard rows == 1 || deleting else {
            throw ModelContextError.deletedFromStore(entity: entity.name, id: backing.id!)
        }
    }

    /// Binds the value of attribute `index` of `backing` to parameter `position`. A value longer
    /// than the store takes (SQLite's length limit: a billion bytes as Debian and Apple build it)
    /// is refused, naming the attribute.
    private func bindAttribute(_ index: Int, of backing: ModelBackingData, to statement: SQLiteStatement, at position: Int32) throws {
        do {
            try statement.bind(backing.storedValue(index), at: position)
        } catch let error as SQLiteError where error.isTooBig {
            throw ModelContextError.unstorableValue(entity: backing.entity.name, attribute: backing.entity.attributes[index].name,
                                                    reason: "the value is longer than the store takes (\(database.lengthLimit) bytes); keep it in a file and store the file's name")
        }
    }

    /// The statement that writes the columns of `slots` (in the values' layout) of one row of
    /// `entity`, prepared once per set of columns a save writes:
    ///
    ///     UPDATE "volume" SET "price" = ? WHERE id = ?
    private func updateStatement(_ entity: EntityDescription, writing slots: [Int]) throws -> SQLiteStatement {
        if let lastUpdate, lastUpdate.shape.entity == ObjectIdentifier(entity), lastUpdate.shape.slots == slots { return lastUpdate.statement }
        let shape = UpdateShape(entity: ObjectIdentifier(entity), slots: slots)
        if let statement = updateStatements[shape] {
            lastUpdate = (shape, statement)
            return statement
        }
        let columns = slots.map { slot in
            slot < entity.attributes.count ? entity.attributes[slot].column! : entity.foreignKeys[slot - entity.attributes.count].column
        }
        let statement = try database.statement("UPDATE \(entity.table) SET \(columns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?")
        updateStatements[shape] = statement
        lastUpdate = (shape, statement)
        return statement
    }

    /// SQLite's constraint messages, in the schema's words.
    func translate(_ error: Error) -> Error {
        if let sqliteError = error as? SQLiteError, sqliteError.isBusy {
            return ModelContextError.storeBusy(seconds: Int(SQLiteDatabase.busyTimeoutMilliseconds / 1_000))
        }
        guard let sqliteError = error as? SQLiteError, sqliteError.isConstraintViolation else { return error }
        // "NOT NULL constraint failed: loan.book_id": a required relationship left nil.
        if sqliteError.isNotNullViolation, let range = sqliteError.message.range(of: "NOT NULL constraint failed: "),
           let property = property(named: String(sqliteError.message[range.upperBound...])) {
            return ModelContextError.missingValue(property)
        }
        // "UNIQUE constraint failed: order.select", or "…: offset.table, offset.check" for a
        // compound constraint: tables and columns as created, unquoted.
        if let range = sqliteError.message.range(of: "UNIQUE constraint failed: ") {
            let failed = sqliteError.message[range.upperBound...].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            for model in schema.models {
                let entity = model.entity
                // Attributes' columns, or to-one relationships' keys (a compound constraint may hold one).
                let names = failed.map { property(of: entity, named: $0) }
                if !names.isEmpty, !names.contains(nil) {
                    return ModelContextError.uniqueViolation(entity: entity.name, attribute: names.compactMap { $0 }.joined(separator: ", "))
                }
            }
        }
        return ModelContextError.constraintViolation(sqliteError.message)
    }

    /// `Entity.property` for `table.column` as SQLite names them in errors (unquoted): an
    /// attribute's column or a to-one relationship's key.
    private func property(named failed: String) -> String? {
        for model in schema.models {
            if let name = property(of: model.entity, named: failed) { return "\(model.entity.name).\(name)" }
        }
        return nil
    }

    /// The property of `entity` that `table.column` (unquoted, as in SQLite's errors) names.
    private func property(of entity: EntityDescription, named failed: String) -> String? {
        let prefix = entity.tableName + "."
        guard failed.hasPrefix(prefix) else { return nil }
        return entity.propertyName(ofColumn: String(failed.dropFirst(prefix.count)))
    }

    /// The first key of the open transaction that refers to no row, as an error naming its
    /// entity and relationship (`PRAGMA foreign_key_check`), or nil if none is found.
    ///
    ///     SELECT "table", rowid, fkid FROM pragma_foreign_key_check
    ///     SELECT "from" FROM pragma_foreign_key_list(?) WHERE id = ?
    private func brokenReference() -> ModelContextError? {
        guard let row = try? database.query("SELECT \"table\", rowid, fkid FROM pragma_foreign_key_check LIMIT 1").first,
              case let .text(table) = row[0], case let .integer(rowID) = row[1], case let .integer(keyID) = row[2],
              case let .text(column)? = try? database.query("SELECT \"from\" FROM pragma_foreign_key_list(?) WHERE id = ?", [.text(table), .integer(keyID)]).first?.first,
              let value = try? database.query("SELECT \(SQLDialect.sqlite.quote(column)) FROM \(SQLDialect.sqlite.quote(table)) WHERE rowid = ?", [.integer(rowID)]).first?.first
        else { return nil }
        return .brokenReference(table: table, column: column, key: value.integer, entities: schema.models.map { $0.entity })
    }

    /// The ids of the registered objects whose rows the store holds, by entity: read before a
    /// delete runs, so that the refresh after it detaches only the objects whose rows it deleted.
    ///
    ///     SELECT id FROM "table" WHERE id IN (SELECT value FROM json_each(?))
    private func storedRowsOfRegisteredObjects() throws -> [ObjectIdentifier: Set<Int64>] {
        var rows: [ObjectIdentifier: Set<Int64>] = [:]
        for model in schema.models {
            guard let registry = registries[ObjectIdentifier(model.entity)], !registry.isEmpty else { continue }
            let ids = try database.query("SELECT id FROM \(model.entity.table) WHERE id \(Self.idListClause)", [Self.jsonArray(registry.all.map(\.id))])
            rows[ObjectIdentifier(model.entity)] = Set(ids.compactMap { $0[0].integer })
        }
        return rows
    }

    /// After a delete ran in the database, the objects whose rows it removed leave the context and
    /// the others forget them (`refresh`, made with what the store held before).
    ///
    ///     SELECT id, <key columns> FROM "table" WHERE id IN (SELECT value FROM json_each(?))
    private func refreshAfterDeletion(_ refresh: RefreshAfterDeletion) throws {
        var refresh = refresh
        for model in schema.models {
            let entity = model.entity
            guard let registry = registries[ObjectIdentifier(entity)], !registry.isEmpty else { continue }
            let objects = Dictionary(registry.all.compactMap { entry in entry.backing.object.map { (entry.id, $0) } }, uniquingKeysWith: { first, _ in first })
            var storedForeignIDs: [Int64: [Int64?]] = [:]
            for row in try database.query("SELECT id\(entity.foreignKeys.map { ", " + $0.column }.joined()) FROM \(entity.table) WHERE id \(Self.idListClause)", [Self.jsonArray(objects.keys)]) {
                guard let id = row[0].integer else { continue }
                var foreignIDs = [Int64?](repeating: nil, count: entity.relationships.count)
                for (position, key) in entity.foreignKeys.enumerated() { foreignIDs[key.index] = row[position + 1].integer }
                storedForeignIDs[id] = foreignIDs
            }
            for (id, object) in objects where refresh.sort(object.persistentBackingData, storedForeignIDs: storedForeignIDs[id]) {
                registry.remove(id)
            }
        }
        refresh.apply(inserted: inserted)
        pending.forget(refresh.detached)
    }

    /// Forgets every registered object and the unsaved changes, whose rows are gone (after
    /// `deleteAllData`), saying on standard error what unsaved changes it drops.
    func forgetAll() {
        pending.reportDiscarded(by: "The main context", event: "was emptied by deleteAllData()", advice: "Save or roll back before deleting all data")
        for object in inserted { object.persistentBackingData.context = nil }
        for object in registeredObjects { object.persistentBackingData.context = nil }
        registries = [:]
        forgetting = nil
        pending.removeAll()
    }

    // MARK: - Identity

    /// Every registered object.
    private var registeredObjects: [any PersistentModel] {
        registries.values.flatMap { $0.all.compactMap(\.backing.object) }
    }

    func registry(for entity: EntityDescription) -> Registry {
        if let registry = registries[ObjectIdentifier(entity)] { return registry }
        let registry = Registry()
        registries[ObjectIdentifier(entity)] = registry
        return registry
    }

    /// Registers objects a save gave ids.
    private func register(_ objects: [any PersistentModel]) {
        // Objects of one entity mostly come together: the registry is looked up when it changes.
        var current: (entity: EntityDescription, registry: Registry)?
        for object in objects {
            let backing = object.persistentBackingData
            if current?.entity !== backing.entity { current = (backing.entity, registry(for: backing.entity)) }
            current!.registry.register(backing, id: backing.id!)
        }
    }

    /// A registered object's model went away: its entry goes too (unless the row has another object now).
    @_spi(Backend) public func forget(_ backing: ModelBackingData, id: Int64) {
        let entity = ObjectIdentifier(backing.entity)
        if forgetting?.entity != entity {
            // A registry, once made, lives as long as `registries` (until `forgetAll`, which clears this).
            guard let registry = registries[entity] else { return }
            forgetting = (entity, .passUnretained(registry))
        }
        forgetting!.registry._withUnsafeGuaranteedRef { $0.remove(id, ifItIs: backing) }
    }

    /// The object this context has registered for the identifier, if any (SwiftData's
    /// `registeredModel(for:)`); an inserted object is found by its temporary identifier.
    public func registeredModel<Model: PersistentModel>(for identifier: PersistentIdentifier) -> Model? {
        guard let id = identifier.id else { return pending.insertedObject(for: identifier) as? Model }
        guard let type = modelTypes[identifier.entity] else { return nil }
        return registries[ObjectIdentifier(type.entity)]?[id]?.object as? Model
    }

    /// The object with this identifier: the one registered, else loaded from the store (SwiftData's
    /// `model(for:)`, which cannot say that the row is gone: here that is nil).
    ///
    ///     SELECT id, … FROM "animal" WHERE id = ?
    public func model(for identifier: PersistentIdentifier) throws -> (any PersistentModel)? {
        guard let id = identifier.id else { return pending.insertedObject(for: identifier) }
        guard let type = modelTypes[identifier.entity] else { return nil }
        if let object = registries[ObjectIdentifier(type.entity)]?[id]?.object { return object }
        var found: (any PersistentModel)?
        try forEachObject(ofType: type, type.entity.selectByIDSQL, [.integer(id)]) { found = $0 }
        return found
    }
}

@_spi(Backend) extension ModelContext: ModelBackingContext {}
