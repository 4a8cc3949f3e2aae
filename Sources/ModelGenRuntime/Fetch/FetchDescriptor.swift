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

    public init(predicate: Predicate<Model>? = nil, sortBy: [SortDescriptor<Model>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
    }

    /// ` WHERE … ORDER BY … LIMIT … OFFSET …` and its bindings.
    func sqlClauses() throws -> (String, [SQLiteValue]) {
        var sql = ""
        var renderer = PredicateSQLRenderer(dialect: .sqlite, table: Model.entity.tableName)
        var bindings: [SQLiteValue] = []
        if let predicate {
            sql += " WHERE " + renderer.condition(try PredicateTranslator<Model>.condition(predicate))
            bindings += renderer.bindings
        }
        if !sortBy.isEmpty {
            let terms = try sortBy.map { descriptor -> String in
                guard let keyPath = descriptor.keyPath, let path = PredicateTranslator<Model>.path(for: keyPath) else {
                    throw ModelContextError.unsupportedPredicate("a sort descriptor that is not a key path to a stored attribute of \(Model.entity.name)")
                }
                return renderer.ordering(path, ascending: descriptor.order == .forward)
            }
            sql += " ORDER BY " + terms.joined(separator: ", ") + ", id"
        } else {
            sql += " ORDER BY id"
        }
        if fetchLimit != nil || fetchOffset != nil {
            sql += " LIMIT \(fetchLimit ?? -1) OFFSET \(fetchOffset ?? 0)"
        }
        return (sql, bindings)
    }
}
