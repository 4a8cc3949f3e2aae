import Foundation
import Logging
@_spi(Backend) import ModelGenRuntime
import ModelGenQuery
import ModelGenSchema
import PostgresNIO

/// A failure a server can act on: the same unit of work, run again, may succeed.
public struct PostgresRetryableError: Error, CustomStringConvertible {
    /// `40001` (serialization failure) or `40P01` (deadlock detected).
    public var sqlState: String
    public var message: String

    public var description: String {
        "cannot save: \(message) (SQLSTATE \(sqlState)); nothing was saved. Run the unit of work again with a new context"
    }
}

/// A delete the entity's safe-deletion function refused, having changed nothing: its message names
/// each object that blocks it, the relationship and the rule.
public struct PostgresDeletionRefused: Error, CustomStringConvertible {
    /// The entity whose objects were to be deleted.
    public var entity: String
    /// The function's message (`delete refused, nothing was changed: …`).
    public var message: String

    public var description: String { message }
}

/// A unit of work on a `PostgresModelContainer` (the async counterpart of `ModelContext`): one
/// object per row (an identity map), inserts, changes and deletions kept until `save`, which
/// writes them in one transaction. Use it from one task at a time; make one per request.
///
/// Relationships load only when asked, never inside a property getter (which cannot wait for the
/// server): name them in `FetchDescriptor.relationshipKeyPathsForPrefetching`, or `load` them.
/// Reading one that is neither loaded nor held in the context stops the program with a message
/// saying so: an unloaded relationship never reads as empty.
public final class PostgresModelContext {
    public let container: PostgresModelContainer
    /// Loaded and saved objects, by entity and row id; an entry leaves when its model goes.
    private var registries: [ObjectIdentifier: [Int64: Registered]] = [:]
    /// The unsaved inserts, changes and deletions.
    private var pending = PendingChanges()
    private var inserted: [any PersistentModel] { pending.inserted }
    private var changed: [any PersistentModel] { pending.changed }
    private var deleted: [any PersistentModel] { pending.deleted }
    /// Objects whose relationships were loaded while the context had unsaved changes (which the
    /// loads include): a rollback unloads them.
    private var loadedWithUnsavedChanges: [WeakBacking] = []
    /// One-to-one partners given to another object without reading which object held them.
    private var partnersTakenUnread = PartnersTakenUnread()
    /// The objects whose loaded lists of a many-to-many relationship hold an owner, for lists of
    /// the other side replaced unread.
    private var listsHoldingOwners = ListsHoldingOwners()
    /// While a query runs on the unsaved rows: the rows whose keys to taken partners were emptied
    /// first (`releasePartnersTakenUnread`), by entity and row id, with the keys the store holds
    /// by relationship index (a row may hold several: a one-to-one's and a one-to-many's).
    private var rowsReleasedForQuery: [ObjectIdentifier: [Int64: [Int: Int64]]] = [:]

    private struct WeakBacking {
        weak var backing: ModelBackingData?
    }
    /// Statements sent to the server by this context (each a round trip).
    public private(set) var statementsExecuted = 0

    private struct Registered {
        unowned let backing: ModelBackingData
    }

    public init(_ container: PostgresModelContainer) {
        self.container = container
        objectReference.attach(self)
    }

    /// A context that goes with unsaved changes drops them, as SwiftData's does, but says so on
    /// standard error unless its last save threw (`PendingChanges.reportDiscarded`).
    deinit {
        pending.reportDiscarded(by: "PostgresModelContext")
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
        if model.persistentBackingData.insertAgain(into: self), pending.undelete(model) { return }
        insertGraph(model)
    }

    /// Marks an object for deletion when the context saves, through the entity's safe-deletion
    /// function (cascades, deny checks, nullification). An inserted object simply leaves.
    public func delete<Model: PersistentModel>(_ model: Model) {
        let backing = model.persistentBackingData
        if pending.removeInserted(model) {
            let cascaded = backing.unsavedCascadeTargets
            backing.detachFromRelated()
            backing.managingContext = nil
            for object in cascaded { delete(object) }
            return
        }
        guard backing.mayBeDeleted(by: self) else { return }
        backing.isMarkedDeleted = true
        pending.delete(model)
    }

    /// Runs `block`, then saves what it changed together with the context's other unsaved
    /// changes, in one transaction (SwiftData's `transaction(block:)`). When `block` throws,
    /// nothing is saved and the error is rethrown; the changes stay unsaved, for `rollback()` to
    /// discard or a later `save()` to write.
    public func transaction(block: () async throws -> Void) async throws {
        try await block()
        try await save()
    }

    /// Discards unsaved inserts, changes and deletions: changed objects take their saved values
    /// again and keep their loaded relationships, except those that changed (set, or following a
    /// change of the other side), which are forgotten, as are all the relationships of objects
    /// loaded while changes were unsaved (a list loaded then may hold an unsaved change of the
    /// object at its other end); they load again when asked (a to-one whose key is on the
    /// object's row and whose object is in the context needs no load).
    public func rollback() {
        for object in inserted { object.persistentBackingData.managingContext = nil }
        for object in changed + deleted { object.persistentBackingData.revert(keepingUnchangedRelationships: true) }
        for entry in loadedWithUnsavedChanges { entry.backing?.revert() }
        clearPendingChanges()
    }

    private func clearPendingChanges() {
        loadedWithUnsavedChanges = []
        partnersTakenUnread.removeAll()
        listsHoldingOwners.removeAll()
        pending.removeAll()
    }

    // MARK: - Save

    /// Writes inserts, changes and deletions in one transaction, in a number of statements that
    /// depends on the schema, not on the number of objects: one to defer the checks of foreign keys
    /// to the commit (as a save on SQLite defers them); one per one-to-one or one-to-many whose
    /// partners were given other holders with their side not loaded (`releasePartnersTakenUnread`);
    /// per entity, one to reserve the ids of its new rows and one to insert them; one `UPDATE` per
    /// entity and set of changed columns; two per join table, and one per side of it whose lists
    /// were replaced unread; one safe-deletion call per entity deleted from (decided together:
    /// `SaveDeletionOrder`). On failure nothing is written, the objects keep their unsaved
    /// changes, and the error says why (`ModelContextError`, `PostgresRetryableError`,
    /// `PostgresDeletionRefused`, else `PostgresDatabaseError` with the server's message and
    /// SQLSTATE).
    ///
    /// `Date`s are kept to the microsecond, as PostgreSQL keeps them: after the save an object
    /// holds the value every later read gives.
    public func save() async throws {
        guard hasChanges else { return }
        let newObjects = inserted
        var assigned: [ModelBackingData] = []
        var written = WrittenChanges()
        var rowsBeforeDeletion: [ObjectIdentifier: Set<Int64>] = [:]
        do {
            try await container.client.withTransaction(logger: container.logger) { connection in
                // Keys are checked at the commit, as SQLite's save checks them (`defer_foreign_keys`):
                // a row the save writes may name a row gone by then if the save's deletions remove it too.
                _ = try await self.run(Self.deferForeignKeys, on: connection).collect()
                try await self.releasePartnersTakenUnread(on: connection)
                let cascadedRows = try await self.setUniqueValuesOfCascadedRowsAside(inserting: newObjects, on: connection)
                written = try await self.writeChanges(of: newObjects, on: connection, assigning: &assigned)
                let countChecks = try await self.modelCountChecks(inserted: newObjects, released: written.joinRowsReleased, on: connection)
                if !self.deleted.isEmpty { rowsBeforeDeletion = try await self.storedRowsOfRegisteredObjects(on: connection) }
                try await self.runDeletions(on: connection)
                try await self.removeJoinRows(withDeletedEnd: written.joinRowsWithDeletedEnd, on: connection)
                try await self.checkCascadedRowsWent(cascadedRows, on: connection)
                try await self.checkModelCounts(countChecks, on: connection)
            }
        } catch {
            for backing in assigned { backing.assignID(nil) }
            pending.lastSaveFailed = true
            throw translate(error)
        }
        for object in newObjects { register(object.persistentBackingData) }
        for (backing, index, value) in written.storedValues { backing.replaceValue(index, with: value) }
        for object in newObjects + changed { object.persistentBackingData.didSave() }
        for (backing, index) in written.members { backing.didSaveMembers(index) }
        let deletedIdentities = Set(deleted.map { ObjectIdentifier($0) })
        for object in deleted {
            let backing = object.persistentBackingData
            if let id = backing.id { registries[ObjectIdentifier(backing.entity)]?[id] = nil }
            backing.isMarkedDeleted = false
            backing.managingContext = nil
        }
        clearPendingChanges()
        if !deletedIdentities.isEmpty { try await refreshAfterDeletion(RefreshAfterDeletion(rowsBefore: rowsBeforeDeletion, written: newObjects, deletedObjects: deletedIdentities)) }
    }

    /// Defers the checks of the schema's foreign keys (`DEFERRABLE`, checked as each statement ends
    /// unless deferred) to the transaction's commit.
    private static let deferForeignKeys = "SET CONSTRAINTS ALL DEFERRED"

    /// Where a statement reads a list of ids bound as one array (its first parameter).
    private static let idListClause = "= ANY($1::bigint[])"

    /// The bounded relationships a save of the unsaved changes must count (`ModelCountCheck`),
    /// with the owners that deleted objects' join rows leave, read before the deletions run.
    /// `released`: the owners on the other side that lost the join rows of lists replaced unread.
    private func modelCountChecks(inserted newObjects: [any PersistentModel], released: [ModelCountCheck.OwnersLeavingJoinRows], on connection: PostgresConnection) async throws -> [ModelCountCheck] {
        var checks = ModelCountCheck.checks(inserted: newObjects, changed: changed, deleted: deleted, entities: container.entities,
                                            leavingJoinRows: released)
        for index in checks.indices {
            guard let sql = checks[index].leavingOwnersSQL(ids: Self.idListClause, quote: postgresQuoted) else { continue }
            var bindings = PostgresBindings()
            bindings.append(checks[index].deletedMembers)
            var owners: [Int64] = []
            for try await owner in try await run(sql, bindings, on: connection).decode(Int64.self) { owners.append(owner) }
            checks[index].addOwners(owners)
        }
        return checks
    }

