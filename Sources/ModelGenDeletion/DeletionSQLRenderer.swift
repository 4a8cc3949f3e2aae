import ModelGenProgram
import ModelGenQuery
import ModelGenSchema

/// Renders a `DeletionPlan` as the SQL statements of a `DeletionProgram`, for SQLite (run by the
/// runtime) or PostgreSQL (wrapped in a function by `PostgreSQLDeletionFunctions`).
///
/// Each entity whose ids the plan collects gets a temporary table `modelgen_delete_<table>(id,
/// parent_id, edge)` (shortened with a hash past 63 bytes: `SQLNames.closureTable`) holding the ids to delete and, for explanations, how each was reached; the
/// others are deleted through their keys to collected parents. On PostgreSQL's path for small
/// deletes (`ClosureStorage.arrays`) the same columns are array variables of the function instead.
public struct DeletionSQLRenderer: Sendable {
    public let schema: ModelSchema
    public let dialect: SQLDialect
    /// Where the collected ids are held.
    public let closureStorage: ClosureStorage
    /// With closures in arrays, which columns besides `id` they keep (set for a plan by
    /// `configured(for:)`): how each object was reached (`parent_id`, `edge`), read only to explain
    /// refusals, and the round of a cycle it was collected in (`round`), read only by a cycle's rounds.
    public private(set) var keepsPaths = true, keepsRounds = true
    /// PostgreSQL, set by `configured(for:)` for a plan whose every collection follows children's
    /// keys to their parents once (a tree of one-to-many cascades, no cycle): each level is
    /// collected and locked in one `SELECT … FOR UPDATE`, top down, after its parents are locked.
    /// A child moved to another parent meanwhile is then left out (PostgreSQL checks the locked
    /// row's new version against the condition), no child can join a locked parent, and the
    /// collected rows of an entity are exactly those whose key names a collected parent, so they
    /// are deleted through those keys, as PostgreSQL's own cascade finds them.
    public private(set) var collectsTopDown = false

    /// Where a delete holds the ids it collects.
    public enum ClosureStorage: Sendable {
        /// A temporary table per collecting entity (`id`, `parent_id`, `edge`, `round`).
        case tables
        /// PostgreSQL only: four array variables of the function per collecting entity,
        /// `<prefix>_id`, `<prefix>_parent`, `<prefix>_edge` and `<prefix>_round`, where `<prefix>`
        /// is the target's `closureTable`. No table is made, so the statements' plans stay valid
        /// from one transaction to the next; a collection is a `SELECT` of the rows to add
        /// (`id`, `parent_id`, `edge`), which the function appends to the arrays.
        case arrays
    }

    /// With closures in arrays, the function's variable holding how many objects of one entity the
    /// arrays may hold: a recursive walk reads at most one more, so a deep tree costs little before
    /// the function turns to tables.
    public static let arrayLimitVariable = "modelgen_array_limit"

    /// Rows a check returns at most; a refusal lists this many blockers per check: the pairs of
    /// least ids (blocked object, then survivor), the same on both backends whatever order their
    /// rows are stored in.
    public static let blockerLimit = 100

    /// Each entity's table and closure table as written in SQL, quoted once here rather than in
    /// every statement that names them.
    private let names: [String: (table: String, closureTable: String)]

    public init(schema: ModelSchema, dialect: SQLDialect = .sqlite, closureStorage: ClosureStorage = .tables) {
        precondition(closureStorage == .tables || dialect == .postgresql, "closures in arrays are PostgreSQL's")
        self.schema = schema
        self.dialect = dialect
        self.closureStorage = closureStorage
        let temporarySchema = dialect == .sqlite ? "temp." : "pg_temp."
        var names: [String: (table: String, closureTable: String)] = [:]
        names.reserveCapacity(schema.entities.count)
        for (index, entity) in schema.entities.enumerated() {
            let closure = switch closureStorage {
            case .tables: temporarySchema + dialect.quote(SQLNames.closureTable(of: entity.tableName))
            case .arrays: "modelgen_closure_\(index + 1)"
            }
            names[entity.name] = (dialect.quote(entity.tableName), closure)
        }
        self.names = names
    }

