import Foundation

/// Lowers a Foundation `#Predicate` over a model to a `QueryCondition`, which
/// `PredicateSQLRenderer` writes as SQL.
///
/// Supported: `==`, `!=`, `<`, `<=`, `>`, `>=`, `&&`, `||`, `!`, `nil` checks, `??`, `!`
/// unwrapping, negative constants (`-1`, `-limit`), `contains` and `starts(with:)` on strings, comparisons with a saved model object,
/// `persistentModelID` compared with a saved object's identifier,
/// key paths through any number of to-one relationships (`$0.manager?.manager?.name`), with
/// Swift's optional semantics, a test through optional chaining (`$0.notes?.contains("x") ?? false`,
/// `$0.manager?.name.isEmpty == true`), `isEmpty` of a text or bytes, `contains` of a value in a
/// captured collection or in a range, and on a to-many relationship (of the predicate's object or
/// of one a to-one relationship reaches) its `count` and `isEmpty`, `contains(where:)` and
/// `allSatisfy`. Anything else throws `ModelContextError.unsupportedPredicate` naming the construct.
enum PredicateTranslator<Model: PersistentModel> {
    static func condition(_ predicate: Predicate<Model>) throws -> QueryCondition {
        var lowering = PredicateLowering(variables: [predicate.variable.key: .init(model: Model.self, hops: [], row: 0)])
        return try lowering.condition(predicate.expression)
    }

    /// The SQL condition and its bindings, on `Model`'s table.
    static func translate(_ predicate: Predicate<Model>) throws -> (String, [SQLiteValue]) {
        var renderer = PredicateSQLRenderer(dialect: .sqlite, table: Model.entity.tableName)
        let sql = renderer.condition(try condition(predicate))
        return (sql, renderer.bindings)
    }

    /// The path of a key path to a stored attribute (or to-one relationship) of `Model`, or
    /// through a to-one relationship to a stored attribute of its target (`\Animal.category?.name`,
    /// which a `SortDescriptor` takes as one key path, where a `#Predicate` has its parts).
    static func path(for keyPath: AnyKeyPath) -> QueryPath? {
        let valueType = type(of: keyPath).valueType
        if let name = Model.propertyName(for: keyPath) {
            return PredicateLowering.column(named: name, in: Model.entity, valueType: valueType).map { QueryPath(column: $0.column, kind: $0.kind) }
        }
        guard let related = Model.relatedPropertyName(for: keyPath),
              let key = PredicateLowering.column(named: related.relationship, in: Model.entity, valueType: Int64.self),
              let (column, kind) = PredicateLowering.column(named: related.property, in: related.target.entity, valueType: valueType) else { return nil }
        return QueryPath(hops: [QueryHop(foreignKey: key.column, table: related.target.entity.tableName)], column: column, kind: kind)
    }
}

/// What a piece of a `#Predicate` lowers to.
enum LoweredPredicate {
    case condition(QueryCondition)
    /// A value; `target` is the model a to-one relationship's key refers to, for chaining through it.
    case value(QueryExpression, target: (any PersistentModel.Type)?)
    /// `$0.persistentModelID`: the row id of an object of `entity`, which a captured identifier
    /// equals only when it is one of that entity's.
    case identifier(QueryExpression, entity: String)
    /// A `Bool?` that optional chaining makes (`$0.notes?.contains("x")`,
    /// `$0.manager?.name.starts(with: "A")`): nil where `nilWhen` holds, else the condition's
    /// value. What `??` and a comparison with `true`, `false` or nil take.
    case optionalCondition(QueryCondition, nilWhen: QueryCondition)
}

/// Expression types the lowering understands.
protocol PredicateLowerable {
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate
}

struct PredicateLowering {
    /// A predicate variable: the model it ranges over, the row it starts from (`QueryPath.row`)
    /// and the relationships followed from there to reach it.
    struct Binding {
        var model: any PersistentModel.Type
        var hops: [QueryHop]
        var row: Int

        /// The object of `target` that the to-one relationship whose key `path` reads refers to.
        static func following(_ path: QueryPath, to target: any PersistentModel.Type) -> Binding {
            Binding(model: target, hops: path.hops + [QueryHop(foreignKey: path.column, table: target.entity.tableName)], row: path.row)
        }
    }