    /// Throws for the first object a save leaves with too few or too many objects in a bounded
    /// relationship (`ModelCountCheck`): locks the objects, then reads their counts in a new
    /// statement, which sees what concurrent saves of their members committed meanwhile.
    private func checkModelCounts(_ checks: [ModelCountCheck], on connection: PostgresConnection) async throws {
        for check in checks where !check.ids.isEmpty {
            var bindings = PostgresBindings()
            bindings.append(check.sortedIDs)
            // A statement of its own: the count that follows reads what was committed while it waited.
            _ = try await run(check.lockSQL(ids: Self.idListClause, quote: postgresQuoted), bindings, on: connection).collect()
            var counts: [(id: Int64, count: Int)] = []
            for try await (id, count) in try await run(check.countSQL(ids: Self.idListClause, quote: postgresQuoted), bindings, on: connection).decode((Int64, Int64).self) {
                counts.append((id, Int(count)))
            }
            if let violation = check.violation(in: counts) { throw violation }
        }
    }

    /// What a write of the unsaved changes did, applied to the objects once the transaction commits.
    private struct WrittenChanges {
        /// Join-table lists written, whose members become the saved ones.
        var members: [(ModelBackingData, Int)] = []
        /// Join rows added with an end the save deletes, removed once the deletions ran.
        var joinRowsWithDeletedEnd: [JoinRowChanges.Table] = []
        /// The owners on the other side of the lists replaced unread, which lost their join rows.
        var joinRowsReleased: [ModelCountCheck.OwnersLeavingJoinRows] = []
        /// Values the store keeps differently (dates, to the microsecond).
        var storedValues: [(ModelBackingData, Int, SQLValue)] = []
    }

    /// Writes the rows of new objects (ids reserved from each table's sequence), the changed
    /// columns of changed ones, and the join rows added and removed.
    private func writeChanges(of newObjects: [any PersistentModel], on connection: PostgresConnection, assigning assigned: inout [ModelBackingData]) async throws -> WrittenChanges {
        try await setUniqueValuesAside(inserting: newObjects, on: connection)
        var written = WrittenChanges()
        var newByEntity: [ObjectIdentifier: [ModelBackingData]] = [:]
        for object in newObjects { newByEntity[ObjectIdentifier(object.persistentBackingData.entity), default: []].append(object.persistentBackingData) }
        // Ids first, so that every key can be written with its row.
        for entity in container.insertionOrder {
            guard let backings = newByEntity[entity] else { continue }
            let ids = try await newIDs(backings.count, of: container.mappings[entity]!, on: connection)
            for (backing, id) in zip(backings, ids) {
                backing.assignID(id)
                assigned.append(backing)
            }
        }
        var updates: [UpdateKey: [ModelBackingData]] = [:]
        for entity in container.insertionOrder {
            guard let backings = newByEntity[entity] else { continue }
            let mapping = container.mappings[entity]!
            let late = container.lateKeys[entity] ?? []
            var columns = [[SQLValue]](repeating: [], count: mapping.insertedColumns.count)
            for index in columns.indices { columns[index].reserveCapacity(backings.count) }
            for backing in backings {
                columns[0].append(.integer(backing.id!))
                var position = 1
                for (index, attribute) in mapping.attributeColumns.enumerated() {
                    guard let attribute else { continue }
                    columns[position].append(try stored(backing, index, attribute.type, &written))
                    position += 1
                }
                for key in mapping.entity.foreignKeys {
                    columns[position].append(late.contains(key.index) ? .null : backing.foreignID(key.index).map(SQLValue.integer) ?? .null)
                    position += 1
                }
                let lateKeys = late.filter { backing.foreignID($0) != nil }
                if !lateKeys.isEmpty { updates[UpdateKey(entity: entity, attributes: [], keys: lateKeys.sorted()), default: []].append(backing) }
            }
            var bindings = PostgresBindings()
            for (values, column) in zip(columns, mapping.insertedColumns) {
                bindings.append(ColumnArray(type: column.type, values: values))
            }
            _ = try await run(mapping.insertSQL, bindings, on: connection).collect()
        }
        // A deleted object's keys too: its deletion follows the relationships it has now (as
        // SwiftData's delete rules do: a partner it let go of is not cascaded to).
        for object in changed {
            let backing = object.persistentBackingData
            let entity = backing.entity
            let attributes = backing.isMarkedDeleted ? [] : backing.changedAttributeIndexes.filter { entity.attributes[$0].column != nil }.sorted()
            let keys = entity.foreignKeys.map(\.index).filter(backing.writesKey)
            guard !attributes.isEmpty || !keys.isEmpty else { continue }
            updates[UpdateKey(entity: ObjectIdentifier(entity), attributes: attributes, keys: keys), default: []].append(backing)
        }
        // In a fixed order, rows by id within each statement: two saves, in any processes, take
        // the locks of the rows they both change in the same order.
        let orderedUpdates = updates.map { key, backings in
            (key: key, order: "\(container.mappings[key.entity]!.entity.name)|\(key.attributes)|\(key.keys)", backings: backings.sorted { $0.id! < $1.id! })
        }.sorted { $0.order < $1.order }
        for (key, _, backings) in orderedUpdates {
            try await update(key, backings, on: connection, &written)
        }
        (written.members, written.joinRowsWithDeletedEnd, written.joinRowsReleased) = try await writeJoinRows(of: newObjects + changed, on: connection)
        return written
    }

    /// `count` row ids for new rows of `mapping`'s table, ascending, from the table's sequence,
    /// skipping the ids of rows written with explicit ids (an import, another program), which the
    /// sequence does not know of; one statement, and more only while it meets such rows (each
    /// asking for twice as many ids, so a long run of them is passed in a few):
    ///
    ///     SELECT modelgen_new.v, CASE WHEN modelgen_new.v > modelgen_max.largest THEN false
    ///            ELSE EXISTS (SELECT 1 FROM "volume" WHERE id = modelgen_new.v) END
    ///       FROM (SELECT nextval(pg_get_serial_sequence('"volume"', 'id')) AS v FROM generate_series(1, 3)) AS modelgen_new,
    ///            (SELECT coalesce(max(id), 0) AS largest FROM "volume") AS modelgen_max
    ///
    /// (Aliases take the prefix no table may have: inside the `EXISTS`, a table named `r` hid an alias `r`.)
    private func newIDs(_ count: Int, of mapping: PostgresEntityMapping, on connection: PostgresConnection) async throws -> [Int64] {
        let table = mapping.table, sequence = SQLDialect.postgresql.literal(mapping.table)
        var ids: [Int64] = [], asked = count
        while ids.count < count {
            let sql = "SELECT modelgen_new.v, CASE WHEN modelgen_new.v > modelgen_max.largest THEN false ELSE EXISTS (SELECT 1 FROM \(table) WHERE id = modelgen_new.v) END "
                + "FROM (SELECT nextval(pg_get_serial_sequence(\(sequence), 'id')) AS v FROM generate_series(1, \(asked))) AS modelgen_new, "
                + "(SELECT coalesce(max(id), 0) AS largest FROM \(table)) AS modelgen_max"
            for try await (id, taken) in try await run(sql, on: connection).decode((Int64, Bool).self) where !taken { ids.append(id) }
            asked = max(count - ids.count, min(2 * asked, 1 << 20))
        }
        return Array(ids.sorted().prefix(count))
    }

    /// Empties the keys that still name a partner this context gave other holders without reading
    /// which objects held it (`PartnersTakenUnread`: a one-to-one's partner, a one-to-many's
    /// owner), but for its new holders' rows, before anything is written;
    /// returns the rows it emptied, by entity: each row's id, key and the partner it named.
    ///
    ///     UPDATE "guest" SET "seat_id" = NULL
    ///       FROM (SELECT id, "seat_id" FROM "guest" WHERE "seat_id" = ANY($1::bigint[]) AND NOT (id = ANY($2::bigint[])))
    ///            AS modelgen_released(row_id, partner_id)
    ///      WHERE "guest".id = modelgen_released.row_id RETURNING "guest".id, modelgen_released.partner_id
    @discardableResult
    private func releasePartnersTakenUnread(on connection: PostgresConnection) async throws -> [ObjectIdentifier: [Int64: [Int: Int64]]] {
        guard !partnersTakenUnread.isEmpty else { return [:] }
        var written: [ObjectIdentifier: [Int64]] = [:]
        for object in changed + deleted {
            let backing = object.persistentBackingData
            if let id = backing.id { written[ObjectIdentifier(backing.entity), default: []].append(id) }
        }
        var released: [ObjectIdentifier: [Int64: [Int: Int64]]] = [:]
        for release in partnersTakenUnread.releases(written: written) {
            var bindings = PostgresBindings()
            bindings.append(release.partnerIDs)
            bindings.append(release.keptIDs)
            let table = container.mapping(for: release.entity).table, column = release.column
            let sql = "UPDATE \(table) SET \(column) = NULL FROM (SELECT id, \(column) FROM \(table) WHERE \(column) \(Self.idListClause) AND NOT (id = ANY($2::bigint[]))) "
                + "AS modelgen_released(row_id, partner_id) WHERE \(table).id = modelgen_released.row_id RETURNING \(table).id, modelgen_released.partner_id"
            for try await (id, partnerID) in try await run(sql, bindings, on: connection).decode((Int64, Int64).self) {
                released[ObjectIdentifier(release.entity), default: [:]][id, default: [:]][release.keyIndex] = partnerID
            }
        }
        return released
    }

