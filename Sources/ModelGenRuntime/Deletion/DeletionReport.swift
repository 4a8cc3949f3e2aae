import Foundation

/// What a delete did (or, for a dry run, would do).
public struct DeletionReport: Equatable, Sendable {
    /// Rows deleted per entity, in the order they were deleted; entities with none are left out.
    public var deleted: [(entity: String, count: Int)] { deletedCounts.map { ($0.name, $0.count) } }
    /// Foreign-key cells of surviving rows set to NULL.
    public var nullified: Int { nullifiedCounts.reduce(0) { $0 + $1.count } }
    /// Nullified references per relationship (`Entity.relationship`), in plan order (empty in the
    /// reports of the PostgreSQL functions, which count them in all).
    public var nullifiedByRelationship: [(relationship: String, count: Int)] { nullifiedCounts.filter { !$0.name.isEmpty }.map { ($0.name, $0.count) } }
    /// Join-table rows removed (not counted in `nullified`).
    public var joinRowsRemoved: Int
    /// Requested ids that did not exist; they were ignored.
    public var missingIDs: [Int64]
    /// True when nothing was changed.
    public var isDryRun: Bool
    /// SQL statements executed, seeding and bookkeeping included.
    public var statementsExecuted: Int

    /// A count for an entity (`deletedCounts`) or a relationship (`nullifiedCounts`).
    struct NamedCount: Equatable, Sendable {
        var name: String
        var count: Int
    }

    /// Rows deleted per entity name.
    var deletedCounts: [NamedCount] = []
    /// Cells nullified per `Entity.relationship`.
    var nullifiedCounts: [NamedCount] = []

    /// The number of rows deleted from one entity.
    public func deletedCount(of entity: String) -> Int {
        deletedCounts.first { $0.name == entity }?.count ?? 0
    }

    /// All rows deleted.
    public var totalDeleted: Int { deletedCounts.reduce(0) { $0 + $1.count } }

    /// A report of counts only (the PostgreSQL functions report the rows deleted per entity and
    /// the cells nullified in all).
    @_spi(Backend) public init(deleted: [(entity: String, count: Int)], nullified: Int, isDryRun: Bool, statementsExecuted: Int) {
        self.init(isDryRun: isDryRun, statementsExecuted: statementsExecuted)
        deletedCounts = deleted.map { NamedCount(name: $0.entity, count: $0.count) }
        if nullified > 0 { nullifiedCounts = [NamedCount(name: "", count: nullified)] }
    }

    init(joinRowsRemoved: Int = 0, missingIDs: [Int64] = [], isDryRun: Bool, statementsExecuted: Int = 0) {
        self.joinRowsRemoved = joinRowsRemoved
        self.missingIDs = missingIDs
        self.isDryRun = isDryRun
        self.statementsExecuted = statementsExecuted
    }

    /// `{"deleted": {"Entity": count, …}, "nullified": n, "dryRun": bool}`, keys in a fixed order.
    public var json: String {
        let deleted = deletedCounts.filter { $0.count > 0 }.sorted { $0.name < $1.name }
            .map { "\($0.name.jsonQuoted): \($0.count)" }.joined(separator: ", ")
        return "{\"deleted\": {\(deleted)}, \"nullified\": \(nullified), \"dryRun\": \(isDryRun)}"
    }
}

/// One reason a delete was refused.
public struct DeletionBlocker: Equatable, Sendable, CustomStringConvertible {
    public var kind: DeletionProgram.CheckKind
    /// The object that would be deleted.
    public var entity: String
    public var id: Int64
    /// How the delete reached it: `Author#1 → books (cascade) → Book#7`.
    public var path: String
    /// The relationship at fault, `Entity.name`, and the rule that applies.
    public var relationship: String
    public var rule: String
    /// The surviving objects involved.
    public var otherEntity: String
    public var otherIDs: [Int64]

    public var description: String {
        let others = otherIDs.map { "\(otherEntity)#\($0)" }.joined(separator: ", ")
        return "\(path) cannot be deleted: " + kind.reason(relationship: relationship, rule: rule, otherEntity: otherEntity, others: others)
    }
}

/// A delete refused before anything changed (SPEC §3: deny, a required reference, a dangling reference).
public struct DeletionRefused: Error, Equatable, Sendable, CustomStringConvertible {
    public var blockers: [DeletionBlocker]

    public var description: String {
        "delete refused, nothing was changed:\n" + blockers.map { "  " + $0.description }.joined(separator: "\n")
    }
}