    var variables: [PredicateExpressions.VariableID: Binding]
    /// The variables of optional chaining on a value (`$0.notes?.contains("x")`): the value each
    /// stands for, where it is not nil.
    var values: [PredicateExpressions.VariableID: QueryExpression] = [:]
    /// How many tests on the objects of a to-many relationship enclose what is being lowered:
    /// the row of the innermost one's object.
    var depth = 0

    mutating func lower(_ expression: Any) throws -> LoweredPredicate {
        guard let lowerable = expression as? PredicateLowerable else {
            let name = String(describing: type(of: expression)).split(separator: "<").first.map(String.init) ?? "an expression"
            throw ModelContextError.unsupportedPredicate("'\(name)' in a #Predicate")
        }
        return try lowerable.lower(&self)
    }

    mutating func condition(_ expression: Any) throws -> QueryCondition {
        switch try lower(expression) {
        case let .condition(condition): return condition
        case let .value(value, _): return .isTrue(value)
        case .identifier: throw ModelContextError.unsupportedPredicate("an identifier used as a condition")
        case .optionalCondition: throw ModelContextError.unsupportedPredicate("an optional Bool used as a condition; write `?? false` or `== true`")
        }
    }

    mutating func value(_ expression: Any) throws -> QueryExpression {
        try Self.value(of: try lower(expression))
    }

    mutating func compare(_ lhs: Any, _ comparison: QueryComparison, _ rhs: Any) throws -> LoweredPredicate {
        let (left, right) = (try lower(lhs), try lower(rhs))
        // `$0.notes?.contains("x") == true`: a `Bool?` is compared with a captured Bool or nil.
        for (side, other) in [(left, rhs), (right, lhs)] {
            guard case let .optionalCondition(condition, isNil) = side else { continue }
            guard comparison == .equal || comparison == .notEqual, let captured = Self.capturedBool(other) else {
                throw ModelContextError.unsupportedPredicate("an optional Bool compared with something other than true, false or nil")
            }
            let equal: QueryCondition = switch captured {
            case nil: isNil
            case true?: .and([.not(isNil), condition])
            case false?: .and([.not(isNil), .not(condition)])
            }
            return .condition(comparison == .equal ? equal : .not(equal))
        }
        // An identifier of another entity equals no object of this one (Swift compares both parts).
        for (side, other) in [(left, rhs), (right, lhs)] {
            if case let .identifier(_, entity) = side, let captured = Self.capturedIdentifier(other),
               captured.entity != entity, comparison == .equal || comparison == .notEqual {
                return .condition(.constant(comparison == .notEqual))
            }
        }
        return .condition(.comparison(try Self.value(of: left), comparison, try Self.value(of: right)))
    }

    /// The `Bool` or nil `expression` captures (`true` in `$0.notes?.isEmpty == true`), if it does.
    private static func capturedBool(_ expression: Any) -> Bool?? {
        if let value = expression as? PredicateExpressions.Value<Bool> { return .some(value.value) }
        return (expression as? PredicateExpressions.Value<Bool?>).map(\.value)
    }

    /// The identifier `expression` captures (`id` in `$0.persistentModelID == id`), if it does.
    private static func capturedIdentifier(_ expression: Any) -> PersistentIdentifier? {
        (expression as? PredicateExpressions.Value<PersistentIdentifier>)?.value ?? (expression as? PredicateExpressions.Value<PersistentIdentifier?>)?.value
    }

    static func value(of lowered: LoweredPredicate) throws -> QueryExpression {
        switch lowered {
        case let .value(value, _), let .identifier(value, _): return value
        case .condition, .optionalCondition: throw ModelContextError.unsupportedPredicate("a condition used as a value")
        }
    }

    /// How the values a stored value is compared with are bound: as the column's kind, or for
    /// anything but a column as values of `type`.
    static func kind(of value: QueryExpression, else type: Any.Type) -> QueryValueKind {
        if case let .path(path) = value { path.kind } else { .of(type) }
    }