    /// Sets aside the unique values the save gives up, one statement per column
    /// (`UniqueValuesSetAside`), before any row is written (`setAside`).
    private func setUniqueValuesAside(inserting newObjects: [any PersistentModel], on connection: PostgresConnection) async throws {
        let setAside = UniqueValuesSetAside(inserted: newObjects, changed: changed, deleted: deleted,
                                            changedEntities: pending.changedEntities(among: container.entities)) {
            self.container.mapping(for: $0).uniqueVacancies
        }
        for step in setAside.steps {
            try await self.setAside(step.entity, column: step.column, vacancy: step.vacancy, ids: step.ids, taken: step.taken, on: connection)
        }
    }

    /// Rows `ids` of `entity` set aside their values of unique `column` (`UniqueVacancy`), which
    /// then differ from every value held and from `taken`, the values the save writes there; one
    /// statement (after a look at the column's smallest and largest value, for an integer; and at
    /// every value, for one whose values lie at both ends of `Int64`: `IntegerVacancies`):
    ///
    ///     UPDATE "country" SET "name" = NULL WHERE id = ANY($1::bigint[])
    ///     UPDATE "team" SET "rank" = $1 - id WHERE id = ANY($2::bigint[])
    ///     UPDATE "team" SET "code" = repeat('~', greatest((SELECT max(length("code")) FROM "team"), 7)) || '#' || id
    ///         WHERE id = ANY($1::bigint[])
    private func setAside(_ entity: EntityDescription, column: String, vacancy: UniqueVacancy, ids: [Int64], taken: [SQLiteValue], on connection: PostgresConnection) async throws {
        let table = container.mapping(for: entity).table, column = postgresQuoted(column)
        var bindings = PostgresBindings()
        if let value = vacancy.valueSQL(column: column, table: table, dialect: .postgresql, longestTaken: taken.longestText) {
            bindings.append(ids)
            _ = try await run("UPDATE \(table) SET \(column) = \(value) WHERE id \(Self.idListClause)", bindings, on: connection).collect()
            return
        }
        let integers = taken.compactMap(\.integer)
        var vacancies: IntegerVacancies?
        for try await (low, high) in try await run("SELECT min(\(column))::int8, max(\(column))::int8 FROM \(table)", on: connection).decode((Int64?, Int64?).self) {
            vacancies = IntegerVacancies.beside(ids: ids, storedMin: low, storedMax: high, taken: integers)
        }
        if vacancies == nil {
            var held = Set(integers)
            for try await value in try await run("SELECT \(column)::int8 FROM \(table) WHERE \(column) IS NOT NULL", on: connection).decode(Int64.self) { held.insert(value) }
            vacancies = .gaps(count: ids.count, excluding: held)
        }
        switch vacancies! {
        case let .below(base), let .above(base):
            bindings.append(base)
            bindings.append(ids)
            let sign = if case .below = vacancies! { "-" } else { "+" }
            _ = try await run("UPDATE \(table) SET \(column) = $1 \(sign) id WHERE id = ANY($2::bigint[])", bindings, on: connection).collect()
        case let .values(values):
            bindings.append(ids)
            bindings.append(values)
            _ = try await run("UPDATE \(table) SET \(column) = modelgen_values.value FROM unnest($1::bigint[], $2::bigint[]) AS modelgen_values(row_id, value) WHERE \(table).id = modelgen_values.row_id", bindings, on: connection).collect()
        }
    }

    /// Sets aside the unique values the save takes from stored rows outside it, in entities its
    /// deletions can cascade to (`UniqueValuesOfCascadedRows`), before any row is written: per
    /// unique constraint whose values the save takes, whatever their number, one statement finds
    /// the rows, and `setAside` sets them aside:
    ///
    ///     SELECT "seat".id FROM "seat", unnest($1::int8[], $2::int8[]) AS modelgen_values(v1, v2)
    ///       WHERE "seat"."aisle" = modelgen_values.v1 AND "seat"."place" = modelgen_values.v2
    ///
    /// Returns the rows set aside, which the deletions must then remove (`checkCascadedRowsWent`).
    private func setUniqueValuesOfCascadedRowsAside(inserting newObjects: [any PersistentModel], on connection: PostgresConnection) async throws -> [(UniqueValuesOfCascadedRows.Constraint, [Int64])] {
        let found = UniqueValuesOfCascadedRows(inserted: newObjects, changed: changed, deleted: deleted, entities: container.entities) {
            let mapping = self.container.mapping(for: $0)
            return (mapping.uniqueColumnGroups, mapping.uniqueVacancies)
        }
        var setAside: [(UniqueValuesOfCascadedRows.Constraint, [Int64])] = []
        for constraint in found.constraints {
            let mapping = container.mapping(for: constraint.entity)
            let types = Dictionary(mapping.writtenColumns.map { ($0.column, $0.type) }, uniquingKeysWith: { first, _ in first })
            let table = mapping.table, columns = constraint.columns.map(postgresQuoted)
            let columnTypes = columns.map { types[$0] ?? .text }
            // A value the column cannot hold is left out: the write of its row says why.
            let taken = constraint.taken.compactMap { values in try? zip(columnTypes, values).map { try $0.checked($1) } }
            var bindings = PostgresBindings()
            for (position, type) in columnTypes.enumerated() { bindings.append(ColumnArray(type: type, values: taken.map { $0[position] })) }
            let names = columns.indices.map { "v\($0 + 1)" }
            let lookup = "SELECT \(table).id FROM \(table), unnest(" + columnTypes.enumerated().map { "$\($0.offset + 1)::\($0.element.arrayTypeName)" }.joined(separator: ", ")
                + ") AS modelgen_values(" + names.joined(separator: ", ") + ") WHERE "
                + zip(columns, zip(names, columnTypes)).map { "\(table).\($0) = modelgen_values.\($1.0)\($1.1.elementCast)" }.joined(separator: " AND ")
            var ids: Set<Int64> = []
            for try await id in try await run(lookup, bindings, on: connection).decode(Int64.self) where !constraint.ownIDs.contains(id) { ids.insert(id) }
            guard !ids.isEmpty else { continue }
            let rows = ids.sorted()
            try await self.setAside(constraint.entity, column: constraint.setAside, vacancy: constraint.vacancy, ids: rows, taken: constraint.takenInSetAside, on: connection)
            setAside.append((constraint, rows))
        }
        return setAside
    }

    /// Refuses the save when a row `setUniqueValuesOfCascadedRowsAside` set aside is still there
    /// after the deletions: its value is taken, as the unique constraint would have refused.
    private func checkCascadedRowsWent(_ setAside: [(UniqueValuesOfCascadedRows.Constraint, [Int64])], on connection: PostgresConnection) async throws {
        for (constraint, ids) in setAside {
            var bindings = PostgresBindings()
            bindings.append(ids)
            let table = container.mapping(for: constraint.entity).table
            for try await left in try await run("SELECT count(*) FROM \(table) WHERE id \(Self.idListClause)", bindings, on: connection).decode(Int64.self) where left > 0 {
                throw ModelContextError.uniqueViolation(entity: constraint.entity.name, attribute: constraint.properties)
            }
        }
    }

    /// The columns one `UPDATE` writes: attributes and keys, by index.
    private struct UpdateKey: Hashable {
        var entity: ObjectIdentifier
        var attributes: [Int]
        var keys: [Int]
    }

    /// One `UPDATE` for every object whose change writes the same columns (the values are named
    /// `modelgen_values`, a name no table can have: a table named `v` would be named twice):
    ///
    ///     UPDATE "volume" SET "price" = modelgen_values.v2
    ///     FROM unnest($1::int8[], $2::float8[]) AS modelgen_values(v1, v2) WHERE "volume".id = modelgen_values.v1
    private func update(_ key: UpdateKey, _ backings: [ModelBackingData], on connection: PostgresConnection, _ written: inout WrittenChanges) async throws {
        let mapping = container.mappings[key.entity]!
        var assignments: [String] = []
        var columns = [ColumnArray(type: .integer, values: backings.map { .integer($0.id!) })]
        for index in key.attributes {
            let (column, type) = mapping.attributeColumns[index]!
            assignments.append("\(column) = modelgen_values.v\(columns.count + 1)\(type.elementCast)")
            columns.append(ColumnArray(type: type, values: try backings.map { try stored($0, index, type, &written) }))
        }
        for index in key.keys {
            assignments.append("\(mapping.keyColumn(of: index)!) = modelgen_values.v\(columns.count + 1)")
            columns.append(ColumnArray(type: .integer, values: backings.map { $0.foreignID(index).map(SQLValue.integer) ?? .null }))
        }
        let names = columns.indices.map { "v\($0 + 1)" }
        let sql = "UPDATE \(mapping.table) SET " + assignments.joined(separator: ", ")
            + " FROM unnest(" + columns.indices.map { "$\($0 + 1)::\(columns[$0].type.arrayTypeName)" }.joined(separator: ", ") + ") AS modelgen_values(" + names.joined(separator: ", ") + ")"
            + " WHERE \(mapping.table).id = modelgen_values.v1 RETURNING \(mapping.table).id"
        var bindings = PostgresBindings()
        for column in columns { bindings.append(column) }
        var updated: Set<Int64> = []
        for try await id in try await run(sql, bindings, on: connection).decode(Int64.self) { updated.insert(id) }
        // A row missing: another session deleted it since it was read, and the changes would be
        // lost without a word.
        if updated.count < backings.count, let missing = backings.first(where: { !updated.contains($0.id!) && !$0.isMarkedDeleted }) {
            throw ModelContextError.deletedFromStore(entity: missing.entity.name, id: missing.id!)
        }
    }