    /// The renderer for `plan`: with closures in arrays, they keep only the columns the plan reads.
    public func configured(for plan: DeletionPlan) -> DeletionSQLRenderer {
        var renderer = self
        renderer.collectsTopDown = dialect == .postgresql && !plan.collection.isEmpty && plan.collection.allSatisfy { step in
            guard case let .follow(index) = step, case .otherColumn = plan.edges[index].link else { return false }
            return true
        }
        guard closureStorage == .arrays else { return renderer }
        // Paths explain refusals, and show which collected rows lost the link they were collected
        // through (`brokenLinks`, read where the closure is locked after it is collected).
        let locksAfterCollecting = !plan.collection.isEmpty && !renderer.collectsTopDown
        renderer.keepsPaths = !plan.edges.isEmpty && (!plan.checks.isEmpty || locksAfterCollecting)
        renderer.keepsRounds = plan.collection.contains { step in
            guard case let .followUntilStable(indices) = step else { return false }
            return !isRecursive(indices, in: plan)
        }
        return renderer
    }

    public func program(for plan: DeletionPlan) -> DeletionProgram {
        configured(for: plan).render(plan)
    }

    private func render(_ plan: DeletionPlan) -> DeletionProgram {
        let members = Set(plan.closure)
        let targets = collectedEntities(of: plan).map { entity in
            DeletionProgram.Target(entity: entity, table: quotedTable(entity), closureTable: closureTable(entity))
        }
        let collections = plan.collection.map { step -> DeletionProgram.Collection in
            switch step {
            case let .follow(index): .once(collect(plan.edges[index], index: index))
            case let .followUntilStable(indices) where isRecursive(indices, in: plan): .once(collectRecursively(plan.edges[indices[0]], index: indices[0]))
            case let .followUntilStable(indices): .untilStable(indices.map { collect(plan.edges[$0], index: $0, frontier: true) })
            }
        }
        let checks = plan.checks.map { check in
            DeletionProgram.Check(kind: DeletionProgram.CheckKind(rawValue: check.kind.rawValue)!,
                                  subject: check.traversal.subject, other: check.traversal.other,
                                  relationship: check.relationship, rule: check.rule.rawValue,
                                  sql: survivingPairs(check.traversal, members: members) + " ORDER BY subject, other LIMIT \(Self.blockerLimit)" + lockingBlockers(check.traversal))
        }
        let nullifications = plan.nullifications.map { foreignKey in
            var sql = "UPDATE \(q(foreignKey.table)) SET \(q(foreignKey.column)) = NULL WHERE \(isCollected(q(foreignKey.column), foreignKey.target))"
            if members.contains(foreignKey.entity) {
                // The table is named, not aliased, outside the subquery: the alias inside takes the
                // reserved prefix, or a table named like it would be hidden (`c.id = c.id`).
                sql += " AND NOT EXISTS (SELECT 1 FROM \(closure(foreignKey.entity, as: "modelgen_c")) WHERE modelgen_c.id = \(q(foreignKey.table)).id)"
            }
            return DeletionProgram.Nullification(relationship: "\(foreignKey.entity).\(foreignKey.relationship)", sql: sql)
        }
        // PostgreSQL deletes a table's collected rows in one statement and runs the ON DELETE
        // actions after it, when all of them are gone, so a reference between two rows of the same
        // table needs no detaching first. SQLite runs the actions row by row, recursively (a chain
        // deeper than its trigger depth would fail when enforcement is on), so its plans detach.
        // A required key (of a row referring to its own table) is pointed at its own row: a
        // reference that no delete of another row acts on, and that goes with the row. A unique
        // one (a one-to-one) cannot be where the rows form a cycle, since SQLite checks uniqueness
        // row by row and each row's id is the key of the row before it until that one moves: it is
        // pointed below every id instead (each row at its own such value), at no row, which the
        // executor runs with the check of keys deferred until the rows are gone.
        let detachments = plan.detachments.filter { dialect == .sqlite || $0.entity != $0.target }.map { foreignKey in
            let value = !foreignKey.isRequired ? "NULL" : foreignKey.isUnique ? "2 * (SELECT min(id) FROM \(q(foreignKey.table))) - 1 - id" : "id"
            return "UPDATE \(q(foreignKey.table)) SET \(q(foreignKey.column)) = \(value) WHERE \(isCollected("id", foreignKey.entity)) AND \(isCollected(q(foreignKey.column), foreignKey.target))"
        }
        let joinRowRemovals = plan.joinTables.map { joinTable in
            var conditions: [String] = []
            if members.contains(joinTable.entity) {
                conditions.append(isCollected(q(joinTable.column), joinTable.entity))
            }
            if members.contains(joinTable.target) {
                conditions.append(isCollected(q(joinTable.targetColumn), joinTable.target))
            }
            return "DELETE FROM \(q(joinTable.name)) WHERE " + conditions.joined(separator: " OR ")
        }
        let deletions = plan.deletionOrder.map { entity in
            DeletionProgram.Deletion(entity: entity, sql: "DELETE FROM \(quotedTable(entity)) WHERE " + deletedRows(of: entity, in: plan))
        }
        let wholeTable = plan.wholeTableParentKeys.map { parentKeys in
            DeletionProgram.WholeTableDeletion(
                orphanCounts: parentKeys.map { "SELECT count(*) FROM \(q($0.table)) WHERE \(q($0.column)) IS NULL" },
                deletions: plan.deletionOrder.map { .init(entity: $0, sql: "DELETE FROM \(quotedTable($0))") })
        }
        return DeletionProgram(targets: targets,
                               edges: plan.edges.map { .init(source: $0.subject, relationship: $0.relationship, target: $0.other) },
                               collections: collections, checks: checks, nullifications: nullifications,
                               detachments: detachments, joinRowRemovals: joinRowRemovals, deletions: deletions,
                               wholeTable: wholeTable)
    }