    /// A value the predicate captures, as SQL binds it (a saved object or its identifier as its row id).
    static func constant(_ value: Any, of type: Any.Type) throws -> SQLValue {
        if let persistent = value as? PersistentValue {
            // Swift's NaN compares false with every value (`!=` true); SQLite binds it as NULL and
            // PostgreSQL orders it above every number: no SQL says what Swift does.
            if case let .real(number) = persistent.sqliteValue, number.isNaN {
                throw ModelContextError.unsupportedPredicate("a comparison with NaN, which no stored value can be (a save refuses it); compare with a number")
            }
            return persistent.sqliteValue
        }
        if let identifier = value as? PersistentIdentifier {
            guard let id = identifier.id else {
                throw ModelContextError.unsupportedPredicate("the identifier of a model object that has not been saved; save the context first")
            }
            return .integer(id)
        }
        if let model = value as? any PersistentModel {
            guard let id = model.persistentBackingData.id else {
                throw ModelContextError.unsupportedPredicate("a model object that has not been saved (it has no identifier yet); save the context first")
            }
            return .integer(id)
        }
        if let optional = value as? any OptionalType, optional.isNone { return .null }
        throw ModelContextError.unsupportedPredicate("a value of type \(type)")
    }

    /// The column and value kind of a stored attribute or to-one relationship named `name`.
    static func column(named name: String, in entity: EntityDescription, valueType: Any.Type) -> (column: String, kind: QueryValueKind)? {
        if let attribute = entity.attributes.first(where: { $0.name == name }) {
            guard let column = attribute.column else { return nil }
            return (SQLDialect.unquoted(column), QueryValueKind.of(valueType))
        }
        if let relationship = entity.relationships.first(where: { $0.name == name }), case let .column(column) = relationship.storage {
            return (SQLDialect.unquoted(column), .integer)
        }
        return nil
    }
}

extension QueryValueKind {
    /// How values of a Swift type compare in SQL (optionals as their wrapped type).
    static func of(_ type: Any.Type) -> QueryValueKind {
        if let optional = type as? any OptionalType.Type { return of(optional.wrappedType) }
        switch type {
        case is Decimal.Type: return .decimal
        case is Date.Type: return .date
        case is Bool.Type: return .bool
        case is Double.Type, is Float.Type: return .real
        case is Data.Type: return .blob
        case is UUID.Type: return .uuid
        case is String.Type, is URL.Type: return .text
        case is any RawRepresentable.Type: return .text
        default: return .integer
        }
    }
}

/// Lets `QueryValueKind.of` see through `Optional`.
private protocol OptionalType {
    static var wrappedType: Any.Type { get }
    var isNone: Bool { get }
}

extension Optional: OptionalType {
    static var wrappedType: Any.Type { Wrapped.self }
    var isNone: Bool { self == nil }
}

extension PredicateExpressions.Variable: PredicateLowerable {
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate {
        // The value optional chaining unwrapped (`$0` in `$0.notes?.contains("x")`'s transform).
        if let value = lowering.values[key] { return .value(value, target: nil) }
        throw ModelContextError.unsupportedPredicate("a whole model object in a comparison; compare its attributes or its persistentModelID instead")
    }
}

extension PredicateExpressions.KeyPath: PredicateLowerable {
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate {
        // `$0.animals.count`, `$0.animals.isEmpty`: rows counted through the to-many relationship.
        if let objects = Root.Output.self as? any ToManyRelationshipValue.Type, keyPath == objects.countKeyPath || keyPath == objects.isEmptyKeyPath {
            guard let relationship = root as? any ToManyReference else {
                throw ModelContextError.unsupportedPredicate("the key path \(keyPath) applied to a computed value (only a to-many relationship of the model counts)")
            }
            let count = QueryExpression.count(try relationship.toMany(lowering, for: "the count of").rows)
            return keyPath == objects.countKeyPath ? .value(count, target: nil) : .condition(.comparison(count, .equal, .value(.integer(0), .integer)))
        }
        let binding: PredicateLowering.Binding
        if let variable = root as? PredicateExpressions.Variable<Root.Output>, let bound = lowering.variables[variable.key] {
            binding = bound
        } else {
            let lowered = try lowering.lower(root)
            if case let .value(.path(path), target?) = lowered {
                // `$0.category!.name`: through a force-unwrapped relationship.
                binding = .following(path, to: target)
            } else if case let .value(value, nil) = lowered, let empty = Self.emptyValue(testedBy: keyPath) {
                // `$0.name.isEmpty`, `$0.photo.isEmpty`: equal to the empty text or bytes.
                return .condition(.comparison(value, .equal, .value(empty.value, empty.kind)))
            } else {
                throw ModelContextError.unsupportedPredicate("the key path \(keyPath) applied to a computed value (only the model's stored properties translate)")
            }
        }
        let model = binding.model
        if Output.self == PersistentIdentifier.self {
            // `$0.persistentModelID`: the row's key.
            return .identifier(.path(QueryPath(hops: binding.hops, column: "id", kind: .integer, row: binding.row)), entity: model.entity.name)
        }
        guard let name = model.propertyName(for: keyPath),
              let (column, kind) = PredicateLowering.column(named: name, in: model.entity, valueType: Output.self) else {
            throw ModelContextError.unsupportedPredicate("the key path \(keyPath) (not a stored attribute or to-one relationship of \(model.entity.name))")
        }
        let relationship = model.entity.relationships.first { $0.name == name }
        let target = relationship.flatMap { relationship in ModelTypeLookup.type(named: relationship.target, from: Output.self) }
        return .value(.path(QueryPath(hops: binding.hops, column: column, kind: kind, row: binding.row)), target: target)
    }
}

