import Foundation

/// Which objects of a program's root entity to delete.
public enum DeletionSeed: Sendable {
    /// These ids; ids that do not exist are reported in `DeletionReport.missingIDs` and ignored.
    case ids([Int64])
    /// Every object of the entity.
    case all
    /// The objects matching an SQL condition on the root table (as produced by the predicate translator).
    case matching(condition: String, bindings: [SQLiteValue])
}

/// Runs a `DeletionProgram` on an SQLite database in one transaction (a savepoint when the
/// caller already has one open). A refusal or an error rolls everything back; a dry run
/// rolls back after counting, so it reports exactly what the real run would do.
public struct DeletionExecutor {
    public let database: SQLiteDatabase
    /// Tables (raw names, and quoted as SQL needs them) whose largest ids a run records before it
    /// deletes, in its transaction, so that the ids of the rows it deletes are not given to new
    /// objects again (`SQLiteDatabase.recordLargestIDs`): a store the runtime keeps passes every
    /// entity's table; a database without the runtime, none.
    public let largestIDsRecorded: [(name: String, quoted: String)]

    public init(database: SQLiteDatabase, recordingLargestIDsOf tables: [(name: String, quoted: String)] = []) {
        self.database = database
        largestIDsRecorded = tables
    }

    /// Deletes the seed's objects and everything the program reaches from them, or deletes
    /// nothing and throws `DeletionRefused` naming every blocker.
    ///
    /// In a transaction of its own, the program runs with foreign-key enforcement off: the plan
    /// already orders, detaches, nullifies and refuses so that no reference can dangle (the
    /// differential tests check `PRAGMA foreign_key_check` after thousands of random deletes), the
    /// write lock is held from the first statement, and SQLite's checks would cost a probe per row
    /// and memory per deleted row (the rowids of a checked multi-row `DELETE` are kept until it
    /// ends). Inside a caller's transaction, where the setting cannot change, the checks stay on.
    public func run(_ program: DeletionProgram, seed: DeletionSeed, dryRun: Bool = false) throws -> DeletionReport {
        let body = { () throws -> DeletionReport in
            // Every object of the root goes: when nothing hangs loose, empty the tables directly.
            if case .all = seed, let wholeTable = program.wholeTable, let report = try emptyTables(wholeTable, dryRun: dryRun) {
                return report
            }
            return try perform(program, seed: seed, dryRun: dryRun)
        }
        if database.isInTransaction { return try transaction(dryRun: dryRun, body) }
        return try database.withoutForeignKeyEnforcement { try transaction(dryRun: dryRun, body) }
    }

    /// Runs `body` in one transaction (a savepoint inside a caller's transaction), committed unless
    /// `body` throws or this is a dry run.
    private func transaction<T>(dryRun: Bool, _ body: () throws -> T) throws -> T {
        // Outside a transaction, take the write lock at once and end with a real COMMIT or
        // ROLLBACK (a rolled-back dry run then leaves the file byte for byte as it was).
        let ownsTransaction = !database.isInTransaction
        let (begin, commit, rollback) = ownsTransaction
            ? ("BEGIN IMMEDIATE", "COMMIT", "ROLLBACK")
            : ("SAVEPOINT modelgen_delete", "RELEASE modelgen_delete", "ROLLBACK TO modelgen_delete; RELEASE modelgen_delete")
        try database.execute(begin)
        do {
            if !dryRun { try database.recordLargestIDs(ofTables: largestIDsRecorded) }
            let result = try body()
            try database.execute(dryRun ? rollback : commit)
            return result
        } catch {
            try? database.execute(rollback)
            throw error
        }
    }

    /// Empties the closure's tables, children first, when no row hangs from a NULL parent key (so
    /// every row goes); nil, having changed nothing, when some row does.
    private func emptyTables(_ wholeTable: DeletionProgram.WholeTableDeletion, dryRun: Bool) throws -> DeletionReport? {
        var report = DeletionReport(isDryRun: dryRun)
        report.statementsExecuted = wholeTable.orphanCounts.count + wholeTable.deletions.count
        guard try wholeTable.orphanCounts.allSatisfy({ try database.scalar($0) == 0 }) else { return nil }
        for deletion in wholeTable.deletions {
            let count = try database.run(deletion.sql)
            if count > 0 { report.deletedCounts.append(.init(name: deletion.entity, count: count)) }
        }
        return report
    }