    /// For each collection of the plan's program, the entity each of its statements adds to (one
    /// per statement, in order).
    public func collectionTargets(of plan: DeletionPlan) -> [[String]] {
        plan.collection.map { step in
            switch step {
            case let .follow(index): [plan.edges[index].other]
            case let .followUntilStable(indices): isRecursive(indices, in: plan) ? [plan.edges[indices[0]].other] : indices.map { plan.edges[$0].other }
            }
        }
    }

    /// Whether a cycle of these edges is collected by one recursive query (`collectRecursively`).
    private func isRecursive(_ indices: [Int], in plan: DeletionPlan) -> Bool {
        indices.count == 1 && isRecursive(plan.edges[indices[0]])
    }

    /// The entities of the closure whose ids the plan collects (the others are deleted through
    /// their keys to collected parents), in closure order.
    private func collectedEntities(of plan: DeletionPlan) -> [String] {
        plan.closure.filter { plan.deletedThroughParentKeys[$0] == nil }
    }

    /// PostgreSQL: a condition that holds when some collected row no longer has the link it was
    /// collected through (its `parent_id` and `edge`), read once the collected rows are locked. While
    /// none has lost its link, every collected row is still reached from the objects asked for by
    /// the links it was collected through (each row's parent was collected before it), and the
    /// locks keep them so.
    public func brokenLinks(of plan: DeletionPlan) -> String {
        let collected = Set(collectedEntities(of: plan))
        let links = plan.edges.indices.filter { collected.contains(plan.edges[$0].other) }.map { index in
            let edge = plan.edges[index], rows = closure(edge.other, as: "c")
            switch edge.link {
            case let .otherColumn(table, column):
                return "EXISTS (SELECT 1 FROM \(rows) JOIN \(q(table)) AS t ON t.id = c.id WHERE c.edge = \(index) AND t.\(q(column)) IS DISTINCT FROM c.parent_id)"
            case let .subjectColumn(table, column):
                return "EXISTS (SELECT 1 FROM \(rows) JOIN \(q(table)) AS s ON s.id = c.parent_id WHERE c.edge = \(index) AND s.\(q(column)) IS DISTINCT FROM c.id)"
            case let .joinTable(name, subjectColumn, otherColumn):
                return "EXISTS (SELECT 1 FROM \(rows) WHERE c.edge = \(index) AND NOT EXISTS (SELECT 1 FROM \(q(name)) AS j WHERE j.\(q(subjectColumn)) = c.parent_id AND j.\(q(otherColumn)) = c.id))"
            }
        }
        return SQLConnective.or.join(links)
    }

