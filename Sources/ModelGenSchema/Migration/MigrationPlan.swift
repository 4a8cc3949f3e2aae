/// How to bring an SQLite database from one version of a schema to another: typed operations for
/// people (`modelgen migrate --dry-run`, errors), the checks that must find no rows before the
/// migration may change anything, and the statements that change it. `MigrationPlanner` makes
/// it; the runtime's `SQLiteMigrator` runs it in one transaction.
public struct MigrationPlan: Equatable, Sendable {
    /// What a change can do to existing data.
    public enum Safety: String, Sendable {
        /// Never loses or rejects data.
        case safe
        /// Refused when the data breaks it (NULLs for a new NOT NULL, duplicates for a new UNIQUE…).
        case dataDependent
        /// Loses the data it removes (allowed only with data loss allowed).
        case destructive
    }

    /// One change, as a person reads it.
    public struct Operation: Equatable, Sendable {
        /// `addEntity`, `dropEntity`, `renameEntity`, `addAttribute`, `dropAttribute`, `renameAttribute`,
        /// `changeAttribute`, `addRelationship`, `dropRelationship`, `renameRelationship`,
        /// `changeRelationship`, `moveRelationship` (its links change storage), `renameTable`, `addColumn`,
        /// `rebuildTable`, `createTable`, `dropTable`.
        public var kind: String
        public var entity: String
        /// The attribute or relationship, for changes to one.
        public var element: String?
        public var detail: String
        public var safety: Safety

        public init(kind: String, entity: String, element: String? = nil, detail: String, safety: Safety) {
            self.kind = kind
            self.entity = entity
            self.element = element
            self.detail = detail
            self.safety = safety
        }
    }

    /// A query counting rows that would be lost or that make a step impossible.
    public struct Check: Equatable, Sendable {
        public enum Kind: String, Sendable {
            /// The rows make the migration impossible: it is refused.
            case refusal
            /// The rows' values would be lost: refused unless data loss is allowed.
            case dataLoss
        }

        public var kind: Kind
        public var entity: String
        public var element: String?
        /// What the counted rows are, for the report: "rows with a NULL in 'title', which becomes required".
        public var message: String
        /// `SELECT count(*) …` on the database before the migration.
        public var countSQL: String
        /// A query giving, as one text, the first of the counted rows' values that are to blame
        /// (`code = 'a' in 2 objects`, `'007'`), for the report to name; nil where the message says it all.
        public var exampleSQL: String?

        public init(kind: Kind, entity: String, element: String? = nil, message: String, countSQL: String, exampleSQL: String? = nil) {
            self.kind = kind
            self.entity = entity
            self.element = element
            self.message = message
            self.countSQL = countSQL
            self.exampleSQL = exampleSQL
        }
    }

    /// The canonical hashes of the two versions.
    public var from: String
    public var to: String
    public var operations: [Operation] = []
    public var checks: [Check] = []
    /// The statements, in order, run with foreign-key enforcement off in one transaction.
    public var statements: [String] = []
    /// Rebuild copies that may run as `INSERT INTO new SELECT * FROM old`, by the position of
    /// the statement they replace: every column copied as it is, in order, which SQLite copies
    /// without decoding rows (its transfer optimization).
    public var wholeRowCopies: [Int: WholeRowCopy] = [:]

    /// A copy of whole rows, valid only while `table`'s columns are, in the file, in the order of
    /// `columns` (`ALTER TABLE … ADD COLUMN` appends, so a store's order can differ from the schema's).
    public struct WholeRowCopy: Equatable, Sendable {
        public var table: String
        public var columns: [String]
        /// The rebuild's new table, renamed to `table` after the old one is dropped.
        public var temporaryTable: String
        public var sql: String
    }

    /// Tables created, rebuilt or renamed: their foreign keys are checked before the commit.
    public var checkedTables: [String] = []
    /// The tables the migration renames (an entity renamed with `originalName` or given another
    /// `table`, a join table renamed with it): old name → new name. What the runtime keeps by
    /// table name (`modelgen_largest_ids`) follows them.
    public var renamedTables: [String: String] = [:]
    /// Tables whose rows must number the same after the migration (they refer to rebuilt tables).
    public var countedTables: [CountedTable] = []

    /// A table counted before the migration under its name then (`before`), and after it under
    /// its new one (they differ when the migration renames it; two tables may exchange names).
    public struct CountedTable: Equatable, Sendable {
        public var before: String
        public var after: String
    }
    /// Every index of the new schema; the migrator drops any other index and creates the missing ones.
    public var indexes: [DDLGenerator.IndexDefinition] = []
    /// Likely mistakes that do not stop the migration: an element removed and another of the same
    /// type added without `originalName` ("did you mean `originalName: old`?").
    public var warnings: [Warning] = []

    /// A likely mistake, about an element of the new schema (an entity, or one of its members).
    public struct Warning: Equatable, Sendable, CustomStringConvertible {
        public var entity: String
        /// The attribute or relationship; nil for the entity itself.
        public var element: String?
        public var message: String

        public init(entity: String, element: String? = nil, message: String) {
            self.entity = entity
            self.element = element
            self.message = message
        }

        public var description: String { message }
    }

    public init(from: String, to: String) {
        self.from = from
        self.to = to
    }

    /// True when there is nothing to do: the two versions are the same schema, and no table is
    /// rebuilt (as the tables of a store with `REAL` floating-point columns are).
    public var isEmpty: Bool { from == to && statements.isEmpty }
}