extension PredicateExpressions.KeyPath {
    /// The empty value `isEmpty` tests a stored `String` or `Data` for, when `keyPath` is that test.
    static func emptyValue(testedBy keyPath: AnyKeyPath) -> (value: SQLValue, kind: QueryValueKind)? {
        if keyPath == \String.isEmpty { return (.text(""), .text) }
        if keyPath == \Data.isEmpty { return (.blob([]), .blob) }
        return nil
    }
}

/// The value of a to-many relationship (`[Animal]`): the key paths of its `count` and `isEmpty`,
/// which a `#Predicate` applies to it, and its objects' model.
protocol ToManyRelationshipValue {
    static var countKeyPath: AnyKeyPath { get }
    static var isEmptyKeyPath: AnyKeyPath { get }
    static var modelType: any PersistentModel.Type { get }
}

extension Array: ToManyRelationshipValue where Element: PersistentModel {
    static var countKeyPath: AnyKeyPath { \[Element].count }
    static var isEmptyKeyPath: AnyKeyPath { \[Element].isEmpty }
    static var modelType: any PersistentModel.Type { Element.self }
}

/// A key path expression that may name a to-many relationship of a predicate's object.
protocol ToManyReference {
    /// The rows that hold the object's id for the to-many relationship, and the model of its
    /// objects; `use` names what is done with it, for the error when it cannot be.
    func toMany(_ lowering: PredicateLowering, for use: String) throws -> (rows: QueryToMany, model: any PersistentModel.Type)
}

extension PredicateExpressions.KeyPath: ToManyReference {
    /// The rows that hold the object's id for the to-many relationship this key path names
    /// (`$0.animals`): the target's rows by the inverse's key, or the join table's by this side's
    /// column (joined to the target's rows).
    func toMany(_ lowering: PredicateLowering, for use: String) throws -> (rows: QueryToMany, model: any PersistentModel.Type) {
        guard let variable = root as? PredicateExpressions.Variable<Root.Output>, let binding = lowering.variables[variable.key],
              let name = binding.model.propertyName(for: keyPath),
              let relationship = binding.model.entity.relationships.first(where: { $0.name == name }),
              let target = (Output.self as? any ToManyRelationshipValue.Type)?.modelType else {
            throw ModelContextError.unsupportedPredicate("\(use) \(keyPath) (only a to-many relationship of a model object the predicate reaches translates)")
        }
        let owner = QueryPath.id(ofObjectReachedThrough: binding.hops, fromRow: binding.row)
        switch relationship.storage {
        case let .inverseColumn(column):
            return (QueryToMany(table: target.entity.tableName, column: SQLDialect.unquoted(column), owner: owner), target)
        case let .joinTable(table, ownColumn, targetColumn):
            let joined = QueryHop(foreignKey: SQLDialect.unquoted(targetColumn), table: target.entity.tableName)
            return (QueryToMany(table: SQLDialect.unquoted(table), column: SQLDialect.unquoted(ownColumn), joined: joined, owner: owner), target)
        case .column:
            throw ModelContextError.unsupportedPredicate("\(use) the to-one relationship \(keyPath)")
        }
    }
}