    /// The value of attribute `index` of `backing` as its column stores it (checked: throws for a
    /// value the column cannot hold); notes a date the store keeps rounded to the microsecond.
    private func stored(_ backing: ModelBackingData, _ index: Int, _ type: PostgresColumnType, _ written: inout WrittenChanges) throws -> SQLValue {
        let value = backing.storedValue(at: index)
        do {
            let stored = try type.checked(value)
            // Bit for bit: a date of -0.0 s is stored as the microsecond 0, which reads back as 0.0.
            if !stored.isIdentical(to: value) { written.storedValues.append((backing, index, stored)) }
            return stored
        } catch let error as PostgresColumnType.Unstorable {
            throw ModelContextError.unstorableValue(entity: backing.entity.name, attribute: backing.entity.attributes[index].name, reason: error.reasonForSave)
        }
    }

    /// Writes the join rows added and removed since the last save, two statements per table:
    ///
    ///     DELETE FROM "book_readers" USING unnest($1::bigint[], $2::bigint[]) AS modelgen_values(a, b)
    ///       WHERE "book_readers"."book_id" = modelgen_values.a AND "book_readers"."reader_id" = modelgen_values.b
    ///     INSERT INTO "book_readers" ("book_id", "reader_id")
    ///       SELECT * FROM unnest($1::bigint[], $2::bigint[]) ON CONFLICT DO NOTHING
    ///
    /// The pairs added go sorted and each once; `ON CONFLICT DO NOTHING` lets two sessions add the
    /// same membership at once (it costs about 0.4 s of a 100,000-book insert's 5.5 s). Before
    /// them, the rows of the owners whose lists replace members never read go, one statement per
    /// side of a table (`JoinRowChanges.Table.replacedOwners`):
    ///
    ///     DELETE FROM "book_readers" WHERE "book_id" = ANY($1::bigint[]) RETURNING "reader_id"
    ///
    /// Returns the lists written, the tables' pairs added with an end the save deletes, and the
    /// owners on the other side whose rows so went.
    private func writeJoinRows(of objects: [any PersistentModel], on connection: PostgresConnection) async throws -> ([(ModelBackingData, Int)], [JoinRowChanges.Table], [ModelCountCheck.OwnersLeavingJoinRows]) {
        // Both sides name the same two columns: pairs are kept in the order of their names.
        let changes = JoinRowChanges(of: objects, deleting: !deleted.isEmpty) { _, own, target in SQLDialect.unquoted(own) < SQLDialect.unquoted(target) }
        var released: [ModelCountCheck.OwnersLeavingJoinRows] = []
        for change in changes.tables {
            let sides = [(change.columns.0, change.replacedOwners.first, change.columns.1), (change.columns.1, change.replacedOwners.second, change.columns.0)]
            for (column, owners, other) in sides where !owners.isEmpty {
                var bindings = PostgresBindings()
                bindings.append(owners)
                var members: [Int64] = []
                let sql = "DELETE FROM \(postgresQuoted(change.name)) WHERE \(postgresQuoted(column)) \(Self.idListClause) RETURNING \(postgresQuoted(other))"
                for try await member in try await run(sql, bindings, on: connection).decode(Int64.self) { members.append(member) }
                released.append(ModelCountCheck.OwnersLeavingJoinRows(table: change.name, column: other, owners: members))
            }
            try await removeJoinRows(change.removed, of: change, on: connection)
            if !change.added.isEmpty {
                let (table, first, second) = (postgresQuoted(change.name), postgresQuoted(change.columns.0), postgresQuoted(change.columns.1))
                var bindings = PostgresBindings()
                bindings.append(change.added.map(\.first))
                bindings.append(change.added.map(\.second))
                _ = try await run("INSERT INTO \(table) (\(first), \(second)) SELECT * FROM unnest($1::bigint[], $2::bigint[]) ON CONFLICT DO NOTHING", bindings, on: connection).collect()
            }
        }
        return (changes.written, changes.tables.filter { !$0.addedWithDeletedEnd.isEmpty }, released)
    }

    /// Removes the join rows of `pairs` from `change`'s table (one statement; none for no pairs).
    private func removeJoinRows(_ pairs: [JoinRowChanges.Pair], of change: JoinRowChanges.Table, on connection: PostgresConnection) async throws {
        guard !pairs.isEmpty else { return }
        let quote = postgresQuoted
        let (table, first, second) = (quote(change.name), quote(change.columns.0), quote(change.columns.1))
        var bindings = PostgresBindings()
        bindings.append(pairs.map(\.first))
        bindings.append(pairs.map(\.second))
        _ = try await run("DELETE FROM \(table) USING unnest($1::bigint[], $2::bigint[]) AS modelgen_values(a, b) WHERE \(table).\(first) = modelgen_values.a AND \(table).\(second) = modelgen_values.b", bindings, on: connection).collect()
    }

    /// Removes the join rows a save added with an end it deleted, once its deletions ran
    /// (`JoinRowChanges.Table.addedWithDeletedEnd`): those still there name a row another session
    /// deleted, and the changes of an object the save deletes refuse nothing.
    private func removeJoinRows(withDeletedEnd tables: [JoinRowChanges.Table], on connection: PostgresConnection) async throws {
        for change in tables { try await removeJoinRows(change.addedWithDeletedEnd, of: change, on: connection) }
    }

    /// Runs the safe-deletion function of each entity with objects marked deleted (one call per
    /// entity, in the order `SaveDeletionOrder` gives).
    private func runDeletions(on connection: PostgresConnection) async throws {
        var byEntity: [(EntityDescription, [Int64])] = []
        for object in deleted {
            let backing = object.persistentBackingData
            guard let id = backing.id else { continue }
            if let position = byEntity.firstIndex(where: { $0.0 === backing.entity }) {
                byEntity[position].1.append(id)
            } else {
                byEntity.append((backing.entity, [id]))
            }
        }
        // With more than one entity, each call runs in a savepoint, so that a call refused
        // because of objects a later call deletes can run again after it (`SaveDeletionOrder`).
        let retries = byEntity.count > 1
        var order = SaveDeletionOrder<PostgresDeletionRefused>(count: byEntity.count)
        while let index = order.next() {
            let (entity, ids) = byEntity[index]
            var bindings = PostgresBindings()
            bindings.append(ids)
            if retries { _ = try await run("SAVEPOINT modelgen_delete", on: connection).collect() }
            do {
                _ = try await run("SELECT \(safeDeleteFunction(of: entity))($1::bigint[])::text", bindings, on: connection).collect()
                if retries { _ = try await run("RELEASE SAVEPOINT modelgen_delete", on: connection).collect() }
            } catch let error where retries {
                guard let refusal = translate(error) as? PostgresDeletionRefused else { throw error }
                _ = try await run("ROLLBACK TO SAVEPOINT modelgen_delete", on: connection).collect()
                try order.refused(index, refusal)
            }
        }
    }

    /// `<table>_safe_delete`, quoted as needed.
    private func safeDeleteFunction(of entity: EntityDescription) -> String {
        SQLDialect.postgresql.quote(SQLNames.safeDeleteFunction(of: entity.tableName))
    }

    // MARK: - Deleting by predicate