    /// PostgreSQL: the locks on the join rows the closure was collected through (PL/pgSQL
    /// statements, one per cascade through a join table), taken with the collected rows' and before
    /// `brokenLinks` is read. Deleting a join row locks neither row it links: without these, another
    /// session could delete a link after the check and the delete would still cascade across it. A
    /// link being deleted when its lock is asked for is waited for and, once gone, reads as lost.
    /// Rows are locked in the order of their columns' names, the same from either side of a table.
    public func linkLocks(of plan: DeletionPlan) -> [String] {
        let collected = Set(collectedEntities(of: plan))
        return plan.edges.indices.filter { collected.contains(plan.edges[$0].other) }.compactMap { index in
            guard case let .joinTable(name, subjectColumn, otherColumn) = plan.edges[index].link else { return nil }
            let order = [subjectColumn, otherColumn].sorted().map { "j.\(q($0))" }.joined(separator: ", ")
            return "PERFORM 1 FROM \(q(name)) AS j JOIN \(closure(plan.edges[index].other, as: "c")) ON j.\(q(otherColumn)) = c.id AND j.\(q(subjectColumn)) = c.parent_id WHERE c.edge = \(index) ORDER BY \(order) FOR UPDATE OF j"
        }
    }

    /// The condition on `entity`'s rows that selects the deleted ones: collected ids, or keys
    /// pointing at collected parents (`DeletionPlan.deletedThroughParentKeys`, and every entity but
    /// the root when the closure is collected top down, `collectsTopDown`, unless the plan nullifies
    /// or detaches keys of its rows).
    private func deletedRows(of entity: String, in plan: DeletionPlan) -> String {
        let parentEdges: [Int]
        if let edges = plan.deletedThroughParentKeys[entity] {
            parentEdges = edges
        } else if collectsTopDown, entity != plan.root, !(plan.nullifications + plan.detachments).contains(where: { $0.entity == entity }) {
            // Not where the plan sets keys of the entity's rows to NULL before the deletes (a
            // detachment may clear the very key the rows would be found by).
            parentEdges = plan.edges.indices.filter { plan.edges[$0].other == entity }
        } else {
            return isCollected("id", entity)
        }
        // A table may hold a thousand keys to collected parents: `SQLConnective` keeps SQLite's parse shallow.
        return SQLConnective.or.join(parentEdges.map { index -> String in
            let edge = plan.edges[index]
            guard case let .otherColumn(_, column) = edge.link else { preconditionFailure("planner invariant: a parent key is on the deleted rows") }
            return isCollected(q(column), edge.subject)
        })
    }

    private func q(_ identifier: String) -> String { dialect.quote(identifier) }

    private func quotedTable(_ entity: String) -> String { names[entity]!.table }

    /// `temp.modelgen_delete_<table>` (PostgreSQL: `pg_temp.…`); with closures in arrays, the
    /// prefix of the entity's array variables.
    func closureTable(_ entity: String) -> String { names[entity]!.closureTable }

    /// The collected objects of `entity` as a relation named `alias`, with the columns `id`,
    /// `parent_id`, `edge` and `round`: the closure table, or its arrays side by side.
    func closure(_ entity: String, as alias: String) -> String {
        let closure = closureTable(entity)
        switch closureStorage {
        case .tables:
            return "\(closure) AS \(alias)"
        case .arrays:
            let columns = arrayColumns
            let arrays = columns.map { "\(closure)_\($0.array)" }.joined(separator: ", ")
            return "unnest(\(arrays)) AS \(alias)(\(columns.map(\.column).joined(separator: ", ")))"
        }
    }