extension PredicateLowering {
    /// `$0.animals.contains { … }` (`negated` false) or `$0.animals.allSatisfy { … }` (true): some
    /// object's row for which `test` holds, or none for which it does not. The test's variable
    /// ranges over the objects' rows, one level deeper than the relationship's row.
    mutating func exists(_ sequence: Any, _ variable: PredicateExpressions.VariableID, _ test: Any, negated: Bool, use: String) throws -> LoweredPredicate {
        guard let relationship = sequence as? any ToManyReference else {
            throw ModelContextError.unsupportedPredicate("\(use) a value that is not a to-many relationship of the model")
        }
        let (rows, model) = try relationship.toMany(self, for: use)
        depth += 1
        defer { depth -= 1 }
        variables[variable] = Binding(model: model, hops: [], row: depth)
        let inner = try condition(test)
        return .condition(negated ? .not(.exists(rows, .not(inner))) : .exists(rows, inner))
    }
}

extension PredicateExpressions.SequenceContainsWhere: PredicateLowerable {
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate {
        try lowering.exists(sequence, variable.key, test, negated: false, use: "'contains(where:)' on")
    }
}

extension PredicateExpressions.SequenceAllSatisfy: PredicateLowerable {
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate {
        try lowering.exists(sequence, variable.key, test, negated: true, use: "'allSatisfy' on")
    }
}

/// A range a `#Predicate` captures (`range` in `range.contains($0.date)`): its bounds.
protocol CapturedRange {
    var bounds: (lower: Any, upper: Any, closed: Bool) { get }
    static var boundType: Any.Type { get }
}

extension PredicateExpressions.Value: CapturedRange where Output: RangeBounds {
    var bounds: (lower: Any, upper: Any, closed: Bool) { (value.lowerBound, value.upperBound, Output.isClosed) }
    static var boundType: Any.Type { Output.Bound.self }
}

/// `Range` and `ClosedRange`, whose bounds a captured range is read by.
protocol RangeBounds {
    associatedtype Bound
    var lowerBound: Bound { get }
    var upperBound: Bound { get }
    static var isClosed: Bool { get }
}

extension Range: RangeBounds { static var isClosed: Bool { false } }
extension ClosedRange: RangeBounds { static var isClosed: Bool { true } }

/// A range a `#Predicate` builds from values (`(start..<end).contains($0.date)`): its bound expressions.
protocol BuiltRange {
    var boundExpressions: (lower: Any, upper: Any, closed: Bool) { get }
}

extension PredicateExpressions.Range: BuiltRange {
    var boundExpressions: (lower: Any, upper: Any, closed: Bool) { (lower, upper, false) }
}

extension PredicateExpressions.ClosedRange: BuiltRange {
    var boundExpressions: (lower: Any, upper: Any, closed: Bool) { (lower, upper, true) }
}

extension PredicateExpressions.RangeExpressionContains: PredicateLowerable {
    /// `(start..<end).contains($0.date)`, `range.contains($0.score)`: at least the lower bound and
    /// below the upper one (at most it, for a closed range).
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate {
        let lower: QueryExpression, upper: QueryExpression, closed: Bool
        let subject = try lowering.value(element)
        let kind = PredicateLowering.kind(of: subject, else: Element.Output.self)
        if let captured = range as? any CapturedRange {
            let bounds = captured.bounds, boundType = type(of: captured).boundType
            lower = .value(try PredicateLowering.constant(bounds.lower, of: boundType), kind)
            upper = .value(try PredicateLowering.constant(bounds.upper, of: boundType), kind)
            closed = bounds.closed
        } else if let built = range as? any BuiltRange {
            let bounds = built.boundExpressions
            (lower, upper, closed) = (try lowering.value(bounds.lower), try lowering.value(bounds.upper), bounds.closed)
        } else {
            throw ModelContextError.unsupportedPredicate("'contains' on a range of type \(RangeExpression.Output.self) (only a Range or ClosedRange)")
        }
        return .condition(.and([.comparison(subject, .greaterOrEqual, lower), .comparison(subject, closed ? .lessOrEqual : .less, upper)]))
    }
}

/// A collection a `#Predicate` captures (`names` in `names.contains($0.name)`): its elements.
protocol CapturedCollection {
    var elements: [Any] { get }
    static var elementType: Any.Type { get }
}

