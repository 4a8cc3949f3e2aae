/// The executable form of a deletion plan: the SQL statements the runtime runs, in order, with
/// what it needs to report counts and explain refusals. The generator writes it (into the CLI,
/// and as Swift source into `<Base>+Deletion.swift`); `DeletionExecutor` in ModelGenRuntime runs it.
///
/// Every statement is set-based: its cost depends on the rows it touches, and the number of
/// statements depends on the schema, not on the data (a cycle of cascades repeats its statements
/// until nothing is added, once per level of the data's depth).
public struct DeletionProgram: Equatable, Sendable {
    /// An entity whose ids this delete collects, with its table and the temporary table
    /// that holds the ids to delete (`id`, and for explanations `parent_id` and `edge`).
    public struct Target: Equatable, Sendable {
        public var entity: String
        /// The entity's table, quoted as needed.
        public var table: String
        /// The temporary closure table, quoted as needed.
        public var closureTable: String

        public init(entity: String, table: String, closureTable: String) {
            self.entity = entity
            self.table = table
            self.closureTable = closureTable
        }
    }

    /// A cascade followed to collect objects: `source.relationship` → `target`.
    public struct Edge: Equatable, Sendable {
        public var source: String
        public var relationship: String
        public var target: String

        public init(source: String, relationship: String, target: String) {
            self.source = source
            self.relationship = relationship
            self.target = target
        }
    }

    /// Statements that add cascade targets to the closure tables.
    public enum Collection: Equatable, Sendable {
        /// Run once.
        case once(String)
        /// A cycle of cascades: run all, again and again, until none adds a row.
        case untilStable([String])
    }

    /// Why a check refuses the delete.
    public enum CheckKind: String, Equatable, Sendable {
        /// A `deny` relationship of a deleted object points at an object that survives.
        case deny
        /// A surviving object's required to-one would be left empty.
        case required
        /// A `noAction` rule would leave a surviving object referring to a deleted one.
        case dangling

        /// Why an object cannot be deleted: the words after `Book#1 cannot be deleted: ` in a
        /// refusal, `others` being the surviving objects of `otherEntity` involved (`Loan#3, Loan#8`),
        /// `relationship` the one at fault (`Book.loans`) and `rule` its delete rule. One text for
        /// the SQLite executor and the PostgreSQL functions.
        public func reason(relationship: String, rule: String, otherEntity: String, others: String) -> String {
            switch self {
            case .deny:
                "\(relationship) (deny) still refers to \(others), which would survive"
            case .required:
                "the required relationship \(relationship) of \(others) would be left empty (rule \(rule)); cascade the delete to \(otherEntity), make \(relationship) optional, or delete \(others) first"
            case .dangling:
                "\(others) would keep a dangling reference through \(relationship) (the rule on the other side is noAction)"
            }
        }
    }

    /// A query whose rows, `(subject id, other id)`, are reasons to refuse the whole delete.
    public struct Check: Equatable, Sendable {
        public var kind: CheckKind
        /// The entity of the object being deleted.
        public var subject: String
        /// The entity of the surviving object involved.
        public var other: String
        /// The relationship at fault, `Entity.name`.
        public var relationship: String
        /// The delete rule that applies (`deny`, `nullify`, `noAction`).
        public var rule: String
        public var sql: String

        public init(kind: CheckKind, subject: String, other: String, relationship: String, rule: String, sql: String) {
            self.kind = kind
            self.subject = subject
            self.other = other
            self.relationship = relationship
            self.rule = rule
            self.sql = sql
        }

        /// Why an object cannot be deleted, `others` being the surviving objects involved
        /// (`CheckKind.reason`).
        public func reason(others: String) -> String {
            kind.reason(relationship: relationship, rule: rule, otherEntity: other, others: others)
        }
    }

    /// An `UPDATE … SET column = NULL` over surviving rows, counted as nullified references.
    public struct Nullification: Equatable, Sendable {
        /// `Entity.relationship` whose references are removed.
        public var relationship: String
        public var sql: String

