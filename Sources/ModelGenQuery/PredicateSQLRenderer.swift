/// Writes a `QueryCondition` as an SQL condition on one table, in either dialect, with its
/// parameters bound by number (`?1` in SQLite, `$1` in PostgreSQL).
///
///     $0.manager?.manager?.name == "ceo"
///     (SELECT modelgen_p2."name" FROM "employee" AS modelgen_p1
///        JOIN "employee" AS modelgen_p2 ON modelgen_p2."id" = modelgen_p1."manager_id"
///        WHERE modelgen_p1."id" = "employee"."manager_id") IS ?1
///
/// Every identifier is double-quoted (the DDL creates unquoted names in lowercase, so the quoted
/// form names the same table); the root table is referred to by its name, each hop by an alias of
/// its own, so self-references resolve to the right row. A path is a scalar subquery, NULL when
/// a relationship on the way is nil, which gives Swift's optional chaining. A test on the objects
/// of a to-many relationship is an `EXISTS` over their rows, each under an alias of its own:
///
///     $0.projects.contains { $0.code == "p1" }
///     EXISTS (SELECT 1 FROM "employee_projects" AS modelgen_p1
///        JOIN "project" AS modelgen_p2 ON modelgen_p2."id" = modelgen_p1."project_id"
///        WHERE modelgen_p1."employee_id" = "employee"."id" AND (modelgen_p2."code" IS ?1))
///
/// Rendering recurses
/// over nesting, whose depth the producers bound (`#Predicate` by the compiler, `--where` by its parser).
public struct PredicateSQLRenderer {
    public let dialect: SQLDialect
    /// The root table (raw name).
    public let table: String
    /// The parameters, in the order of their numbers.
    public private(set) var bindings: [SQLValue] = []
    /// The kind of each parameter (a PostgreSQL parameter is written with the cast to its type,
    /// `$1::timestamptz`, and bound as that type's text).
    public private(set) var bindingKinds: [QueryValueKind] = []
    private var aliasCount = 0
    /// How each row a path may start from is referred to: the root table, then the alias of each
    /// enclosing `EXISTS`'s object (`QueryPath.row` indexes it).
    private var rows: [String]

    /// Parameters are numbered from `firstParameter`, for statements that bind values before the condition.
    public init(dialect: SQLDialect, table: String, firstParameter: Int = 1) {
        self.dialect = dialect
        self.table = table
        rows = [SQLDialect.quoted(table)]
        parameterOffset = firstParameter - 1
    }

    private let parameterOffset: Int

    /// The SQL condition (true for a row that matches); append `bindings` to the statement's parameters.
    public mutating func condition(_ condition: QueryCondition) -> String {
        switch condition {
        case let .comparison(lhs, comparison, rhs):
            return compare(lhs, comparison, rhs)
        case let .and(terms):
            return terms.isEmpty ? constant(true) : "(" + SQLConnective.and.join(terms.map { self.condition($0) }) + ")"
        case let .or(terms):
            return terms.isEmpty ? constant(false) : "(" + SQLConnective.or.join(terms.map { self.condition($0) }) + ")"
        case let .not(inner):
            // Two-valued, as in Swift: a comparison with NULL is false, so its negation is true.
            return "(\(self.condition(inner)) IS NOT \(constant(true)))"
        case let .isTrue(value):
            return "(\(expression(value)) = \(constant(true)))"
        case let .text(test, text, part):
            return textTest(test, text, part)
        case let .constant(flag):
            return "(\(constant(flag)) = \(constant(true)))"
        case let .exists(toMany, inner):
            return exists(toMany, inner)
        case let .oneOf(value, values, kind):
            return oneOf(value, values, kind)
        }
    }

    /// An `ORDER BY` term: nil sorts before every value going forward (as Swift's optional order), in both dialects.
    public mutating func ordering(_ path: QueryPath, ascending: Bool) -> String {
        var term = expression(.path(path))
        term += collation(comparing: path.kind)
        term += ascending ? " ASC" : " DESC"
        if dialect == .postgresql { term += ascending ? " NULLS FIRST" : " NULLS LAST" }
        return term
    }

    /// The PostgreSQL type a parameter of `kind` is cast to.
    public static func postgreSQLType(of kind: QueryValueKind) -> String {
        switch kind {
        case .integer: "bigint"
        case .real: "double precision"
        case .text: "text"
        case .bool: "boolean"
        case .blob: "bytea"
        case .date: "timestamptz"
        case .decimal: "numeric"
        case .uuid: "uuid"
        }
    }

    /// The SQLite collation that compares `Decimal` digits by value; the runtime registers it on every connection.
    public static let decimalCollation = "modelgen_decimal"