extension PredicateExpressions.Value: CapturedCollection where Output: Sequence {
    var elements: [Any] { value.map { $0 } }
    static var elementType: Any.Type { Output.Element.self }
}

extension PredicateExpressions.SequenceContains: PredicateLowerable {
    /// `names.contains($0.name)`, `ids.contains($0.persistentModelID)`: the value is one of the
    /// captured elements (an `IN` list; identifiers of other entities are none of this one's).
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate {
        guard let collection = sequence as? any CapturedCollection else {
            throw ModelContextError.unsupportedPredicate("'contains' on \(LHS.Output.self) (only on strings, and on a collection the predicate captures, as in names.contains($0.name))")
        }
        let elementType = type(of: collection).elementType
        var elements = collection.elements
        let subject = try lowering.lower(element)
        if case let .identifier(_, entity) = subject {
            elements.removeAll { ($0 as? PersistentIdentifier)?.entity != entity }
        }
        // NaN equals no value (and no stored value is NaN): it selects nothing, as in Swift.
        elements.removeAll { element in
            if case let .real(number)? = (element as? PersistentValue)?.sqliteValue { number.isNaN } else { false }
        }
        let values = try elements.map { try PredicateLowering.constant($0, of: elementType) }
        let subjectValue = try PredicateLowering.value(of: subject)
        let kind = PredicateLowering.kind(of: subjectValue, else: elementType)
        guard values.count <= PredicateLowering.largestCapturedCollection || PredicateSQLRenderer.bindsLongListsAsOneParameter(kind) else {
            throw ModelContextError.unsupportedPredicate("'contains' on a collection of \(values.count) values of this type (at most \(PredicateLowering.largestCapturedCollection), which SQL binds as parameters: lists of integers, texts and identifiers have no bound); split it, or fetch by a condition the values share")
        }
        return .condition(.oneOf(subjectValue, values, kind))
    }
}

extension PredicateLowering {
    /// The most values a captured collection of dates, numbers that are not integers, decimals,
    /// Booleans or bytes may hold: each is a parameter, and SQLite takes at most 32,766 in a
    /// statement (PostgreSQL 65,535). Integers, texts and identifiers are bound as one list.
    static let largestCapturedCollection = 30_000
}

/// The model class a relationship's key path leads to, read from the key path's value type.
enum ModelTypeLookup {
    static func type(named name: String, from valueType: Any.Type) -> (any PersistentModel.Type)? {
        if let optional = valueType as? any OptionalType.Type { return type(named: name, from: optional.wrappedType) }
        guard let model = valueType as? any PersistentModel.Type, model.entity.name == name else { return nil }
        return model
    }
}

extension PredicateExpressions.Value: PredicateLowerable {
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate {
        let constant = try PredicateLowering.constant(value, of: Output.self)
        return .value(.value(constant, constant == .null ? .integer : QueryValueKind.of(Output.self)), target: nil)
    }
}

/// `-1` (which `#Predicate` writes as the negation of `1`) and `-limit` of a captured value: the
/// negated constant. A negated stored value (`-$0.balance`) throws `unsupportedPredicate`, and so
/// does the negation of a type's smallest integer, which Swift's evaluation would trap on.
extension PredicateExpressions.UnaryMinus: PredicateLowerable {
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate {
        guard let constant = wrapped as? PredicateExpressions.Value<Wrapped.Output> else {
            throw ModelContextError.unsupportedPredicate("the negation of a stored value (`-$0.value`); compare it with a negated constant instead")
        }
        if let integer = constant.value as? any FixedWidthInteger, Self.isSmallest(integer) {
            throw ModelContextError.unsupportedPredicate("the negation of \(integer), which overflows \(Wrapped.Output.self)")
        }
        return try PredicateExpressions.Value(-constant.value).lower(&lowering)
    }

    private static func isSmallest<Integer: FixedWidthInteger>(_ integer: Integer) -> Bool { integer == Integer.min }
}

extension PredicateExpressions.NilLiteral: PredicateLowerable {
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate {
        .value(.value(.null, .integer), target: nil)
    }
}

extension PredicateExpressions.Equal: PredicateLowerable {
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate {
        try lowering.compare(lhs, .equal, rhs)
    }
}