    /// With closures in arrays, the columns kept: each array's suffix, the column it stands for and
    /// the array's type.
    var arrayColumns: [(array: String, column: String, type: String)] {
        [("id", "id", "bigint[]")]
            + (keepsPaths ? [("parent", "parent_id", "bigint[]"), ("edge", "edge", "integer[]")] : [])
            + (keepsRounds ? [("round", "round", "integer[]")] : [])
    }

    /// The condition that `expression` is the id of a collected object of `entity`:
    ///
    ///     "writer_id" IN (SELECT id FROM temp.modelgen_delete_writer)   -- closure tables
    ///     "writer_id" = ANY(modelgen_closure_2_id)                     -- closure arrays
    ///
    /// An array (at most `modelgen.array_closure_limit` ids) is probed through the column's index
    /// as one scan, which costs a fraction of a join with the array unnested for the few ids of
    /// an app's everyday delete.
    private func isCollected(_ expression: String, _ entity: String) -> String {
        switch closureStorage {
        case .tables: return "\(expression) IN (SELECT id FROM \(closureTable(entity)))"
        case .arrays: return "\(expression) = ANY(\(closureTable(entity))_id)"
        }
    }

    /// Where the references of a traversal from collected subjects are read: `subject` and
    /// `other` are the two ids as SQL expressions over `source`, a `FROM … WHERE …` clause.
    private struct References {
        var subject: String
        var other: String
        var source: String
    }

    /// Every reference of `traversal` from a collected subject; with `frontier`, only from the
    /// subjects collected since the previous round of a cycle (`round >= previous round`), read
    /// from the closure table outwards, so each round costs what it adds: a chain of any depth is
    /// collected in linear time (semi-naive evaluation), not by re-reading everything each round.
    private func references(_ traversal: Traversal, frontier: Bool = false) -> References {
        let subject = traversal.subject
        let since = frontier ? " AND k.round >= \(roundParameters.previous)" : ""
        switch traversal.link {
        case let .subjectColumn(table, column):
            return References(subject: "s.id", other: "s.\(q(column))",
                              source: "FROM \(closure(subject, as: "k")) JOIN \(q(table)) AS s ON s.id = k.id WHERE s.\(q(column)) IS NOT NULL\(since)")
        case let .otherColumn(table, column) where frontier:
            return References(subject: "o.\(q(column))", other: "o.id",
                              source: "FROM \(closure(subject, as: "k")) JOIN \(q(table)) AS o ON o.\(q(column)) = k.id WHERE TRUE\(since)")
        case let .otherColumn(table, column):
            return References(subject: "o.\(q(column))", other: "o.id",
                              source: "FROM \(q(table)) AS o WHERE \(isCollected("o.\(q(column))", subject))")
        case let .joinTable(name, subjectColumn, otherColumn) where frontier:
            return References(subject: "j.\(q(subjectColumn))", other: "j.\(q(otherColumn))",
                              source: "FROM \(closure(subject, as: "k")) JOIN \(q(name)) AS j ON j.\(q(subjectColumn)) = k.id WHERE TRUE\(since)")
        case let .joinTable(name, subjectColumn, otherColumn):
            return References(subject: "j.\(q(subjectColumn))", other: "j.\(q(otherColumn))",
                              source: "FROM \(q(name)) AS j WHERE \(isCollected("j.\(q(subjectColumn))", subject))")
        }
    }

    /// How a cycle's statements name the previous and the current round: numbered parameters the
    /// runtime binds in SQLite (`?1`, `?2`), variables of the function in PostgreSQL.
    private var roundParameters: (previous: String, current: String) {
        dialect == .sqlite ? ("?1", "?2") : ("modelgen_previous_round", "modelgen_current_round")
    }