        public init(relationship: String, sql: String) {
            self.relationship = relationship
            self.sql = sql
        }
    }

    /// A `DELETE` of one entity's rows: those whose ids were collected, or those whose key points
    /// at a collected parent.
    public struct Deletion: Equatable, Sendable {
        public var entity: String
        public var sql: String

        public init(entity: String, sql: String) {
            self.entity = entity
            self.sql = sql
        }
    }

    /// The entity the delete starts from: `targets[0]`.
    public var root: Target { targets[0] }
    /// Every entity whose ids the delete collects, the root first (an entity nothing needs the ids
    /// of is deleted through its keys to collected parents, without a temporary table).
    public var targets: [Target]
    /// The cascade edges, indexed by the `edge` column of the closure tables.
    public var edges: [Edge]
    /// Collect the closure.
    public var collections: [Collection]
    /// Refuse the delete when any of these returns a row.
    public var checks: [Check]
    /// Remove survivors' references into the deleted set.
    public var nullifications: [Nullification]
    /// Break reference cycles inside the deleted set, so that deletes can go children first.
    public var detachments: [String]
    /// Remove the join rows that touch deleted objects.
    public var joinRowRemovals: [String]
    /// Delete, children before parents.
    public var deletions: [Deletion]
    /// The fast path when every object of the root goes (see `WholeTableDeletion`); nil when the
    /// schema does not allow it.
    public var wholeTable: WholeTableDeletion?

    /// Emptying the closure's tables without collecting ids: valid when every `orphanCounts`
    /// query returns 0 (no row hangs from a NULL parent key, so every row of every table goes).
    public struct WholeTableDeletion: Equatable, Sendable {
        /// `SELECT count(*) … WHERE parent_key IS NULL`, one per non-root entity.
        public var orphanCounts: [String]
        /// Unfiltered `DELETE FROM table`, children before parents.
        public var deletions: [Deletion]

        public init(orphanCounts: [String], deletions: [Deletion]) {
            self.orphanCounts = orphanCounts
            self.deletions = deletions
        }
    }

    public init(targets: [Target], edges: [Edge], collections: [Collection], checks: [Check],
                nullifications: [Nullification], detachments: [String], joinRowRemovals: [String], deletions: [Deletion],
                wholeTable: WholeTableDeletion? = nil) {
        self.targets = targets
        self.edges = edges
        self.collections = collections
        self.checks = checks
        self.nullifications = nullifications
        self.detachments = detachments
        self.joinRowRemovals = joinRowRemovals
        self.deletions = deletions
        self.wholeTable = wholeTable
    }

    /// How many statements a run executes besides seeding, checks and cycles' repetitions.
    public var statementCount: Int {
        collections.reduce(0) { count, collection in
            switch collection {
            case .once: return count + 1
            case let .untilStable(statements): return count + statements.count
            }
        } + checks.count + nullifications.count + detachments.count + joinRowRemovals.count + deletions.count
    }
}

extension DeletionProgram {
    /// The index on a closure table's `round` column, which a cycle's rounds read by: the closure
    /// table's name with `_round`, in the same temporary schema (SQLite: `temp."…_round"`; PostgreSQL
    /// names an index without its schema).
    public static func roundIndex(of closureTable: String) -> String {
        let (schema, name) = split(closureTable)
        let raw = name.hasPrefix("\"") ? String(name.dropFirst().dropLast()) : name
        let index = "\"" + raw + "_round\""
        return schema == "temp" ? "temp." + index : index
    }

    /// The closure table's name without its temporary schema.
    public static func unqualified(_ closureTable: String) -> String { split(closureTable).name }

    private static func split(_ closureTable: String) -> (schema: String, name: String) {
        for schema in ["temp", "pg_temp"] where closureTable.hasPrefix(schema + ".") {
            return (schema, String(closureTable.dropFirst(schema.count + 1)))
        }
        return ("", closureTable)
    }
}
