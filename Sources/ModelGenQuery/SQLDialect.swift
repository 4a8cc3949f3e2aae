/// The two SQL dialects ModelGen writes.
public enum SQLDialect: String, CaseIterable, Sendable {
    case sqlite
    case postgresql

    /// Keywords of SQLite and PostgreSQL (reserved or not) that are quoted when used as names.
    public static let keywords: Set<String> = [
        "abort", "action", "add", "after", "all", "alter", "always", "analyse", "analyze", "and", "any", "array", "as", "asc",
        "asymmetric", "attach", "authorization", "autoincrement", "before", "begin", "between", "binary", "both", "by",
        "cascade", "case", "cast", "check", "collate", "collation", "column", "commit", "conflict", "concurrently",
        "constraint", "create", "cross", "current", "current_catalog", "current_date", "current_role", "current_schema",
        "current_time", "current_timestamp", "current_user", "database", "default", "deferrable", "deferred", "delete",
        "desc", "detach", "distinct", "do", "drop", "each", "else", "end", "escape", "except", "exclude", "exclusive",
        "exists", "explain", "fail", "false", "fetch", "filter", "first", "following", "for", "foreign", "freeze", "from",
        "full", "generated", "glob", "grant", "group", "groups", "having", "if", "ignore", "ilike", "immediate", "in",
        "index", "indexed", "initially", "inner", "insert", "instead", "intersect", "into", "is", "isnull", "join", "key",
        "last", "lateral", "leading", "left", "like", "limit", "localtime", "localtimestamp", "match", "materialized",
        "natural", "no", "not", "nothing", "notnull", "null", "nulls", "of", "offset", "on", "only", "or", "order",
        "others", "outer", "over", "overlaps", "partition", "placing", "plan", "pragma", "preceding", "primary", "query",
        "raise", "range", "recursive", "references", "regexp", "reindex", "release", "rename", "replace", "restrict",
        "returning", "right", "rollback", "row", "rows", "savepoint", "select", "session_user", "set", "similar", "some",
        "symmetric", "system_user", "table", "tablesample", "temp", "temporary", "then", "ties", "to", "trailing",
        "transaction", "trigger", "true", "unbounded", "union", "unique", "update", "user", "using", "vacuum", "values",
        "variadic", "verbose", "view", "virtual", "when", "where", "window", "with", "without",
    ]

    /// The identifier as written in SQL: plain when it is a lowercase name and not a keyword,
    /// double-quoted otherwise.
    public func quote(_ identifier: String) -> String {
        let isPlain = identifier.utf8.first.map { ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || $0 == UInt8(ascii: "_") } ?? false
            && identifier.utf8.allSatisfy { ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "_") }
        if isPlain && !Self.keywords.contains(identifier) { return identifier }
        return Self.quoted(identifier)
    }

    /// The identifier double-quoted, whatever it is (a `"` in it doubled).
    public static func quoted(_ identifier: String) -> String {
        guard identifier.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + identifier + "\"" }
        return "\"" + identifier.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }

    /// A string literal.
    public func literal(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "'")) else { return "'" + text + "'" }
        return "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''") + "'"
    }

    /// The raw name of an identifier written by `quote` (either dialect): quotes removed, doubled quotes undone.
    public static func unquoted(_ identifier: String) -> String {
        guard identifier.utf8.count >= 2, identifier.utf8.first == UInt8(ascii: "\""), identifier.utf8.last == UInt8(ascii: "\"") else { return identifier }
        return identifier.dropFirst().dropLast().split(separator: "\"\"", omittingEmptySubsequences: false).joined(separator: "\"")
    }
}
