import Foundation

/// Translates a Foundation `#Predicate` over a model into an SQLite condition with bindings.
///
/// Supported: `==`, `!=`, `<`, `<=`, `>`, `>=`, `&&`, `||`, `!`, `nil` checks, `??`, `!`
/// unwrapping, `contains` and `starts(with:)`/`hasPrefix` on strings, and key paths through
/// to-one relationships (`$0.category?.name == "Mammal"`). Anything else throws
/// `ModelContextError.unsupportedPredicate` naming the construct.
enum PredicateTranslator<Model: PersistentModel> {
    static func translate(_ predicate: Predicate<Model>) throws -> (String, [SQLiteValue]) {
        var builder = PredicateSQLBuilder(variables: [predicate.variable.key: Model.self])
        let fragment = try builder.fragment(predicate.expression)
        return (fragment.asCondition, builder.bindings)
    }

    /// The column of a key path to a stored attribute (or to-one relationship) of `Model`.
    static func column(for keyPath: AnyKeyPath) -> String? {
        guard let name = Model.propertyName(for: keyPath) else { return nil }
        return PredicateSQLBuilder.column(named: name, in: Model.entity)
    }
}

/// A translated piece of a predicate.
struct SQLFragment {
    var sql: String
    var isCondition: Bool
    /// For a value reached through a to-one relationship: wraps a condition on it into a
    /// condition on the root row (`category_id IN (SELECT id FROM … WHERE …)`).
    var wrap: ((String) -> String)?
    var nullThroughWrap: String?

    var asCondition: String { isCondition ? sql : "(\(sql) = 1)" }
}

/// Expression types the translator understands.
protocol SQLTranslatableExpression {
    func translate(_ builder: inout PredicateSQLBuilder) throws -> SQLFragment
}

struct PredicateSQLBuilder {
    var variables: [PredicateExpressions.VariableID: any PersistentModel.Type]
    var bindings: [SQLiteValue] = []

    mutating func fragment(_ expression: Any) throws -> SQLFragment {
        guard let translatable = expression as? SQLTranslatableExpression else {
            let name = String(describing: type(of: expression)).split(separator: "<").first.map(String.init) ?? "an expression"
            throw ModelContextError.unsupportedPredicate("'\(name)' in a #Predicate")
        }
        return try translatable.translate(&self)
    }

    static func column(named name: String, in entity: EntityDescription) -> String? {
        if name == "id" { return "id" }
        if let attribute = entity.attributes.first(where: { $0.name == name }) { return attribute.column }
        if let relationship = entity.relationships.first(where: { $0.name == name }), case let .column(column) = relationship.storage { return column }
        return nil
    }

    /// `lhs op rhs`, pushed through a to-one relationship when one side is reached that way.
    mutating func compare(_ lhs: Any, _ sqlOperator: String, _ rhs: Any) throws -> SQLFragment {
        let left = try fragment(lhs), right = try fragment(rhs)
        guard left.wrap == nil || right.wrap == nil else {
            throw ModelContextError.unsupportedPredicate("a comparison between two relationships' values")
        }
        let condition = "\(left.sql) \(sqlOperator) \(right.sql)"
        if let wrap = left.wrap ?? right.wrap {
            let wrapped = wrap(condition)
            // `$0.category?.name == nil` is also true when there is no category.
            if sqlOperator == "IS", right.sql == "NULL" || left.sql == "NULL", let null = left.nullThroughWrap ?? right.nullThroughWrap {
                return SQLFragment(sql: "(\(null) IS NULL OR \(wrapped))", isCondition: true)
            }
            return SQLFragment(sql: wrapped, isCondition: true)
        }
        return SQLFragment(sql: condition, isCondition: true)
    }
}

extension PredicateExpressions.Variable: SQLTranslatableExpression {
    func translate(_ builder: inout PredicateSQLBuilder) throws -> SQLFragment {
        throw ModelContextError.unsupportedPredicate("a whole model object in a comparison (compare its attributes instead)")
    }
}

extension PredicateExpressions.KeyPath: SQLTranslatableExpression {
    func translate(_ builder: inout PredicateSQLBuilder) throws -> SQLFragment {
        guard let variable = root as? PredicateExpressions.Variable<Root.Output>, let model = builder.variables[variable.key] else {
            throw ModelContextError.unsupportedPredicate("the key path \(keyPath) applied to a computed value (only the model's stored properties translate)")
        }
        guard let name = model.propertyName(for: keyPath), let column = PredicateSQLBuilder.column(named: name, in: model.entity) else {
            throw ModelContextError.unsupportedPredicate("the key path \(keyPath) (not a stored attribute or to-one relationship of \(model.entity.name))")
        }
        return SQLFragment(sql: column, isCondition: false)
    }
}

extension PredicateExpressions.Value: SQLTranslatableExpression {
    func translate(_ builder: inout PredicateSQLBuilder) throws -> SQLFragment {
        if let persistent = value as? PersistentValue {
            let sqlite = persistent.sqliteValue
            if sqlite == .null { return SQLFragment(sql: "NULL", isCondition: false) }
            builder.bindings.append(sqlite)
            return SQLFragment(sql: "?", isCondition: false)
        }
        if let model = value as? any PersistentModel, let id = model.persistentBackingData.id {
            builder.bindings.append(.integer(id))
            return SQLFragment(sql: "?", isCondition: false)
        }
        throw ModelContextError.unsupportedPredicate("a value of type \(Output.self)")
    }
}