    /// The collation an ordering of values of `kind` needs, to order as Swift does: `Decimal` digits
    /// by value in SQLite; text by code point in PostgreSQL, whose databases mostly order text by a
    /// linguistic collation ("a" < "B" there, not in Swift), where `"C"` compares UTF-8 bytes, which
    /// is code point order (SQLite's `BINARY` does the same). Equality needs none: a deterministic
    /// collation finds two texts equal only when their bytes are.
    private func collation(comparing kinds: QueryValueKind?...) -> String {
        if dialect == .sqlite && kinds.contains(.decimal) { return " COLLATE \(Self.decimalCollation)" }
        if dialect == .postgresql && kinds.contains(.text) { return " COLLATE \"C\"" }
        return ""
    }

    // MARK: - Pieces

    private mutating func compare(_ lhs: QueryExpression, _ comparison: QueryComparison, _ rhs: QueryExpression) -> String {
        let left = expression(lhs), right = expression(rhs)
        let orders = comparison != .equal && comparison != .notEqual
        let collation = orders || dialect == .sqlite ? self.collation(comparing: kind(of: lhs), kind(of: rhs)) : ""
        // Equal to a value that is not nil: `=`, which an index serves (`IS NOT DISTINCT FROM`
        // is the same then, since NULL reads as false everywhere here: negation is `IS NOT TRUE`).
        let equalsValue = [lhs, rhs].contains { if case let .value(value, _) = $0 { value != .null } else { false } }
        let symbol: String = switch (comparison, dialect) {
        case (.equal, .sqlite): "IS"
        case (.notEqual, .sqlite): "IS NOT"
        case (.equal, .postgresql): equalsValue ? "=" : "IS NOT DISTINCT FROM"
        case (.notEqual, .postgresql): "IS DISTINCT FROM"
        case (.less, _): "<"
        case (.lessOrEqual, _): "<="
        case (.greater, _): ">"
        case (.greaterOrEqual, _): ">="
        }
        return "(\(left) \(symbol) \(right)\(collation))"
    }

    private mutating func textTest(_ test: QueryTextTest, _ text: QueryExpression, _ part: QueryExpression) -> String {
        let whole = expression(text), piece = expression(part)
        switch dialect {
        case .sqlite:
            // As bytes: UTF-8 prefixes are scalar prefixes, and NUL characters count (length() of text stops at one).
            let a = "CAST(\(whole) AS BLOB)", b = "CAST(\(piece) AS BLOB)"
            switch test {
            // (substr() of an empty blob is NULL, so the empty part is a case of its own.)
            case .contains: return "(instr(\(a), \(b)) > 0)"
            case .hasPrefix: return "(instr(\(a), \(b)) = 1)"
            case .hasSuffix:
                return "((length(\(b)) = 0 AND \(a) IS NOT NULL) OR (length(\(b)) <= length(\(a)) AND substr(\(a), length(\(a)) - length(\(b)) + 1) = \(b)))"
            }
        case .postgresql:
            switch test {
            case .contains: return "(strpos(\(whole), \(piece)) > 0)"
            case .hasPrefix: return "starts_with(\(whole), \(piece))"
            case .hasSuffix: return "(right(\(whole), length(\(piece))) = \(piece))"
            }
        }
    }

    private mutating func expression(_ expression: QueryExpression) -> String {
        switch expression {
        case let .path(path):
            return self.path(path)
        case let .value(value, kind):
            if value == .null { return "NULL" }
            bindings.append(value)
            bindingKinds.append(kind)
            return dialect == .sqlite ? "?\(parameterOffset + bindings.count)" : "$\(parameterOffset + bindings.count)::\(Self.postgreSQLType(of: kind))"
        case let .coalesce(lhs, rhs):
            return "coalesce(\(self.expression(lhs)), \(self.expression(rhs)))"
        case let .remainder(value, divisor):
            return "(\(self.expression(value)) % \(divisor))"
        case let .count(toMany):
            let alias = newAlias()
            let owner = path(toMany.owner)
            // An object reached through a to-one relationship may be missing: its count is nil then.
            let count = toMany.ownerMayBeMissing ? "CASE WHEN \(owner) IS NULL THEN NULL ELSE count(*) END" : "count(*)"
            return "(SELECT \(count) FROM \(quote(toMany.table)) AS \(alias) WHERE \(alias).\(quote(toMany.column)) = \(owner))"
        }
    }

    /// The most values a list is written with one parameter each; a longer list of integers, texts
    /// or UUIDs is bound as one parameter (`value IN (SELECT value FROM json_each(?1))` in SQLite,
    /// `value = ANY(CAST($1::text AS bigint[]))` in PostgreSQL), so its length is not bounded by the
    /// parameters a statement may have.
    public static let longestListOfParameters = 100

    /// Whether a list of values of `kind` of any length can be bound as one parameter.
    public static func bindsLongListsAsOneParameter(_ kind: QueryValueKind) -> Bool {
        kind == .integer || kind == .text || kind == .uuid
    }