extension PredicateExpressions.NotEqual: PredicateLowerable {
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate {
        try lowering.compare(lhs, .notEqual, rhs)
    }
}

extension PredicateExpressions.Comparison: PredicateLowerable {
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate {
        let comparison: QueryComparison = switch op {
        case .lessThan: .less
        case .lessThanOrEqual: .lessOrEqual
        case .greaterThan: .greater
        case .greaterThanOrEqual: .greaterOrEqual
        @unknown default: throw ModelContextError.unsupportedPredicate("the comparison \(op)")
        }
        return try lowering.compare(lhs, comparison, rhs)
    }
}

extension PredicateExpressions.Conjunction: PredicateLowerable {
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate {
        .condition(.and([try lowering.condition(lhs), try lowering.condition(rhs)]))
    }
}

extension PredicateExpressions.Disjunction: PredicateLowerable {
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate {
        .condition(.or([try lowering.condition(lhs), try lowering.condition(rhs)]))
    }
}

extension PredicateExpressions.Negation: PredicateLowerable {
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate {
        .condition(.not(try lowering.condition(wrapped)))
    }
}

extension PredicateExpressions.ForcedUnwrap: PredicateLowerable {
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate {
        try lowering.lower(inner)
    }
}

extension PredicateExpressions.NilCoalesce: PredicateLowerable {
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate {
        let value = try lowering.lower(lhs)
        // `$0.notes?.contains("x") ?? false`: the fallback where the chain is nil.
        if case let .optionalCondition(condition, isNil) = value {
            let fallback = try lowering.condition(rhs)
            return .condition(.or([.and([isNil, fallback]), .and([.not(isNil), condition])]))
        }
        return .value(.coalesce(try PredicateLowering.value(of: value), try lowering.value(rhs)), target: nil)
    }
}

extension PredicateExpressions.CollectionContainsCollection: PredicateLowerable {
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate {
        guard Base.Output.self == String.self || Base.Output.self == Substring.self else {
            throw ModelContextError.unsupportedPredicate("'contains' on \(Base.Output.self) (only on strings)")
        }
        return .condition(.text(.contains, try lowering.value(base), try lowering.value(other)))
    }
}

extension PredicateExpressions.SequenceStartsWith: PredicateLowerable {
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate {
        guard Base.Output.self == String.self || Base.Output.self == Substring.self else {
            throw ModelContextError.unsupportedPredicate("'starts(with:)' on \(Base.Output.self) (only on strings)")
        }
        return .condition(.text(.hasPrefix, try lowering.value(base), try lowering.value(prefix)))
    }
}

extension PredicateExpressions.OptionalFlatMap: PredicateLowerable {
    func lower(_ lowering: inout PredicateLowering) throws -> LoweredPredicate {
        let isNil: QueryCondition
        switch try lowering.lower(wrapped) {
        case let .value(.path(path), target?):
            // `$0.category?.name`: the transform reads the row the relationship's key refers to.
            lowering.variables[variable.key] = .following(path, to: target)
            isNil = .comparison(.path(path), .equal, .value(.null, path.kind))
        case let .value(value, target: nil):
            // `$0.notes?.contains("x")`: the transform reads the value, where there is one.
            lowering.values[variable.key] = value
            isNil = .comparison(value, .equal, .value(.null, PredicateLowering.kind(of: value, else: Wrapped.self)))
        default:
            throw ModelContextError.unsupportedPredicate("optional chaining on something other than a to-one relationship or an optional value")
        }
        switch try lowering.lower(transform) {
        case let .condition(condition):
            return .optionalCondition(condition, nilWhen: isNil)
        case let .optionalCondition(condition, nilWhen: innerIsNil):
            return .optionalCondition(condition, nilWhen: .or([isNil, innerIsNil]))
        case let inner:
            // A stored value read through the chain (or the row's key), or the size of a to-many
            // relationship of the object it reaches, is NULL wherever the chain is nil.
            switch try PredicateLowering.value(of: inner) {
            case .path, .count: return inner
            default:
                throw ModelContextError.unsupportedPredicate("a value computed inside optional chaining; chain to a stored property, and compute outside: `($0.category?.rank ?? 0) + 1`")
            }
        }
    }
}