    /// Deletes every object of `model` matching the predicate (all when nil) through the entity's
    /// safe-deletion function, in one transaction, at once, and reports what was deleted and
    /// nullified. A dry run reports the same and changes nothing; a refused delete throws
    /// `PostgresDeletionRefused` and changes nothing.
    ///
    ///     SELECT "book_safe_delete"(ARRAY(SELECT id FROM "book" WHERE …), false)::text
    @discardableResult
    public func delete<Model: PersistentModel>(model: Model.Type, where predicate: Predicate<Model>? = nil, dryRun: Bool = false) async throws -> DeletionReport {
        let mapping = container.mapping(for: Model.entity)
        var seed = "NULL"
        var bindings = PostgresBindings()
        if predicate != nil {
            // The rows the store holds, as the function deletes them.
            var descriptor = FetchDescriptor<Model>(predicate: predicate)
            descriptor.includePendingChanges = false
            let clauses: String
            (clauses, bindings) = try sqlClauses(descriptor, condition(of: descriptor))
            seed = "ARRAY(SELECT \(mapping.table).id FROM \(mapping.table)\(clauses))"
        }
        let sql = "SELECT \(safeDeleteFunction(of: Model.entity))(\(seed), \(dryRun))::text"
        var json = "{}"
        var rowsBefore: [ObjectIdentifier: Set<Int64>] = [:]
        do {
            try await container.client.withTransaction(logger: container.logger) { connection in
                if !dryRun { rowsBefore = try await self.storedRowsOfRegisteredObjects(on: connection) }
                json = try await self.run(sql, bindings, on: connection).firstText() ?? "{}"
            }
        } catch {
            throw translate(error)
        }
        let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] ?? [:]
        // The function reports its counts by entity, unordered: in the order the plan deletes them.
        let counts = (object["deleted"] as? [String: Any]) ?? [:]
        let deleted = (container.deletionOrders[Model.entity.name] ?? []).compactMap { entity in
            (counts[entity] as? NSNumber).map { (entity: entity, count: $0.intValue) }
        }
        let report = DeletionReport(deleted: deleted, nullified: (object["nullified"] as? NSNumber)?.intValue ?? 0, isDryRun: dryRun, statementsExecuted: 1)
        if !dryRun { try await refreshAfterDeletion(RefreshAfterDeletion(rowsBefore: rowsBefore)) }
        return report
    }

    /// The ids of the registered objects whose rows the store holds, by entity, read in the
    /// delete's transaction before it runs: the refresh after it detaches only the objects whose
    /// rows it deleted. One query per entity with objects in memory.
    private func storedRowsOfRegisteredObjects(on connection: PostgresConnection) async throws -> [ObjectIdentifier: Set<Int64>] {
        var rows: [ObjectIdentifier: Set<Int64>] = [:]
        for (entity, registry) in registries where !registry.isEmpty {
            let mapping = container.mappings[entity]!
            var bindings = PostgresBindings()
            bindings.append(Array(registry.keys))
            var ids: Set<Int64> = []
            for try await row in try await run("SELECT id FROM \(mapping.table) WHERE id \(Self.idListClause)", bindings, on: connection) {
                ids.insert(try row.decode(Int64.self))
            }
            rows[entity] = ids
        }
        return rows
    }

    /// After a delete ran in the database, the objects whose rows it removed leave the context and
    /// the others forget them (`refresh`, made with what the store held before). One query per
    /// entity with objects in memory:
    ///
    ///     SELECT id, <key columns> FROM "table" WHERE id = ANY($1::bigint[])
    private func refreshAfterDeletion(_ refresh: RefreshAfterDeletion) async throws {
        var refresh = refresh
        for (entity, registry) in registries where !registry.isEmpty {
            let mapping = container.mappings[entity]!
            var bindings = PostgresBindings()
            bindings.append(Array(registry.keys))
            let sql = "SELECT id" + mapping.keyColumns.map { ", \($0)" }.joined() + " FROM \(mapping.table) WHERE id \(Self.idListClause)"
            var storedForeignIDs: [Int64: [Int64?]] = [:]
            for try await row in try await container.client.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: container.logger) {
                let cells = row.makeRandomAccess()
                var foreignIDs = [Int64?](repeating: nil, count: mapping.entity.relationships.count)
                for (position, key) in mapping.entity.foreignKeys.enumerated() { foreignIDs[key.index] = try cells[position + 1].decode(Int64?.self) }
                storedForeignIDs[try cells[0].decode(Int64.self)] = foreignIDs
            }
            statementsExecuted += 1
            for (id, entry) in registry where refresh.sort(entry.backing, storedForeignIDs: storedForeignIDs[id]) {
                registries[entity]?[id] = nil
            }
        }
        refresh.apply(inserted: inserted)
        pending.forget(refresh.detached)
    }

    // MARK: - Fetch

    /// The objects matching the descriptor, one object per row for this context, with the
    /// relationships it names for prefetching loaded (one query each).
    ///
    ///     SELECT "volume".id, "volume"."title", "volume"."price"::float8, … FROM "volume" WHERE … ORDER BY … LIMIT … OFFSET …
    ///
    /// Unsaved changes count, as in SwiftData (`includePendingChanges`), as on SQLite: a fetch in
    /// id order (no sort, no offset) whose predicate reads only the entity's own columns reads
    /// the saved rows and matches the entity's unsaved objects by the values they hold now
    /// (`unsavedMatching`: the same condition, decided by the server on those values); any other
    /// runs on the rows of the unsaved objects written into a transaction that is then rolled
    /// back, so predicates, order, offset and limit mean what they mean for saved rows (and it
    /// throws what `save` would throw for them).
    public func fetch<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>) async throws -> [Model] {
        try await translatingErrors { try await fetchObjects(descriptor) }
    }

    private func fetchObjects<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>) async throws -> [Model] {
        let mapping = container.mapping(for: Model.entity)
        let condition = try condition(of: descriptor)
        let result: [Model]
        if matchesUnsavedByValue(descriptor, condition), descriptor.sortBy.isEmpty, descriptor.fetchOffset == nil {
            result = try await fetchMatchingUnsavedByValue(descriptor, condition)
        } else {
            let (clauses, bindings) = try sqlClauses(descriptor, condition)
            let sql = mapping.selectSQL + clauses
            let needsUnsavedRows = descriptor.includePendingChanges && pending.fetchNeedsUnsavedRows(of: Model.entity, readsRelationships: descriptor.readsRelationships(condition))
            let needsReleasedRows = descriptor.includePendingChanges && partnersTakenUnread.releasesRows(of: Model.entity)
            result = try await withUnsavedRows(if: needsUnsavedRows, orReleasedRowsIf: needsReleasedRows) { connection in
                try await self.objects(as: Model.self, mapping, sql, bindings, on: connection)
            }
        }
        try await prefetchRelationships(descriptor, of: result)
        return result
    }

    /// Loads the relationships the descriptor names for prefetching, for all of `objects`.
    private func prefetchRelationships<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>, of objects: [Model]) async throws {
        for keyPath in descriptor.relationshipKeyPathsForPrefetching {
            try await load(keyPath, of: objects)
        }
    }

    /// The identifiers of the objects matching the descriptor, in its order (SwiftData's
    /// `fetchIdentifiers`). With no unsaved changes that count, they are read from the rows alone,
    /// making no objects:
    ///
    ///     SELECT "volume".id FROM "volume" WHERE … ORDER BY … LIMIT … OFFSET …
    ///
    /// otherwise they are those of `fetch(descriptor)`'s objects (an inserted object's has no row
    /// id until it is saved).
    public func fetchIdentifiers<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>) async throws -> [PersistentIdentifier] {
        try await translatingErrors {
            guard descriptor.includePendingChanges, hasChanges else {
                let mapping = container.mapping(for: Model.entity)
                let (clauses, bindings) = try sqlClauses(descriptor, condition(of: descriptor))
                var identifiers: [PersistentIdentifier] = []
                try await container.client.withConnection { connection in
                    for try await id in try await self.run("SELECT \(mapping.table).id FROM \(mapping.table)\(clauses)", bindings, on: connection).decode(Int64.self) {
                        identifiers.append(PersistentIdentifier(entity: Model.entity.name, id: id))
                    }
                }
                return identifiers
            }
            return try await fetchObjects(descriptor).map(\.persistentModelID)
        }
    }

    /// Calls `block` with each object matching the descriptor, in its order, loading
    /// `batchSize` of them at a time, with the relationships named for prefetching (SwiftData's
    /// `enumerate(_:batchSize:block:)`, as on SQLite): the objects the block does not keep are
    /// freed batch by batch, so memory is bounded by the batch, not by the result.
    ///
    ///     SELECT "volume".id FROM "volume" WHERE … ORDER BY …                     -- once
    ///     SELECT "volume".id, … FROM "volume" WHERE "volume".id = ANY($1::bigint[])  -- per batch
    ///
    /// The matching identifiers are read first: what the block changes moves no object in or
    /// out, and an object the block deletes before its turn is skipped. With unsaved changes
    /// that count, the objects are those of `fetch(descriptor)`, made all at once.
    public func enumerate<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>, batchSize: Int = 5_000, block: (Model) async throws -> Void) async throws {
        guard batchSize > 0 else { throw ModelContextError.invalidDescriptor("the batch size is \(batchSize); it must be at least 1") }
        guard !descriptor.includePendingChanges || !hasChanges else {
            for object in try await fetch(descriptor) { try await block(object) }
            return
        }
        let ids = try await fetchIdentifiers(descriptor).compactMap(\.id)
        let mapping = container.mapping(for: Model.entity)
        for start in stride(from: 0, to: ids.count, by: batchSize) {
            let batch = Array(ids[start..<min(start + batchSize, ids.count)])
            var bindings = PostgresBindings()
            bindings.append(batch)
            var loaded: [Model] = []
            try await translatingErrors {
                try await container.client.withConnection { connection in
                    loaded = try await self.objects(as: Model.self, mapping, mapping.selectSQL + " WHERE \(mapping.table).id \(Self.idListClause)", bindings, on: connection)
                }
            }
            let byID = Dictionary(uniqueKeysWithValues: loaded.map { ($0.persistentBackingData.id!, $0) })
            let objects = batch.compactMap { byID[$0] }
            try await prefetchRelationships(descriptor, of: objects)
            for object in objects where !object.persistentBackingData.isMarkedDeleted { try await block(object) }
        }
    }

    /// How many objects match the descriptor (its limit and offset apply), unsaved changes
    /// included as `fetch` includes them; without a limit or offset, and with a predicate on the
    /// entity's own columns, the saved rows but the unsaved objects' are counted and the unsaved
    /// objects matched by their values; else, amid unsaved changes, it counts what `fetch` gives
    /// (as on SQLite).
    ///
    ///     SELECT count(*) FROM (SELECT "volume".id FROM "volume" WHERE … LIMIT … OFFSET …) AS matches
    public func fetchCount<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>) async throws -> Int {
        try await translatingErrors { try await countObjects(descriptor) }
    }

    private func countObjects<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>) async throws -> Int {
        let mapping = container.mapping(for: Model.entity)
        let condition = try condition(of: descriptor)
        if matchesUnsavedByValue(descriptor, condition), descriptor.fetchLimit == nil, descriptor.fetchOffset == nil {
            // Without a predicate every object counts: the stored rows but the deleted ones, and
            // the inserted objects (a count after each insert does not look at those inserted before).
            if condition == nil {
                let (clauses, bindings) = try sqlClauses(descriptor, nil)
                let count = try await container.client.withConnection { connection in
                    try await self.count(mapping, clauses, bindings, on: connection)
                }
                return count + pending.insertedCount(of: Model.entity)
            }
            // The saved rows of changed objects count by the objects' values now; only the unsaved
            // objects that can match are sent (with an equality required, those holding its value).
            let candidates = pending.candidates(for: condition, of: Model.entity).filter { !$0.persistentBackingData.isMarkedDeleted }
            let matching = try await unsavedMatching(candidates, condition, mapping)
            let (clauses, bindings) = try sqlClauses(descriptor, condition, alsoExcluding: pending.changedIDs(of: Model.entity))
            let count = try await container.client.withConnection { connection in
                try await self.count(mapping, clauses, bindings, on: connection)
            }
            return count + matching.count
        }
        // A page, or a count through relationships, amid unsaved changes: what `fetch` gives, as on SQLite.
        if descriptor.includePendingChanges, hasChanges,
           descriptor.fetchLimit != nil || descriptor.fetchOffset != nil || descriptor.readsRelationships(condition) || partnersTakenUnread.releasesRows(of: Model.entity) {
            return try await fetchObjects(descriptor).count
        }
        let (clauses, bindings) = try sqlClauses(descriptor, condition)
        return try await container.client.withConnection { connection in
            try await self.count(mapping, clauses, bindings, on: connection)
        }
    }

    private func count(_ mapping: PostgresEntityMapping, _ clauses: String, _ bindings: PostgresBindings, on connection: PostgresConnection) async throws -> Int {
        var count = 0
        let sql = "SELECT count(*) FROM (SELECT \(mapping.table).id FROM \(mapping.table)\(clauses)) AS matches"
        for try await value in try await run(sql, bindings, on: connection).decode(Int64.self) { count = Int(value) }
        return count
    }

    /// Whether a fetch or count with this descriptor (its predicate lowered: `condition`) can
    /// match the entity's unsaved objects by their values, writing no rows: unsaved changes count
    /// and there are some, and neither the predicate nor the order reads through a relationship
    /// (whose objects may have unsaved changes of their own), and no row of the entity may hold a
    /// partner taken unread (which the unsaved rows let go of).
    private func matchesUnsavedByValue<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>, _ condition: QueryCondition?) -> Bool {
        descriptor.includePendingChanges && pending.hasInsertedOrChanged && !descriptor.readsRelationships(condition)
            && !partnersTakenUnread.releasesRows(of: Model.entity)
    }

    /// A fetch in id order whose predicate reads only the entity's columns: the saved rows that
    /// match, corrected by the entity's unsaved objects matched by their values
    /// (`PendingChanges.mergedInIDOrder`, as on SQLite).
    private func fetchMatchingUnsavedByValue<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>, _ condition: QueryCondition?) async throws -> [Model] {
        let entity = Model.entity, mapping = container.mapping(for: entity)
        // Those that can match: with an equality the predicate requires, only the objects holding its value.
        let unsaved = pending.candidates(for: condition, of: entity).filter { !$0.persistentBackingData.isMarkedDeleted }
        let matching = try await unsavedMatching(unsaved, condition, mapping)
        var stored = descriptor
        stored.fetchLimit = pending.savedRowLimit(for: descriptor.fetchLimit, of: entity)
        let (clauses, bindings) = try sqlClauses(stored, condition)
        var saved: [Model] = []
        try await container.client.withConnection { connection in
            saved = try await self.objects(as: Model.self, mapping, mapping.selectSQL + clauses, bindings, on: connection)
        }
        return pending.mergedInIDOrder(saved: saved, candidates: unsaved, limit: descriptor.fetchLimit) {
            matching.contains(ObjectIdentifier($0))
        }
    }

    /// The unsaved objects among `objects` (of `mapping`'s entity) whose values now meet
    /// `condition` (nil: all), decided by the server on those values, which are written nowhere
    /// (one statement; none when no object is unsaved):
    ///
    ///     SELECT modelgen_values.position
    ///     FROM unnest($2::text[], $3::text[], $4::float8[], $5::text[]) WITH ORDINALITY AS modelgen_values(v1, v2, v3, v4, position)
    ///     CROSS JOIN LATERAL (SELECT modelgen_values.v1::numeric AS id, modelgen_values.v2 AS "title",
    ///                                modelgen_values.v3 AS "price", modelgen_values.v4::numeric AS "writer_id") AS "volume"
    ///     WHERE "volume"."price" < $1
    ///
    /// The values are those a save would write (checked, a date to the microsecond); ids and keys
    /// travel as numbers, so that those of objects not yet saved can be 0.5: not NULL, and equal to
    /// no id (as `UnsavedRowTest` has them on SQLite).
    private func unsavedMatching(_ models: [any PersistentModel], _ condition: QueryCondition?, _ mapping: PostgresEntityMapping) async throws -> Set<ObjectIdentifier> {
        guard let condition else { return Set(models.map(ObjectIdentifier.init)) }
        guard !models.isEmpty else { return [] }
        let objects = models.map(\.persistentBackingData)
        var renderer = PredicateSQLRenderer(dialect: .postgresql, table: mapping.entity.tableName)
        let test = renderer.condition(condition)
        var bindings = PostgresBindings()
        try bind(renderer.bindings, renderer.bindingKinds, into: &bindings)
        /// The id of a saved object as a number, else 0.5.
        func number(_ id: Int64?) -> SQLValue { .text(id.map(String.init) ?? "0.5") }
        var columns = [ColumnArray(type: .decimal, values: objects.map { number($0.id) })]
        var selected = ["modelgen_values.v1::numeric AS id"]
        var written = WrittenChanges()
        for (index, column) in mapping.attributeColumns.enumerated() {
            guard let (name, type) = column else { continue }
            columns.append(ColumnArray(type: type, values: try objects.map { try stored($0, index, type, &written) }))
            selected.append("modelgen_values.v\(columns.count)\(type.elementCast) AS \(name)")
        }
        for (key, name) in zip(mapping.entity.foreignKeys, mapping.keyColumns) {
            columns.append(ColumnArray(type: .decimal, values: objects.map { backing in
                switch backing.relationship(key.index) {
                case let .unloaded(foreignID?): number(foreignID)
                case let .toOne(partner?): number(partner.persistentBackingData.id)
                case .unloaded(nil), .toOne(nil), .toMany: .null
                }
            }))
            selected.append("modelgen_values.v\(columns.count)::numeric AS \(name)")
        }
        let first = renderer.bindings.count + 1
        for column in columns { bindings.append(column) }
        let sql = "SELECT modelgen_values.position FROM unnest("
            + columns.indices.map { "$\(first + $0)::\(columns[$0].type.arrayTypeName)" }.joined(separator: ", ")
            + ") WITH ORDINALITY AS modelgen_values(" + columns.indices.map { "v\($0 + 1)" }.joined(separator: ", ") + ", position)"
            + " CROSS JOIN LATERAL (SELECT " + selected.joined(separator: ", ") + ") AS \(mapping.table) WHERE \(test)"
        var matching: Set<ObjectIdentifier> = []
        try await container.client.withConnection { connection in
            for try await position in try await self.run(sql, bindings, on: connection).decode(Int64.self) {
                matching.insert(ObjectIdentifier(models[Int(position) - 1]))
            }
        }
        return matching
    }

    /// The descriptor's predicate, lowered, its comparisons of dates with constants exact on the
    /// microseconds the server keeps (`exactOnMicrosecondGrid`). Stored rows' dates are on that
    /// grid, and so are unsaved objects' as the server decides on them (a save rounds them too):
    /// an unsaved object matches as its row will after the save, in every kind of fetch. Tests of
    /// texts against constants holding NUL, which no stored text holds, are decided without
    /// binding them (`withoutNULConstants`), and so are comparisons of decimals with
    /// `Decimal.nan`, which no stored decimal is (`withoutDecimalNaNConstants`). Before those, a
    /// test of a value with such a constant in place of a missing one (`$0.note ?? "a\0"`, or a
    /// date off the grid) is split into the value's test and the constant's
    /// (`splittingUnstorableFallbacks`).
    private func condition<Model: PersistentModel>(of descriptor: FetchDescriptor<Model>) throws -> QueryCondition? {
        try descriptor.loweredPredicate()?.splittingUnstorableFallbacks().exactOnMicrosecondGrid().withoutNULConstants().withoutDecimalNaNConstants()
    }

    /// The descriptor's ` WHERE … ORDER BY … LIMIT … OFFSET …` and its bindings, for its predicate
    /// lowered by `condition(of:)` (once per fetch: `condition`); when unsaved
    /// changes count, the rows of objects deleted but not saved are left out.
    private func sqlClauses<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>, _ condition: QueryCondition?, alsoExcluding others: [Int64] = []) throws -> (String, PostgresBindings) {
        let excluded = descriptor.includePendingChanges ? pending.deletedIDs(of: Model.entity) : []
        let clauses = try descriptor.sqlClauses(condition, dialect: .postgresql, excluding: excluded + others)
        var bindings = PostgresBindings()
        try bind(clauses.bindings, clauses.kinds, into: &bindings)
        return (clauses.sql, bindings)
    }

    /// The object with this identifier: the one registered, else loaded (nil when its row is gone).
    ///
    ///     SELECT "animal".id, … FROM "animal" WHERE "animal".id = $1
    public func model(for identifier: PersistentIdentifier) async throws -> (any PersistentModel)? {
        guard let id = identifier.id else { return pending.insertedObject(for: identifier) }
        guard let type = container.modelTypes[identifier.entity] else { return nil }
        if let object = registries[ObjectIdentifier(type.entity)]?[id]?.backing.model { return object }
        let mapping = container.mapping(for: type.entity)
        var bindings = PostgresBindings()
        bindings.append(id)
        var found: (any PersistentModel)?
        try await translatingErrors {
            try await container.client.withConnection { connection in
                found = try await self.objects(type, mapping, mapping.selectSQL + " WHERE \(mapping.table).id = $1", bindings, on: connection).first
            }
        }
        return found
    }

    /// The object this context holds for the identifier, if any (SwiftData's `registeredModel(for:)`).
    public func registeredModel<Model: PersistentModel>(for identifier: PersistentIdentifier) -> Model? {
        guard let id = identifier.id else { return pending.insertedObject(for: identifier) as? Model }
        guard let type = container.modelTypes[identifier.entity] else { return nil }
        return registries[ObjectIdentifier(type.entity)]?[id]?.backing.model as? Model
    }

    /// Runs `body` on a connection; when `needed` and the context has unsaved changes, inside a
    /// transaction holding their rows, then rolled back (inserted objects are registered under
    /// passing ids meanwhile, so that a query finds them rather than new copies). When only
    /// `releasedNeeded`, the transaction holds just the keys to partners taken unread
    /// emptied (`releasePartnersTakenUnread`): a query of rows that may hold such a partner is not
    /// refused for what the other unsaved rows would break.
    private func withUnsavedRows<T>(if needed: Bool, orReleasedRowsIf releasedNeeded: Bool = false, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        let writesAll = needed && pending.hasInsertedOrChanged
        guard writesAll || releasedNeeded && !partnersTakenUnread.isEmpty else {
            return try await container.client.withConnection { connection in try await body(connection) }
        }
        let newObjects = inserted
        var assigned: [ModelBackingData] = []
        defer {
            for backing in assigned {
                if let id = backing.id, registries[ObjectIdentifier(backing.entity)]?[id]?.backing === backing { registries[ObjectIdentifier(backing.entity)]?[id] = nil }
                backing.assignID(nil)
            }
        }
        return try await container.client.withConnection { connection in
            _ = try await self.run("BEGIN", on: connection).collect()
            do {
                _ = try await self.run(Self.deferForeignKeys, on: connection).collect()
                self.rowsReleasedForQuery = try await self.releasePartnersTakenUnread(on: connection)
                defer { self.rowsReleasedForQuery = [:] }
                if writesAll { _ = try await self.writeChanges(of: newObjects, on: connection, assigning: &assigned) }
                for backing in assigned { self.register(backing) }
                let result = try await body(connection)
                _ = try await self.run("ROLLBACK", on: connection).collect()
                return result
            } catch {
                _ = try? await self.run("ROLLBACK", on: connection).collect()
                throw self.translate(error)
            }
        }
    }

    /// Runs a query selecting `mapping.selectSQL`'s columns and returns, for each row, the object
    /// this context holds for it, else a new one built from the row.
    private func objects(_ type: any PersistentModel.Type, _ mapping: PostgresEntityMapping, _ sql: String, _ bindings: PostgresBindings, on connection: PostgresConnection) async throws -> [any PersistentModel] {
        var result: [any PersistentModel] = []
        try await forEachObject(type, mapping, sql, bindings, on: connection) { result.append($0) }
        return result
    }

    /// The objects of `objects(_:_:_:_:on:)`, as `Model`s (`ObjectsMade`, as on SQLite).
    private func objects<Model: PersistentModel>(as _: Model.Type, _ mapping: PostgresEntityMapping, _ sql: String, _ bindings: PostgresBindings, on connection: PostgresConnection) async throws -> [Model] {
        let made = ObjectsMade()
        try await forEachObject(Model.self, mapping, sql, bindings, on: connection) { made.append($0) }
        return made.take(as: Model.self)
    }

    /// Runs a query selecting `mapping.selectSQL`'s columns and calls `body` with, for each row,
    /// the object this context has registered for it, else a new one built from the row.
    private func forEachObject(_ type: any PersistentModel.Type, _ mapping: PostgresEntityMapping, _ sql: String, _ bindings: PostgresBindings, on connection: PostgresConnection, _ body: (any PersistentModel) -> Void) async throws {
        let entity = mapping.entity
        for try await row in try await run(sql, bindings, on: connection) {
            let cells = row.makeRandomAccess()
            let id = try cells[0].decode(Int64.self)
            if let existing = registries[ObjectIdentifier(entity)]?[id]?.backing.model {
                body(existing)
                continue
            }
            var values: [SQLValue] = []
            values.reserveCapacity(entity.valueCount)
            var position = 1
            for column in mapping.attributeColumns {
                guard let column else {
                    values.append(.null)
                    continue
                }
                values.append(try column.type.value(of: cells[position]))
                position += 1
            }
            // Keys emptied for the query because their partners were taken: the store's keys, let go of below.
            let released = rowsReleasedForQuery.isEmpty ? nil : rowsReleasedForQuery[ObjectIdentifier(entity)]?[id]
            for key in entity.foreignKeys {
                if let partnerID = released?[key.index] {
                    values.append(.integer(partnerID))
                } else {
                    values.append(try cells[position].decode(Int64?.self).map(SQLValue.integer) ?? .null)
                }
                position += 1
            }
            let backing = ModelBackingData(entity: entity, id: id, contextReference: objectReference) { values[$0] }
            let model = type.init(backingData: backing)
            backing.model = model
            register(backing)
            for keyIndex in partnersTakenUnread.keysLetGo(by: backing) { backing.letGoOfTakenPartner(keyIndex) }
            body(model)
        }
    }

    // MARK: - Loading relationships

    /// Loads the relationship `keyPath` names for every object of `objects` that has not loaded
    /// it, in one query (two for a many-to-many relationship), unsaved changes included as a
    /// context that loads on access shows them (an object moved to another department in memory is
    /// in that one's staff; `UnsavedLinks`): the store's rows, corrected in memory, so a load
    /// writes nothing and unsaved changes that break a constraint do not stop it:
    ///
    ///     SELECT "volume".id, … FROM "volume" WHERE "volume"."writer_id" = ANY($1::bigint[]) ORDER BY "volume".id
    public func load<Model: PersistentModel>(_ keyPath: PartialKeyPath<Model>, of objects: [Model]) async throws {
        try await translatingErrors { try await loadRelationship(keyPath, of: objects) }
    }

    private func loadRelationship<Model: PersistentModel>(_ keyPath: PartialKeyPath<Model>, of objects: [Model]) async throws {
        let entity = Model.entity
        guard let name = Model.propertyName(for: keyPath), let index = entity.relationshipIndex(named: name) else {
            throw ModelContextError.unsupportedPredicate("loading \(keyPath), which is not a relationship of \(entity.name)")
        }
        let pending = objects.map(\.persistentBackingData).filter { if case .unloaded = $0.relationship(index) { $0.id != nil } else { false } }
        guard !pending.isEmpty, let target = container.modelTypes[entity.relationships[index].target] else { return }
        let relationship = entity.relationships[index]
        let targetMapping = container.mapping(for: target.entity)
        let owners = Set(pending.compactMap(\.id))
        let inverse = relationship.inverse.flatMap(target.entity.relationshipIndex(named:))
        /// The objects of the other side whose unsaved changes may move links.
        func unsaved() -> [any PersistentModel] { (inserted + changed).filter { $0.persistentBackingData.entity === target.entity } }
        let quote = postgresQuoted
        func found(where condition: String, _ ids: some Sequence<Int64>, on connection: PostgresConnection) async throws -> [any PersistentModel] {
            var bindings = PostgresBindings()
            bindings.append(Array(Set(ids)).sorted())
            let sql = targetMapping.selectSQL + " WHERE \(condition) \(Self.idListClause) ORDER BY \(targetMapping.table).id"
            return try await self.objects(target, targetMapping, sql, bindings, on: connection)
        }
        var states: [ModelBackingData.RelationshipState] = []
        try await container.client.withConnection { connection in
            switch relationship.storage {
            case .column:
                let foreignIDs = pending.map { backing -> Int64? in
                    if case let .unloaded(foreignID) = backing.relationship(index) { return foreignID }
                    return nil
                }
                let byID = Dictionary(try await found(where: "\(targetMapping.table).id", foreignIDs.compactMap { $0 }, on: connection).map { ($0.persistentBackingData.id!, $0) },
                                      uniquingKeysWith: { first, _ in first })
                states = foreignIDs.map { .toOne($0.flatMap { byID[$0] }) }
            case let .inverseColumn(column):
                guard let key = target.entity.relationshipIndex(keyedBy: column) else { return }
                let stored = try await found(where: "\(targetMapping.table).\(quote(column))", owners, on: connection)
                let byOwner = UnsavedLinks.membersByKey(stored: stored, unsaved: unsaved(), key: key, owners: owners)
                states = pending.map { backing in
                    let list = byOwner[backing.id!] ?? []
                    return relationship.isToMany ? .toMany(ModelBackingData.ModelList(list)) : .toOne(list.first)
                }
            case let .joinTable(table, own, other):
                var bindings = PostgresBindings()
                bindings.append(owners.sorted())
                var stored: [Int64: [Int64]] = [:]
                let sql = "SELECT \(quote(own)), \(quote(other)) FROM \(quote(table)) WHERE \(quote(own)) \(Self.idListClause) ORDER BY \(quote(other))"
                for try await (owner, member) in try await self.run(sql, bindings, on: connection).decode((Int64, Int64).self) { stored[owner, default: []].append(member) }
                let current = UnsavedLinks.joinTableMembers(stored: stored, unsaved: unsaved(), inverse: inverse, owners: owners)
                let byID = Dictionary(try await found(where: "\(targetMapping.table).id", [stored.values.joined(), current.ids.values.joined()].joined(), on: connection)
                                          .map { ($0.persistentBackingData.id!, $0) },
                                      uniquingKeysWith: { first, _ in first })
                states = pending.map { backing in
                    let members = (current.ids[backing.id!] ?? []).compactMap { byID[$0] } + (current.new[backing.id!] ?? [])
                    var list = ModelBackingData.ModelList(members)
                    list.savedMembers = (stored[backing.id!] ?? []).compactMap { byID[$0] }
                    list.membersChanged = MemberIDs(list.savedMembers) != MemberIDs(members) || current.new[backing.id!] != nil
                    return .toMany(list)
                }
            }
        }
        for (backing, state) in zip(pending, states) { backing.setRelationship(index, state) }
        if case .joinTable = relationship.storage, let inverse {
            listsHoldingOwners.noteLoaded(pending, index, otherSide: .init(target.entity, inverse))
        }
        if hasChanges { loadedWithUnsavedChanges += pending.map { WeakBacking(backing: $0) } }
    }

    /// Loads the relationship `keyPath` names for one object.
    public func load<Model: PersistentModel>(_ keyPath: PartialKeyPath<Model>, of object: Model) async throws {
        try await load(keyPath, of: [object])
    }

    // MARK: - Statements

    private func run(_ sql: String, _ bindings: PostgresBindings = PostgresBindings(), on connection: PostgresConnection) async throws -> PostgresRowSequence {
        statementsExecuted += 1
        return try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: container.logger)
    }

    /// A predicate's bindings, as the text of their types (the SQL casts each one).
    private func bind(_ values: [SQLValue], _ kinds: [QueryValueKind], into bindings: inout PostgresBindings) throws {
        for (value, kind) in zip(values, kinds) {
            do {
                bindings.append(try PostgresColumnType(kind).text(for: value))
            } catch let error as PostgresColumnType.Unstorable {
                throw ModelContextError.unsupportedPredicate("a value the predicate compares with (\(error.reason)); compare with a value a save can store")
            }
        }
    }

    private func register(_ backing: ModelBackingData) {
        registries[ObjectIdentifier(backing.entity), default: [:]][backing.id!] = Registered(backing: backing)
        partnersTakenUnread.noteHolder(backing)
    }

    /// `Entity.property` for a column of a table (an attribute's, or a to-one relationship's key).
    private func property(table: String?, column: String?) -> String? {
        guard let table, let column else { return nil }
        for mapping in container.mappings.values where SQLDialect.unquoted(mapping.table) == table {
            if let name = mapping.entity.propertyName(ofColumn: column) { return "\(mapping.entity.name).\(name)" }
        }
        return nil
    }


    /// PostgreSQL's errors in the schema's words (the error of a transaction's body, not its wrapper).
    func translate(_ error: Error) -> Error {
        if let error = error as? PostgresTransactionError {
            return translate(error.underlyingError)
        }
        guard let error = error as? PSQLError else { return error }
        guard let state = error.serverInfo?[.sqlState] else { return PostgresDatabaseError(error) ?? error }
        let message = error.serverInfo?[.message] ?? "\(error)"
        let detail = error.serverInfo?[.detail].map { " (\($0))" } ?? ""
        switch state {
        case "23505":
            // "Key (name)=(x) already exists.", names quoted as SQL needs them ("Key ("select")=(1)"),
            // a compound constraint's separated by commas ("Key ("table", "check")=(t, t)").
            if let table = error.serverInfo?[.tableName], let detail = error.serverInfo?[.detail],
               let open = detail.firstIndex(of: "("), let close = detail.firstIndex(of: ")"), open < close {
                let columns = detail[detail.index(after: open)..<close].split(separator: ", ").map { SQLDialect.unquoted(String($0)) }
                for mapping in container.mappings.values where SQLDialect.unquoted(mapping.table) == table {
                    let names = columns.map { mapping.entity.propertyName(ofColumn: $0) }
                    if !names.isEmpty, !names.contains(nil) {
                        return ModelContextError.uniqueViolation(entity: mapping.entity.name, attribute: names.compactMap { $0 }.joined(separator: ", "))
                    }
                }
            }
            return ModelContextError.constraintViolation(message + detail)
        case "40001", "40P01":
            return PostgresRetryableError(sqlState: state, message: message)
        case "23001" where message.hasPrefix("delete refused"):
            // Raised by a safe-deletion function: "… Author#1 → books (cascade) → Book#1 cannot be deleted: …".
            let entity = message.split(separator: "\n").dropFirst().first.map { $0.trimmingCharacters(in: .whitespaces) }
                .flatMap { $0.split(separator: "#").first.map(String.init) } ?? ""
            return PostgresDeletionRefused(entity: entity, message: message)
        case "23502":
            // A required attribute or relationship left nil: named by the error's table and column.
            if let property = property(table: error.serverInfo?[.tableName], column: error.serverInfo?[.columnName]) {
                return ModelContextError.missingValue(property)
            }
            return ModelContextError.constraintViolation(message + detail)
        case "23503":
            // "Key (writer_id)=(5) is not present in table "writer"": a reference to a row another session deleted.
            if let table = error.serverInfo?[.tableName], let detail = error.serverInfo?[.detail], detail.contains("is not present in table"),
               let open = detail.firstIndex(of: "("), let close = detail.firstIndex(of: ")"), open < close,
               case let afterColumn = detail[detail.index(after: close)...],
               let broken = ModelContextError.brokenReference(table: table, column: SQLDialect.unquoted(String(detail[detail.index(after: open)..<close])),
                                                              key: afterColumn.hasPrefix("=(") ? Int64(afterColumn.dropFirst(2).prefix { $0 != ")" }) : nil,
                                                              entities: container.mappings.values.map(\.entity)) {
                return broken
            }
            return ModelContextError.constraintViolation(message + detail)
        case let state where state.hasPrefix("23"):
            return ModelContextError.constraintViolation(message + detail)
        case "54000" where message.hasPrefix("index row size"):
            // A B-tree entry holds at most about a third of a page: a long, incompressible value of
            // an indexed or unique attribute (SQLite indexes any length).
            let table = error.serverInfo?[.tableName]
            let entity = container.mappings.values.first { SQLDialect.unquoted($0.table) == table }?.entity.name ?? table ?? "a table"
            let index = error.serverInfo?[.constraintName].map { " (index \($0))" } ?? ""
            return ModelContextError.constraintViolation("""
                a value of an indexed or unique attribute of \(entity) is too long for PostgreSQL to index\(index): \(message). \
                Such values must stay within about 2,700 bytes once compressed; shorten it, or drop `indexed`/`unique` from the attribute
                """)
        default:
            return PostgresDatabaseError(error) ?? error
        }
    }

    /// Runs `body`, its errors in the schema's words (`translate`).
    private func translatingErrors<Result>(_ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch {
            throw translate(error)
        }
    }
}