    /// `value IN (?1, ?2, …)`, with `OR value IS NULL` when nil is one of them (`IN` never finds NULL).
    private mutating func oneOf(_ value: QueryExpression, _ values: [SQLValue], _ kind: QueryValueKind) -> String {
        let present = values.filter { $0 != .null }
        let subject = expression(value)
        var terms: [String] = []
        if present.count > Self.longestListOfParameters, Self.bindsLongListsAsOneParameter(kind), let list = arrayLiteral(present) {
            let parameter = expression(.value(.text(list), .text))
            terms.append(dialect == .sqlite ? "(\(subject) IN (SELECT value FROM json_each(\(parameter))))"
                                            : "(\(subject) = ANY(CAST(\(parameter) AS \(Self.postgreSQLType(of: kind))[])))")
        } else if !present.isEmpty {
            let list = present.map { expression(.value($0, kind)) }.joined(separator: ", ")
            // Equality needs a collation only for SQLite's Decimal digits (see `collation(comparing:)`).
            let collation = dialect == .sqlite ? self.collation(comparing: kind) : ""
            terms.append("(\(subject)\(collation) IN (\(list)))")
        }
        if present.count < values.count { terms.append("(\(subject) IS NULL)") }
        return terms.isEmpty ? condition(.constant(false)) : "(" + terms.joined(separator: " OR ") + ")"
    }

    /// The values as one literal: a JSON array for SQLite's `json_each`, an array's text for
    /// PostgreSQL; nil when one is neither an integer nor a text, or is a text holding NUL.
    private func arrayLiteral(_ values: [SQLValue]) -> String? {
        var elements: [String] = []
        for value in values {
            switch value {
            case let .integer(number): elements.append(String(number))
            case let .text(text) where !text.unicodeScalars.contains("\0"):
                // A JSON string, and PostgreSQL's quoted array element, escape the same two characters;
                // JSON also the other control characters.
                var quoted = "\""
                for scalar in text.unicodeScalars {
                    switch scalar {
                    case "\"", "\\": quoted += "\\" + String(scalar)
                    case _ where dialect == .sqlite && scalar.value < 0x20:
                        let hex = String(scalar.value, radix: 16)
                        quoted += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                    default: quoted.unicodeScalars.append(scalar)
                    }
                }
                elements.append(quoted + "\"")
            default: return nil
            }
        }
        let list = elements.joined(separator: ",")
        return dialect == .sqlite ? "[" + list + "]" : "{" + list + "}"
    }

    /// `EXISTS` over the rows of the related objects, with `inner` deciding on each (as its row `rows.count`).
    private mutating func exists(_ toMany: QueryToMany, _ inner: QueryCondition) -> String {
        let holder = newAlias()
        var sql = "EXISTS (SELECT 1 FROM \(quote(toMany.table)) AS \(holder)"
        var object = holder
        if let joined = toMany.joined {
            object = newAlias()
            sql += " JOIN \(quote(joined.table)) AS \(object) ON \(object).\(quote("id")) = \(holder).\(quote(joined.foreignKey))"
        }
        sql += " WHERE \(holder).\(quote(toMany.column)) = \(path(toMany.owner)) AND "
        rows.append(object)
        sql += condition(inner) + ")"
        rows.removeLast()
        return sql
    }

    private mutating func path(_ path: QueryPath) -> String {
        guard let first = path.hops.first else { return rows[path.row] + "." + quote(path.column) }
        var aliases: [String] = []
        for _ in path.hops { aliases.append(newAlias()) }
        var sql = "(SELECT \(aliases.last!).\(quote(path.column)) FROM \(quote(first.table)) AS \(aliases[0])"
        for index in path.hops.indices.dropFirst() {
            sql += " JOIN \(quote(path.hops[index].table)) AS \(aliases[index]) ON \(aliases[index]).\(quote("id")) = \(aliases[index - 1]).\(quote(path.hops[index].foreignKey))"
        }
        sql += " WHERE \(aliases[0]).\(quote("id")) = \(rows[path.row]).\(quote(first.foreignKey)))"
        return sql
    }

    /// A table alias no other part of the statement uses.
    private mutating func newAlias() -> String {
        aliasCount += 1
        return "modelgen_p\(aliasCount)"
    }

    private func kind(of expression: QueryExpression) -> QueryValueKind? {
        switch expression {
        case let .path(path): return path.kind
        case let .value(_, kind): return kind
        case let .coalesce(lhs, rhs): return kind(of: lhs) ?? kind(of: rhs)
        case .remainder, .count: return .integer
        }
    }

    private func constant(_ flag: Bool) -> String {
        dialect == .sqlite ? (flag ? "1" : "0") : (flag ? "TRUE" : "FALSE")
    }

    private func quote(_ identifier: String) -> String { SQLDialect.quoted(identifier) }
}