    /// `SELECT subject, other` for the references whose other object is not collected: the survivors involved.
    private func survivingPairs(_ traversal: Traversal, members: Set<String>) -> String {
        let references = references(traversal)
        let pairs = "SELECT \(references.subject) AS subject, \(references.other) AS other \(references.source)"
        guard members.contains(traversal.other) else { return pairs }
        // NOT EXISTS, not NOT IN: PostgreSQL stops hashing a NOT IN subquery past work_mem and rescans it per row.
        return pairs + " AND NOT EXISTS (SELECT 1 FROM \(closure(traversal.other, as: "c")) WHERE c.id = \(references.other))"
    }

    /// In PostgreSQL, a check locks the rows holding the references it finds (`FOR SHARE`, as
    /// PostgreSQL's own foreign-key checks lock what they find): a reference another session is
    /// removing meanwhile (its row deleted or its key moved, a link unlinked, not yet committed) is
    /// waited for and looked at again once that session ends, so the delete refuses only for
    /// references still there, as it would after that session. A reference held by the subject's
    /// own row needs nothing: the closure's rows are locked already.
    private func lockingBlockers(_ traversal: Traversal) -> String {
        guard dialect == .postgresql else { return "" }
        switch traversal.link {
        case .subjectColumn: return ""
        case .otherColumn: return " FOR SHARE OF o"
        case .joinTable: return " FOR SHARE OF j"
        }
    }

    /// Whether following `edge` reaches each row at most once: through the key on the reached
    /// rows (each has one parent), not a key of the subject's or a join table.
    private func reachesEachRowOnce(_ edge: Traversal) -> Bool {
        if case .otherColumn = edge.link { true } else { false }
    }

    /// A cycle of one self-reference through a key column (a tree or chain of folders, comments,
    /// org charts; `isRecursive`) as one recursive query: everything reachable from the collected
    /// objects, in one statement whatever the depth, rather than one round per level.
    /// Whether `edge`'s cycle is collected by one recursive query (`collectRecursively`).
    private func isRecursive(_ edge: Traversal) -> Bool {
        guard edge.subject == edge.other else { return false }
        if case .joinTable = edge.link { return false }
        return true
    }

    private func collectRecursively(_ edge: Traversal, index: Int) -> String {
        let entity = edge.subject
        let (start, step): (String, String)
        switch edge.link {
        case let .otherColumn(table, column):
            let reached = "o.id, o.\(q(column))", new = "NOT EXISTS (SELECT 1 FROM \(closure(entity, as: "c")) WHERE c.id = o.id)"
            start = "SELECT \(reached) FROM \(closure(entity, as: "k")) JOIN \(q(table)) AS o ON o.\(q(column)) = k.id WHERE \(new)"
            step = "SELECT \(reached) FROM modelgen_reached AS r JOIN \(q(table)) AS o ON o.\(q(column)) = r.id WHERE \(new)"
        case let .subjectColumn(table, column):
            let reached = "s.\(q(column)), s.id", new = "NOT EXISTS (SELECT 1 FROM \(closure(entity, as: "c")) WHERE c.id = s.\(q(column)))"
            start = "SELECT \(reached) FROM \(closure(entity, as: "k")) JOIN \(q(table)) AS s ON s.id = k.id WHERE s.\(q(column)) IS NOT NULL AND \(new)"
            step = "SELECT \(reached) FROM modelgen_reached AS r JOIN \(q(table)) AS s ON s.id = r.id WHERE s.\(q(column)) IS NOT NULL AND \(new)"
        case .joinTable:
            preconditionFailure("a cycle through a join table is collected round by round")
        }
        // Only rows not yet collected are walked: when the locked closure is collected again, the
        // walk finds just what was added meanwhile instead of repeating the whole descent.
        // UNION, not UNION ALL: a row met again (a cycle in the data) ends its walk.
        let walk = "WITH RECURSIVE modelgen_reached(id, parent_id) AS (\(start) UNION \(step)) "
        let collected = closureTable(entity)
        // Through a key of the reached rows, each is reached once (its one parent). Through a key of
        // the subject, a row may be reached several times, at several depths: it keeps the parent it
        // was first reached from (the walk goes breadth first), so that the parents a refusal's path
        // follows lead back to the objects asked for, never round a cycle of the data (SQLite's
        // first insert of the id; in PostgreSQL the first in the walk's order, DISTINCT ON ordered by it).
        if dialect == .sqlite {
            return walk + "INSERT OR IGNORE INTO \(collected) (id, parent_id, edge) SELECT id, parent_id, \(index) FROM modelgen_reached"
        }
        let rows = if reachesEachRowOnce(edge) {
            // Reached once each: with arrays, the walk stops one row past the limit.
            "SELECT id, parent_id, \(index) AS edge FROM modelgen_reached" + (closureStorage == .arrays ? " LIMIT \(Self.arrayLimitVariable) + 1" : "")
        } else {
            "SELECT DISTINCT ON (id) id, parent_id, \(index) AS edge FROM (SELECT id, parent_id, row_number() OVER () AS modelgen_position FROM modelgen_reached) AS r ORDER BY id, modelgen_position"
        }
        // Rows collected before are left out by the walk.
        return walk + (closureStorage == .tables ? "INSERT INTO \(collected) (id, parent_id, edge) " : "") + rows
    }

