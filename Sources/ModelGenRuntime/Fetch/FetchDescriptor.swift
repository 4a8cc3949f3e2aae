import Foundation

/// Which objects to fetch and in what order (SwiftData's `FetchDescriptor`).
public struct FetchDescriptor<Model: PersistentModel> {
    public var predicate: Predicate<Model>?
    public var sortBy: [SortDescriptor<Model>]
    public var fetchLimit: Int?
    public var fetchOffset: Int?
    /// Relationships loaded for every fetched object at once, one query per relationship, instead
    /// of one query per object on first access (SwiftData's name).
    public var relationshipKeyPathsForPrefetching: [PartialKeyPath<Model>] = []
    /// Whether unsaved inserts, changes and deletions of the context count (SwiftData's name and
    /// default); false fetches what the store holds.
    public var includePendingChanges = true
    /// The attributes to read (SwiftData's name), accepted so that code written for SwiftData
    /// compiles and runs: every stored attribute is read anyway (a row is one read), so the other
    /// attributes of a fetched object hold their values, where SwiftData loads them on first access.
    public var propertiesToFetch: [PartialKeyPath<Model>] = []

    public init(predicate: Predicate<Model>? = nil, sortBy: [SortDescriptor<Model>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
    }

    /// The predicate lowered to a `QueryCondition` (nil without one). Lowering walks the whole
    /// expression: a fetch lowers once and hands the result to the questions below. Every fetch
    /// and count starts here, so it also refuses a negative `fetchLimit` or `fetchOffset` (SQLite
    /// reads a negative limit as none, PostgreSQL refuses it, and the unsaved objects a fetch
    /// adds could not be cut to it).
    @_spi(Backend) public func loweredPredicate() throws -> QueryCondition? {
        for (name, value) in [("fetchLimit", fetchLimit), ("fetchOffset", fetchOffset)] {
            if let value, value < 0 { throw ModelContextError.invalidDescriptor("a \(name) of \(value): it must be 0 or more (nil for none)") }
        }
        return try predicate.map { try PredicateTranslator<Model>.condition($0) }
    }

    /// Whether the predicate (lowered: `condition`) or the order reads a value through a
    /// relationship (whose object may have unsaved changes of its own).
    @_spi(Backend) public func readsRelationships(_ condition: QueryCondition?) -> Bool {
        if condition?.followsRelationships == true { return true }
        return sortBy.contains { descriptor in
            descriptor.keyPath.flatMap { PredicateTranslator<Model>.path(for: $0) }.map { !$0.hops.isEmpty } ?? false
        }
    }

    /// ` WHERE … ORDER BY … LIMIT … OFFSET …` and its bindings, for the predicate lowered to
    /// `condition`, leaving out the rows of `excluded`.
    func sqlClauses(_ condition: QueryCondition?, excluding excluded: [Int64] = []) throws -> (String, [SQLiteValue]) {
        let (sql, bindings, _) = try sqlClauses(condition, dialect: .sqlite, excluding: excluded)
        return (sql, bindings)
    }

    /// ` WHERE … ORDER BY … LIMIT … OFFSET …` in `dialect`, for the predicate lowered to
    /// `condition` (and adapted to the backend), with its bindings and their kinds, leaving out the
    /// rows of `excluded`.
    @_spi(Backend) public func sqlClauses(_ condition: QueryCondition?, dialect: SQLDialect, excluding excluded: [Int64]) throws -> (sql: String, bindings: [SQLValue], kinds: [QueryValueKind]) {
        var sql = ""
        var renderer = PredicateSQLRenderer(dialect: dialect, table: Model.entity.tableName)
        var bindings: [SQLiteValue] = [], kinds: [QueryValueKind] = []
        var conditions: [String] = []
        if let condition {
            conditions.append(renderer.condition(condition))
            bindings += renderer.bindings
            kinds += renderer.bindingKinds
        }
        if !excluded.isEmpty {
            let list = excluded.map(String.init).joined(separator: ",")
            switch dialect {
            case .sqlite:
                conditions.append("id NOT IN (SELECT value FROM json_each(?))")
                bindings.append(.text("[" + list + "]"))
                kinds.append(.text)
            case .postgresql:
                conditions.append("id <> ALL('{\(list)}'::bigint[])")
            }
        }
        if !conditions.isEmpty {
            sql += " WHERE " + conditions.map { conditions.count > 1 ? "(\($0))" : $0 }.joined(separator: " AND ")
        }
        if !sortBy.isEmpty {
            let terms = try sortBy.map { descriptor -> String in
                guard let keyPath = descriptor.keyPath, let path = PredicateTranslator<Model>.path(for: keyPath) else {
                    throw ModelContextError.invalidDescriptor("a sort descriptor that is not a key path to a stored attribute of \(Model.entity.name) or of an object a to-one relationship of it refers to (`\\.name`, `\\.category?.name`)")
                }
                return renderer.ordering(path, ascending: descriptor.order == .forward)
            }
            sql += " ORDER BY " + terms.joined(separator: ", ") + ", id"
        } else {
            sql += " ORDER BY id"
        }
        if fetchLimit != nil || fetchOffset != nil {
            sql += " LIMIT \(fetchLimit.map(String.init) ?? (dialect == .sqlite ? "-1" : "ALL")) OFFSET \(fetchOffset ?? 0)"
        }
        return (sql, bindings, kinds)
    }
}

extension QueryCondition {
    /// Whether a path of the condition follows a relationship.
    var followsRelationships: Bool {
        switch self {
        case let .comparison(lhs, _, rhs): return lhs.followsRelationships || rhs.followsRelationships
        case let .and(conditions), let .or(conditions): return conditions.contains { $0.followsRelationships }
        case let .not(condition): return condition.followsRelationships
        case let .isTrue(expression): return expression.followsRelationships
        case let .text(_, lhs, rhs): return lhs.followsRelationships || rhs.followsRelationships
        case .constant: return false
        case .exists: return true
        case let .oneOf(value, _, _): return value.followsRelationships
        }
    }
}

extension QueryExpression {
    var followsRelationships: Bool {
        switch self {
        case let .path(path): return !path.hops.isEmpty
        case .value: return false
        case let .coalesce(lhs, rhs): return lhs.followsRelationships || rhs.followsRelationships
        case let .remainder(expression, _): return expression.followsRelationships
        case .count: return true
        }
    }
}
