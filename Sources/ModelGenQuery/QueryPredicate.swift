/// A predicate over the rows of one entity's table, in a form both SQL dialects render: the one
/// intermediate language of `#Predicate` (lowered by the runtime) and of `modelgen delete --where`
/// (parsed by the generator). Names are raw (unquoted); `PredicateSQLRenderer` quotes them.
///
/// Semantics are Swift's: `==` and `!=` treat nil as a value (`nil == nil`, `nil != 5`); a value
/// reached through a nil relationship is nil (optional chaining); an ordering comparison or a text
/// test on nil is false, and its negation true.
public indirect enum QueryCondition: Equatable, Sendable {
    case comparison(QueryExpression, QueryComparison, QueryExpression)
    case and([QueryCondition])
    case or([QueryCondition])
    case not(QueryCondition)
    /// A `Bool` value is true.
    case isTrue(QueryExpression)
    /// `text.contains(part)`, `text.hasPrefix(part)`, `text.hasSuffix(part)`, by Unicode scalars.
    case text(QueryTextTest, QueryExpression, QueryExpression)
    case constant(Bool)
    /// The value equals one of `values` (Swift's `[a, b].contains(value)`), nil one of them too.
    case oneOf(QueryExpression, [SQLValue], QueryValueKind)
    /// Some object of a to-many relationship matches the condition (`$0.animals.contains { $0.legs > 2 }`),
    /// whose paths read that object's row at `QueryPath.row` one deeper than the relationship's.
    case exists(QueryToMany, QueryCondition)
}

public enum QueryComparison: Equatable, Sendable {
    case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual
}

public enum QueryTextTest: Equatable, Sendable {
    case contains, hasPrefix, hasSuffix
}

/// A value in a predicate.
public indirect enum QueryExpression: Equatable, Sendable {
    /// A stored column of the root row, or of a row reached through to-one relationships.
    case path(QueryPath)
    /// A literal, bound as a parameter (`.null` is written `NULL`).
    case value(SQLValue, QueryValueKind)
    /// `lhs ?? rhs`.
    case coalesce(QueryExpression, QueryExpression)
    /// `value % divisor` on integers.
    case remainder(QueryExpression, Int64)
    /// How many objects a to-many relationship holds (`$0.animals.count`).
    case count(QueryToMany)
}

/// A to-many relationship of a row, as the rows that hold that row's id: the rows of `table` whose
/// `column` is it (the target's key of the inverse, or this side's column of a join table).
public struct QueryToMany: Equatable, Sendable {
    public var table: String
    public var column: String
    /// For a join table, its column of the related object's id and the related objects' table;
    /// nil when the rows of `table` are the related objects themselves.
    public var joined: QueryHop?
    /// The id of the object whose relationship it is: the `id` of a row (`QueryPath.id(ofRow:)`),
    /// or the key a to-one relationship that reaches the object holds (`$0.manager?.reports`: the
    /// row's `manager_id`), NULL where there is no such object.
    public var owner: QueryPath

    public init(table: String, column: String, joined: QueryHop? = nil, owner: QueryPath = .id(ofRow: 0)) {
        self.table = table
        self.column = column
        self.joined = joined
        self.owner = owner
    }

    /// Whether the owner may be missing: it is reached through a to-one relationship (its key may
    /// be NULL), not a row itself.
    public var ownerMayBeMissing: Bool { owner != .id(ofRow: owner.row) }
}

/// How values of a column compare, which decides how each dialect writes a comparison.
public enum QueryValueKind: Equatable, Sendable {
    case integer, real, text, bool, blob
    /// Seconds since 2001 in SQLite, a timestamp in PostgreSQL.
    case date
    /// Exact digits as text in SQLite (compared through the `modelgen_decimal` collation), `NUMERIC` in PostgreSQL.
    case decimal
    case uuid
}

/// `root.fk₁.fk₂….column`: the column of the row reached by following each hop's foreign key.
public struct QueryPath: Equatable, Sendable {
    public var hops: [QueryHop]
    /// The column read at the end of the path (`id` for the key itself).
    public var column: String
    public var kind: QueryValueKind
    /// The row the path starts from: 0 for the root row, n for the object of the n-th nested
    /// `exists` around the path (`$0.animals.contains { $0.legs > 2 }` reads `legs` of row 1).
    public var row: Int

    public init(hops: [QueryHop] = [], column: String, kind: QueryValueKind, row: Int = 0) {
        self.hops = hops
        self.column = column
        self.kind = kind
        self.row = row
    }

    /// The `id` of row `row`.
    public static func id(ofRow row: Int) -> QueryPath {
        QueryPath(column: "id", kind: .integer, row: row)
    }

    /// The id of the object reached from row `row` through `hops`: the row's own id, or the key the
    /// last hop follows (read through the hops before it).
    public static func id(ofObjectReachedThrough hops: [QueryHop], fromRow row: Int) -> QueryPath {
        hops.last.map { QueryPath(hops: Array(hops.dropLast()), column: $0.foreignKey, kind: .integer, row: row) } ?? .id(ofRow: row)
    }
}

/// One to-one relationship followed: the foreign-key column on the current row and the table it refers to.
public struct QueryHop: Equatable, Sendable {
    public var foreignKey: String
    public var table: String

    public init(foreignKey: String, table: String) {
        self.foreignKey = foreignKey
        self.table = table
    }
}