    private func perform(_ program: DeletionProgram, seed: DeletionSeed, dryRun: Bool) throws -> DeletionReport {
        var report = DeletionReport(isDryRun: dryRun)
        var statements = 0
        func run(_ sql: String, _ bindings: [SQLiteValue] = []) throws -> Int {
            statements += 1
            return try database.run(sql, bindings)
        }
        for target in program.targets {
            try database.execute("""
                CREATE TEMP TABLE IF NOT EXISTS \(target.closureTable) (id INTEGER PRIMARY KEY, parent_id INTEGER, edge INTEGER, round INTEGER NOT NULL DEFAULT 0); \
                CREATE INDEX IF NOT EXISTS \(DeletionProgram.roundIndex(of: target.closureTable)) ON \(DeletionProgram.unqualified(target.closureTable)) (round); \
                DELETE FROM \(target.closureTable)
                """)
            statements += 3
        }
        let root = program.root
        switch seed {
        case let .ids(ids):
            let list = "[" + ids.map(String.init).joined(separator: ",") + "]"
            report.missingIDs = try database.query("SELECT DISTINCT value FROM json_each(?) WHERE value NOT IN (SELECT id FROM \(root.table)) ORDER BY value", [.text(list)]).compactMap { $0[0].integer }
            _ = try run("INSERT OR IGNORE INTO \(root.closureTable) (id) SELECT value FROM json_each(?) WHERE value IN (SELECT id FROM \(root.table))", [.text(list)])
            statements += 1
        case .all:
            _ = try run("INSERT INTO \(root.closureTable) (id) SELECT id FROM \(root.table)")
        case let .matching(condition, bindings):
            _ = try run("INSERT INTO \(root.closureTable) (id) SELECT id FROM \(root.table) WHERE \(condition)", bindings)
        }

        var round: Int64 = 0
        for collection in program.collections {
            switch collection {
            case let .once(sql):
                _ = try run(sql)
            case let .untilStable(sqls):
                // Semi-naive: each round follows only what the rounds since the previous one added.
                var added = 1, previous: Int64 = 0
                while added > 0 {
                    round += 1
                    added = 0
                    for sql in sqls { added += try run(sql, [.integer(previous), .integer(round)]) }
                    previous = round
                }
            }
        }

        var blockers: [DeletionBlocker] = []
        for check in program.checks {
            statements += 1
            // Each blocked object once, in id order, with the surviving objects in id order (as
            // the PostgreSQL functions list them).
            var bySubject: [Int64: [Int64]] = [:]
            for row in try database.query(check.sql) {
                guard let subject = row[0].integer, let other = row[1].integer else { continue }
                bySubject[subject, default: []].append(other)
            }
            for (subject, others) in bySubject.sorted(by: { $0.key < $1.key }).map({ ($0.key, $0.value.sorted()) }) {
                blockers.append(DeletionBlocker(kind: check.kind, entity: check.subject, id: subject,
                                                path: try path(to: check.subject, id: subject, in: program),
                                                relationship: check.relationship, rule: check.rule,
                                                otherEntity: check.other, otherIDs: others))
            }
        }
        if !blockers.isEmpty { throw DeletionRefused(blockers: blockers) }

        for nullification in program.nullifications {
            report.nullifiedCounts.append(.init(name: nullification.relationship, count: try run(nullification.sql)))
        }
        // Detachments break key cycles inside the deleted set so that no single DELETE leaves a
        // reference dangling while enforcement watches; with enforcement off (a transaction of the
        // executor's own) every row they touch is deleted a moment later, so they are skipped.
        // A detached one-to-one key points at no row until its row goes: the keys are checked at
        // the commit (as a save checks them anyway).
        if try database.scalar("PRAGMA foreign_keys") == 1, !program.detachments.isEmpty {
            try database.execute("PRAGMA defer_foreign_keys = ON")
            for sql in program.detachments { _ = try run(sql) }
        }
        for sql in program.joinRowRemovals { report.joinRowsRemoved += try run(sql) }
        for deletion in program.deletions {
            let count = try run(deletion.sql)
            if count > 0 { report.deletedCounts.append(.init(name: deletion.entity, count: count)) }
        }
        // The temporary tables are emptied, so that their pages do not outlive the delete.
        for target in program.targets { _ = try run("DELETE FROM \(target.closureTable)") }
        report.statementsExecuted = statements
        return report
    }

    /// `Author#1 → books (cascade) → Book#7`: how the delete reached an object.
    private func path(to entity: String, id: Int64, in program: DeletionProgram) throws -> String {
        var parts = ["\(entity)#\(id)"]
        var current = (entity: entity, id: id)
        for _ in 0..<64 {
            guard let target = program.targets.first(where: { $0.entity == current.entity }),
                  let row = try database.query("SELECT parent_id, edge FROM \(target.closureTable) WHERE id = ?", [.integer(current.id)]).first,
                  let parent = row[0].integer, let edgeIndex = row[1].integer, Int(edgeIndex) < program.edges.count else { break }
            let edge = program.edges[Int(edgeIndex)]
            parts.insert("\(edge.source)#\(parent) → \(edge.relationship) (cascade)", at: 0)
            current = (edge.source, parent)
        }
        return parts.joined(separator: " → ")
    }
}