    /// Adds the objects `edge` reaches to the closure; in a cycle (`frontier`), from the last
    /// round's objects only, marking what it adds with the current round. With closures in arrays,
    /// the `SELECT` of the rows to add (`id`, `parent_id`, `edge`; the function gives the round).
    private func collect(_ edge: Traversal, index: Int, frontier: Bool = false) -> String {
        let references = references(edge, frontier: frontier)
        let (roundColumn, roundValue) = frontier ? (", round", ", \(roundParameters.current)") : ("", "")
        // Collected top down, the rows are locked as they are read (`collectsTopDown`).
        let lock = collectsTopDown ? " ORDER BY o.id FOR UPDATE OF o" : ""
        // Rows found through their own key column come once each; other links (a key of the
        // subject, a join table) may reach an object from several collected ones: it keeps the one
        // of least id as the parent its refusal's path names, in both dialects (PostgreSQL's
        // DISTINCT ON with that order, SQLite's first insert of the id).
        let reachedOnce = reachesEachRowOnce(edge)
        let (distinct, order) = reachedOnce ? ("", lock) : ("DISTINCT ON (\(references.other)) ", " ORDER BY \(references.other), \(references.subject)")
        if closureStorage == .arrays {
            // No LIMIT here (unlike the recursive walk): in a plan made for any value of it, the
            // planner expects to stop early and scans the child table instead of probing its index.
            return "SELECT \(distinct)\(references.other) AS id, \(references.subject) AS parent_id, \(index) AS edge \(references.source)"
                + " AND NOT EXISTS (SELECT 1 FROM \(closure(edge.other, as: "c")) WHERE c.id = \(references.other))" + order
        }
        switch dialect {
        case .sqlite:
            return "INSERT OR IGNORE INTO \(closureTable(edge.other)) (id, parent_id, edge\(roundColumn)) SELECT \(references.other), \(references.subject), \(index)\(roundValue) \(references.source)"
                + (reachedOnce ? "" : " ORDER BY \(references.subject)")
        case .postgresql:
            // Rows already collected are left out before the insert (NOT EXISTS), not by `ON
            // CONFLICT DO NOTHING`, which makes every row a speculative insertion and cost a
            // collection half its time; the collection run again after the locks reads what it
            // collected before.
            let closure = closureTable(edge.other)
            return "INSERT INTO \(closure) (id, parent_id, edge\(roundColumn)) SELECT \(distinct)\(references.other), \(references.subject), \(index)\(roundValue) \(references.source)"
                + " AND NOT EXISTS (SELECT 1 FROM \(self.closure(edge.other, as: "c")) WHERE c.id = \(references.other))\(order)"
        }
    }
}