extension PredicateExpressions.NilLiteral: SQLTranslatableExpression {
    func translate(_ builder: inout PredicateSQLBuilder) throws -> SQLFragment {
        SQLFragment(sql: "NULL", isCondition: false)
    }
}

extension PredicateExpressions.Equal: SQLTranslatableExpression {
    func translate(_ builder: inout PredicateSQLBuilder) throws -> SQLFragment {
        try builder.compare(lhs, "IS", rhs)
    }
}

extension PredicateExpressions.NotEqual: SQLTranslatableExpression {
    func translate(_ builder: inout PredicateSQLBuilder) throws -> SQLFragment {
        let equal = try builder.compare(lhs, "IS", rhs)
        return SQLFragment(sql: "NOT (\(equal.sql))", isCondition: true)
    }
}

extension PredicateExpressions.Comparison: SQLTranslatableExpression {
    func translate(_ builder: inout PredicateSQLBuilder) throws -> SQLFragment {
        let sqlOperator = switch op {
        case .lessThan: "<"
        case .lessThanOrEqual: "<="
        case .greaterThan: ">"
        case .greaterThanOrEqual: ">="
        @unknown default: throw ModelContextError.unsupportedPredicate("the comparison \(op)")
        }
        return try builder.compare(lhs, sqlOperator, rhs)
    }
}

extension PredicateExpressions.Conjunction: SQLTranslatableExpression {
    func translate(_ builder: inout PredicateSQLBuilder) throws -> SQLFragment {
        SQLFragment(sql: "(\(try builder.fragment(lhs).asCondition) AND \(try builder.fragment(rhs).asCondition))", isCondition: true)
    }
}

extension PredicateExpressions.Disjunction: SQLTranslatableExpression {
    func translate(_ builder: inout PredicateSQLBuilder) throws -> SQLFragment {
        SQLFragment(sql: "(\(try builder.fragment(lhs).asCondition) OR \(try builder.fragment(rhs).asCondition))", isCondition: true)
    }
}

extension PredicateExpressions.Negation: SQLTranslatableExpression {
    func translate(_ builder: inout PredicateSQLBuilder) throws -> SQLFragment {
        SQLFragment(sql: "NOT \(try builder.fragment(wrapped).asCondition)", isCondition: true)
    }
}

extension PredicateExpressions.ForcedUnwrap: SQLTranslatableExpression {
    func translate(_ builder: inout PredicateSQLBuilder) throws -> SQLFragment {
        try builder.fragment(inner)
    }
}

extension PredicateExpressions.NilCoalesce: SQLTranslatableExpression {
    func translate(_ builder: inout PredicateSQLBuilder) throws -> SQLFragment {
        let left = try builder.fragment(lhs), right = try builder.fragment(rhs)
        guard left.wrap == nil, right.wrap == nil else { throw ModelContextError.unsupportedPredicate("'??' on a relationship's value") }
        return SQLFragment(sql: "coalesce(\(left.sql), \(right.sql))", isCondition: false)
    }
}

extension PredicateExpressions.CollectionContainsCollection: SQLTranslatableExpression {
    func translate(_ builder: inout PredicateSQLBuilder) throws -> SQLFragment {
        let haystack = try builder.fragment(base), needle = try builder.fragment(other)
        guard haystack.wrap == nil else { throw ModelContextError.unsupportedPredicate("'contains' on a relationship's value") }
        return SQLFragment(sql: "instr(\(haystack.sql), \(needle.sql)) > 0", isCondition: true)
    }
}

extension PredicateExpressions.SequenceStartsWith: SQLTranslatableExpression {
    func translate(_ builder: inout PredicateSQLBuilder) throws -> SQLFragment {
        let text = try builder.fragment(base), start = try builder.fragment(prefix)
        guard text.wrap == nil else { throw ModelContextError.unsupportedPredicate("'starts(with:)' on a relationship's value") }
        // The prefix's binding is used twice.
        if start.sql == "?", let last = builder.bindings.last { builder.bindings.append(last) }
        return SQLFragment(sql: "substr(\(text.sql), 1, length(\(start.sql))) = \(start.sql)", isCondition: true)
    }
}

extension PredicateExpressions.OptionalFlatMap: SQLTranslatableExpression {
    func translate(_ builder: inout PredicateSQLBuilder) throws -> SQLFragment {
        // `$0.category?.name`: a key path to a to-one relationship stored as a column.
        let relationship = try builder.fragment(wrapped)
        guard let target = Wrapped.self as? any PersistentModel.Type else {
            throw ModelContextError.unsupportedPredicate("optional chaining on something other than a to-one relationship")
        }
        builder.variables[variable.key] = target
        let inner = try builder.fragment(transform)
        let column = relationship.sql, table = target.entity.table
        return SQLFragment(sql: inner.sql, isCondition: inner.isCondition,
                           wrap: { condition in "\(column) IN (SELECT id FROM \(table) WHERE \(condition))" },
                           nullThroughWrap: column)
    }
}