@_spi(Backend) extension PostgresModelContext: ModelBackingContext {
    public func didChange(_ backing: ModelBackingData) {
        guard backing.id != nil, let object = backing.model else { return }
        _ = pending.change(object)
    }

    public func insertGraph(_ model: any PersistentModel) {
        let backing = model.persistentBackingData
        guard backing.mayJoin(self), pending.insert(model) else { return }
        backing.model = model
        backing.managingContext = self
        backing.reattachToRelated()
        backing.forEachLoadedRelatedObject(insertGraph)
    }

    /// What the context holds without asking the server: a key on the object's row names a
    /// registered object, or nil; anything else is not loaded.
    public func load(_ index: Int, of backing: ModelBackingData, foreignID: Int64?) -> ModelBackingData.RelationshipState? {
        let relationship = backing.entity.relationships[index]
        guard case .column = relationship.storage else { return nil }
        guard let foreignID else { return .toOne(nil) }
        guard let target = container.modelTypes[relationship.target], let object = registries[ObjectIdentifier(target.entity)]?[foreignID]?.backing.model else { return nil }
        return .toOne(object)
    }

    /// The objects this context holds that the replaced relationship no longer refers to let go
    /// of `backing`: where keys hold the links, at once and as they are read
    /// (`PartnersTakenUnread`); where a join table does, those whose loaded list holds `backing`
    /// (`ListsHoldingOwners`: found in an index of the lists holding each owner, made once per
    /// save or rollback; lists loaded later leave it out, the save's replacement of the join rows
    /// being an unsaved change).
    public func relationshipReplacedUnread(_ backing: ModelBackingData, through index: Int) {
        let relationship = backing.entity.relationships[index]
        guard let keyEntity = container.modelTypes[relationship.target]?.entity else { return }
        let registry = registries[ObjectIdentifier(keyEntity)] ?? [:]
        if case .joinTable = relationship.storage {
            guard let ownerID = backing.id, let inverse = relationship.inverse.flatMap(keyEntity.relationshipIndex(named:)),
                  case let .toMany(list) = backing.relationship(index) else { return }
            let kept = Set(list.objects.lazy.map { ObjectIdentifier($0.persistentBackingData) })
            let indexed = listsHoldingOwners.members(holding: ownerID, through: .init(backing.entity, index), inverse: inverse) {
                registry.values.map(\.backing) + inserted.lazy.map(\.persistentBackingData).filter { $0.entity === keyEntity }
            }
            for entry in indexed {
                let member: ModelBackingData? = switch entry {
                case let .saved(id): registry[id]?.backing
                case let .new(backing): backing
                }
                if let member, !kept.contains(ObjectIdentifier(member)) { member.letGoOfOwner(backing, through: inverse) }
            }
            return
        }
        guard let (keyIndex, holders) = partnersTakenUnread.take(backing, through: index, keyEntity: keyEntity, registered: { registry[$0]?.backing },
                                                                  allRegistered: { registry.values.map(\.backing) }) else { return }
        for holder in holders { holder.letGoOfTakenPartner(keyIndex) }
    }

    /// Noted where a list of `backing`'s side may be replaced unread later (`ListsHoldingOwners`).
    public func listNotLoadedGained(_ member: ModelBackingData, _ backing: ModelBackingData, through index: Int) {
        guard let ownerID = backing.id else { return }
        listsHoldingOwners.noteJoined(member, owner: ownerID, through: .init(backing.entity, index))
    }

    public func relationshipNotLoaded(_ index: Int, of backing: ModelBackingData) -> Never {
        let name = backing.entity.relationships[index].name
        preconditionFailure("\(backing.entity.name).\(name) of \(backing.entity.name)#\(backing.id.map(String.init) ?? "new") is not loaded: a PostgreSQL context loads relationships only when asked. "
            + "Add \\.\(name) to the FetchDescriptor's relationshipKeyPathsForPrefetching, or `try await context.load(\\.\(name), of: objects)` before using it")
    }

    public func forget(_ backing: ModelBackingData, id: Int64) {
        if registries[ObjectIdentifier(backing.entity)]?[id]?.backing === backing { registries[ObjectIdentifier(backing.entity)]?[id] = nil }
    }

    public var indexesPendingValues: Bool { pending.indexesValues }

    public func pendingValueChanged(_ backing: ModelBackingData, attribute: Int, from old: SQLValue) {
        pending.valueChanged(backing, attribute: attribute, from: old)
    }
}
