import Foundation
import ModelGenQuery

/// Parses a predicate written like the body of a Swift `#Predicate` into a `QueryCondition` on
/// an entity, for `modelgen delete --where`; `PredicateSQLRenderer` writes it as SQL.
///
///     visited == true
///     $0.name.hasPrefix("A") && (weight > 10 || diet == .carnivorous)
///     category.name == "Mammal"          // through to-one relationships, any number of them
///     $0.category?.name == "Mammal"      // the same, written as a #Predicate writes it
///     category == nil
///     books.isEmpty                      // to-many relationships: count, isEmpty,
///     tags.contains { $0.name == "old" } // contains and allSatisfy (nested, $0 the innermost object)
///     ["a", "b"].contains(code)          // a value in a list of literals
///
/// Grammar: `||`, `&&`, `!`, parentheses; comparisons `== != < <= > >=` between a key path
/// (optionally `% n` for integers: `id % 2 == 0`) and a literal (`12`, `1.5`, `"text"` with Swift's
/// escapes, `true`, `false`, `nil`, `.enumCase`); `.contains`, `.hasPrefix`, `.hasSuffix` on strings;
/// a bare Bool key path; `true` and `false` alone; on a to-many relationship of the object (or of
/// one a to-one relationship reaches: false where there is none), `.count` compared with a number,
/// `.isEmpty`, `.contains { … }` and `.allSatisfy { … }`; `[literal, …].contains(keyPath)`. Semantics are Swift's (see `QueryCondition`). A literal must fit the key
/// path's type exactly (an out-of-range number is an error); a `Date` is written in ISO 8601.
/// Anything else is an error naming the construct and its column, never a silently different
/// condition; nesting is limited to `maximumDepth` levels, so no input can exhaust the stack.
public struct WhereClauseTranslator {
    public struct Failure: Error, Equatable, CustomStringConvertible {
        /// 1-based column in the predicate text.
        public var column: Int
        public var message: String
        public var description: String { "predicate:1:\(column): error: \(message)" }
    }

    /// The comparison each operator symbol writes.
    private static let comparisons: [String: QueryComparison] = ["==": .equal, "!=": .notEqual, "<": .less, "<=": .lessOrEqual, ">": .greater, ">=": .greaterOrEqual]

    /// How deeply `!` and parentheses may nest.
    public static let maximumDepth = 200

    private enum Token: Equatable {
        case identifier(String), number(String), string(String)
        case symbol(String)
        case end
    }

    private let schema: ModelSchema
    /// The objects a key path may start from: the entity's, then the object of each enclosing
    /// `contains { … }` or `allSatisfy { … }` (the innermost is `$0`; `QueryPath.row` is the index).
    private var frames: [Entity]
    private var tokens: [(token: Token, column: Int)] = []
    private var position = 0
    private var depth = 0

    private init(schema: ModelSchema, entity: Entity) {
        self.schema = schema
        frames = [entity]
    }

    /// The condition `text` denotes on `entity`'s rows.
    public static func translate(_ text: String, entity: Entity, schema: ModelSchema) -> Result<QueryCondition, Failure> {
        var translator = WhereClauseTranslator(schema: schema, entity: entity)
        do {
            translator.tokens = try tokenize(text)
            let condition = try translator.parseOr()
            guard translator.current == .end else { throw translator.failure("unexpected \(translator.describe(translator.current))") }
            return .success(condition)
        } catch let failure as Failure {
            return .failure(failure)
        } catch {
            return .failure(Failure(column: 1, message: "\(error)"))
        }
    }

    // MARK: - Tokens

    private static func tokenize(_ text: String) throws -> [(token: Token, column: Int)] {
        let characters = Array(text.unicodeScalars)
        var result: [(Token, Int)] = []
        var index = 0
        func isIdentifierStart(_ c: Unicode.Scalar) -> Bool { c == "_" || c == "$" || (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") }
        func isDigit(_ c: Unicode.Scalar) -> Bool { c >= "0" && c <= "9" }
        func digits(from start: Int) -> Int {
            var end = start
            while end < characters.count && isDigit(characters[end]) { end += 1 }
            return end
        }
        while index < characters.count {
            let c = characters[index]
            let column = index + 1
            if c == " " || c == "\t" || c == "\n" || c == "\r" { index += 1; continue }
            if isIdentifierStart(c) {
                var end = index
                while end < characters.count && (isIdentifierStart(characters[end]) || isDigit(characters[end])) { end += 1 }
                result.append((.identifier(String(String.UnicodeScalarView(characters[index..<end]))), column))
                index = end
            } else if isDigit(c) || (c == "-" && index + 1 < characters.count && isDigit(characters[index + 1])) {
                // -?digits(.digits)?([eE][+-]?digits)?
                var end = digits(from: index + 1)
                if end + 1 < characters.count, characters[end] == ".", isDigit(characters[end + 1]) { end = digits(from: end + 1) }
                if end < characters.count, characters[end] == "e" || characters[end] == "E" {
                    var exponent = end + 1
                    if exponent < characters.count, characters[exponent] == "+" || characters[exponent] == "-" { exponent += 1 }
                    guard exponent < characters.count, isDigit(characters[exponent]) else { throw Failure(column: end + 1, message: "expected the digits of an exponent") }
                    end = digits(from: exponent)
                }
                if end < characters.count, isIdentifierStart(characters[end]) || characters[end] == "." {
                    throw Failure(column: end + 1, message: "unexpected '\(characters[end])' after the number")
                }
                result.append((.number(String(String.UnicodeScalarView(characters[index..<end]))), column))
                index = end
            } else if c == "\"" || c == "'" {
                let (value, end) = try stringLiteral(characters, from: index)
                result.append((.string(value), column))
                index = end
            } else {
                let two = index + 1 < characters.count ? String(String.UnicodeScalarView([c, characters[index + 1]])) : ""
                if ["==", "!=", "<=", ">=", "&&", "||"].contains(two) {
                    result.append((.symbol(two), column))
                    index += 2
                } else if two == "?." {
                    // Optional chaining, as a `#Predicate` writes it: a key path reads nil through a
                    // missing object whether or not it says so.
                    result.append((.symbol("."), column))
                    index += 2
                } else if "()<>!.,%[]{}".unicodeScalars.contains(c) {
                    result.append((.symbol(String(c)), column))
                    index += 1
                } else {
                    throw Failure(column: column, message: "unexpected character '\(c.escaped(asASCII: true))'")
                }
            }
        }
        result.append((.end, characters.count + 1))
        return result
    }

    /// A string literal starting at `start` (its quote), with Swift's escapes: `\0 \\ \t \n \r \" \'`
    /// and `\u{…}`. Returns the value and the index after the closing quote.
    private static func stringLiteral(_ characters: [Unicode.Scalar], from start: Int) throws -> (String, Int) {
        let quote = characters[start]
        var value = String.UnicodeScalarView()
        var index = start + 1
        while index < characters.count && characters[index] != quote {
            guard characters[index] == "\\" else {
                value.append(characters[index])
                index += 1
                continue
            }
            let escapeColumn = index + 1
            guard index + 1 < characters.count else { break }
            switch characters[index + 1] {
            case "0": value.append("\0")
            case "\\": value.append("\\")
            case "t": value.append("\t")
            case "n": value.append("\n")
            case "r": value.append("\r")
            case "\"": value.append("\"")
            case "'": value.append("'")
            case "u":
                guard index + 2 < characters.count, characters[index + 2] == "{",
                      let close = characters[(index + 3)...].firstIndex(of: "}"), close - (index + 3) <= 8,
                      let code = UInt32(String(String.UnicodeScalarView(characters[(index + 3)..<close])), radix: 16),
                      let scalar = Unicode.Scalar(code) else {
                    throw Failure(column: escapeColumn, message: "invalid \\u{…} escape; write \\u{1F600} with 1 to 8 hexadecimal digits of a Unicode scalar")
                }
                value.append(scalar)
                index = close + 1
                continue
            default:
                throw Failure(column: escapeColumn, message: "invalid escape '\\\(characters[index + 1].escaped(asASCII: true))'; Swift's are \\0 \\\\ \\t \\n \\r \\\" \\' and \\u{…}")
            }
            index += 2
        }
        guard index < characters.count else { throw Failure(column: start + 1, message: "unterminated string") }
        return (String(value), index + 1)
    }

    private var current: Token { tokens[position].token }
    private var column: Int { tokens[position].column }

    private mutating func advance() { if position < tokens.count - 1 { position += 1 } }

    private mutating func accept(_ symbol: String) -> Bool {
        if current == .symbol(symbol) { advance(); return true }
        return false
    }

    private func failure(_ message: String) -> Failure { Failure(column: column, message: message) }

    private func describe(_ token: Token) -> String {
        switch token {
        case let .identifier(name): return "'\(name)'"
        case let .number(text): return "'\(text)'"
        case let .string(value): return "\"\(value.unicodeScalars.map { $0.escaped(asASCII: false) }.joined())\""
        case let .symbol(symbol): return "'\(symbol)'"
        case .end: return "end of predicate"
        }
    }

    // MARK: - Grammar

    private mutating func parseOr() throws -> QueryCondition {
        var terms = [try parseAnd()]
        while accept("||") { terms.append(try parseAnd()) }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    private mutating func parseAnd() throws -> QueryCondition {
        var terms = [try parseUnary()]
        while accept("&&") { terms.append(try parseUnary()) }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    private mutating func parseUnary() throws -> QueryCondition {
        guard current == .symbol("!") || current == .symbol("(") else { return try parseComparison() }
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else { throw failure("the predicate nests '!' and parentheses more than \(Self.maximumDepth) levels deep") }
        if accept("!") { return .not(try parseUnary()) }
        advance()
        let inner = try parseOr()
        guard accept(")") else { throw failure("expected ')'") }
        return inner
    }

    /// A resolved key path and the schema type it denotes (nil for a relationship's key or `id`),
    /// or a to-many relationship of an object it reaches (`toMany`, with its target; `path` is then
    /// that object's id).
    private struct KeyPath {
        var path: QueryPath
        var type: AttributeType?
        var toMany: (rows: QueryToMany, target: Entity)?
    }

    private mutating func parseComparison() throws -> QueryCondition {
        let pathColumn = column
        if current == .symbol("[") { return try parseMembership() }
        // `true` and `false` alone are Swift's literals (an attribute so named is `$0.true`).
        if case let .identifier(word) = current, word == "true" || word == "false" {
            advance()
            return .constant(word == "true")
        }
        guard case .identifier = current else { throw failure("expected a key path such as 'name', found \(describe(current))") }
        let keyPath = try parseKeyPath()
        if let toMany = keyPath.toMany { return try parseToManyTest(toMany.rows, target: toMany.target) }
        var value = QueryExpression.path(keyPath.path)
        if accept(".") {
            guard case let .identifier(method) = current, ["contains", "hasPrefix", "hasSuffix"].contains(method) else {
                throw failure("unsupported member \(describe(current)); supported: contains, hasPrefix, hasSuffix")
            }
            advance()
            guard keyPath.type == .scalar(.string) || keyPath.type == .scalar(.url) else {
                throw Failure(column: pathColumn, message: "'\(method)' applies to String attributes only")
            }
            guard accept("("), case let .string(argument) = current else { throw failure("expected \(method)(\"text\")") }
            advance()
            guard accept(")") else { throw failure("expected ')'") }
            let test: QueryTextTest = method == "contains" ? .contains : method == "hasPrefix" ? .hasPrefix : .hasSuffix
            return .text(test, value, .value(.text(argument), .text))
        }
        var type = keyPath.type
        if accept("%") {
            let integerTypes: [AttributeType?] = [nil, .scalar(.int), .scalar(.int64), .scalar(.int32), .scalar(.int16)]
            guard integerTypes.contains(type), case let .number(text) = current, let divisor = Int64(text), divisor != 0 else {
                throw failure("'%' takes an integer key path and a non-zero whole number, as in 'id % 2 == 0'")
            }
            advance()
            value = .remainder(value, divisor)
            type = .scalar(.int64)
        }
        guard case let .symbol(symbol) = current, let comparison = Self.comparisons[symbol] else {
            guard type == .scalar(.bool) else {
                throw failure("expected a comparison after the key path, found \(describe(current))")
            }
            return .isTrue(value)
        }
        advance()
        let valueColumn = column
        let literal = try self.literal(for: type, kind: keyPath.path.kind, column: valueColumn)
        if case .value(.null, _) = literal, comparison != .equal && comparison != .notEqual {
            throw Failure(column: valueColumn, message: "nil can only be compared with == or !=")
        }
        return .comparison(value, comparison, literal)
    }

    private mutating func parseKeyPath() throws -> KeyPath {
        guard case var .identifier(name) = current else { throw failure("expected a key path") }
        advance()
        if name == "$0" {
            guard accept("."), case let .identifier(next) = current else { throw failure("expected a key path after '$0.'") }
            name = next
            advance()
        }
        let row = frames.count - 1
        var entity = frames[row]
        var hops: [QueryHop] = []
        while true {
            if name == "id" {
                return KeyPath(path: QueryPath(hops: hops, column: "id", kind: .integer, row: row), type: nil)
            }
            if let attribute = entity.attributes.first(where: { $0.name == name }) {
                guard !attribute.isTransient else { throw failure("'\(name)' is transient and not stored; it cannot be used in a predicate") }
                return KeyPath(path: QueryPath(hops: hops, column: attribute.columnName, kind: Self.kind(of: attribute.type), row: row), type: attribute.type)
            }
            guard let relationship = entity.relationships.first(where: { $0.name == name }) else {
                let names = ["id"] + entity.attributes.map(\.name) + entity.relationships.map(\.name)
                throw failure("'\(entity.name)' has no attribute or relationship '\(name)'\(NearMiss.hint(for: name, among: names))")
            }
            let owner = QueryPath.id(ofObjectReachedThrough: hops, fromRow: row)
            if relationship.cardinality == .toMany, let toMany = rows(of: relationship, owner: owner) {
                return KeyPath(path: owner, type: nil, toMany: toMany)
            }
            guard case let .foreignKey(column, _) = relationship.storage, let target = schema.entity(named: relationship.target) else {
                throw failure("'\(entity.name).\(name)' is not a to-one relationship stored on '\(entity.name)' nor a to-many one; predicates can follow only those")
            }
            // `category.name` continues into the target; `category` alone compares the key.
            guard current == .symbol("."), case let .identifier(next) = tokens[position + 1].token,
                  !["contains", "hasPrefix", "hasSuffix"].contains(next) else {
                return KeyPath(path: QueryPath(hops: hops, column: column, kind: .integer, row: row), type: nil)
            }
            advance()
            advance()
            hops.append(QueryHop(foreignKey: column, table: target.tableName))
            entity = target
            name = next
        }
    }

    /// The rows holding `owner` (an object's id) for a to-many relationship, and its target.
    private func rows(of relationship: Relationship, owner: QueryPath) -> (rows: QueryToMany, target: Entity)? {
        guard let target = schema.entity(named: relationship.target) else { return nil }
        switch schema.links(of: relationship) {
        case let .inverseColumn(column)?:
            return (QueryToMany(table: target.tableName, column: column, owner: owner), target)
        case let .joinTable(name, own, other)?:
            return (QueryToMany(table: name, column: own, joined: QueryHop(foreignKey: other, table: target.tableName), owner: owner), target)
        case .column?, nil:
            return nil
        }
    }

    /// After a to-many relationship: `.count` compared with a whole number, `.isEmpty`,
    /// `.contains { … }` or `.allSatisfy { … }` (whose condition reads the related object as `$0`).
    /// Of an object reached through a to-one relationship, each is what `#Predicate` makes of it
    /// with `== true` (`$0.manager?.reports.allSatisfy { … } == true`): false where there is no such
    /// object, and the count nil.
    private mutating func parseToManyTest(_ rows: QueryToMany, target: Entity) throws -> QueryCondition {
        guard accept("."), case let .identifier(member) = current, ["count", "isEmpty", "contains", "allSatisfy"].contains(member) else {
            throw failure("expected '.count', '.isEmpty', '.contains { … }' or '.allSatisfy { … }' after a to-many relationship, found \(describe(current))")
        }
        advance()
        switch member {
        case "isEmpty":
            return .comparison(.count(rows), .equal, .value(.integer(0), .integer))
        case "count":
                guard case let .symbol(symbol) = current, let comparison = Self.comparisons[symbol] else { throw failure("expected a comparison after '.count', found \(describe(current))") }
            advance()
            guard case let .number(text) = current, let count = Int64(text) else { throw failure("expected a whole number to compare '.count' with, found \(describe(current))") }
            advance()
            return .comparison(.count(rows), comparison, .value(.integer(count), .integer))
        default:
            guard accept("{") else { throw failure("expected '{' after '.\(member)'") }
            depth += 1
            defer { depth -= 1 }
            guard depth <= Self.maximumDepth else { throw failure("the predicate nests more than \(Self.maximumDepth) levels deep") }
            frames.append(target)
            let inner = try parseOr()
            frames.removeLast()
            guard accept("}") else { throw failure("expected '}'") }
            if member == "contains" { return .exists(rows, inner) }
            let allSatisfy = QueryCondition.not(.exists(rows, .not(inner)))
            guard rows.ownerMayBeMissing else { return allSatisfy }
            return .and([.not(.comparison(.path(rows.owner), .equal, .value(.null, .integer))), allSatisfy])
        }
    }

    /// `[literal, …].contains(keyPath)`: the literals are read once the key path says their type.
    private mutating func parseMembership() throws -> QueryCondition {
        advance()
        var elements: [Int] = []
        while current != .symbol("]") {
            elements.append(position)
            guard current != .end else { throw failure("expected ']'") }
            advance()
            if case .symbol(".") = tokens[position - 1].token, case .identifier = current { advance() }  // `.enumCase`
            guard accept(",") || current == .symbol("]") else { throw failure("expected ',' or ']' in the list, found \(describe(current))") }
        }
        advance()
        guard accept("."), current == .identifier("contains") else { throw failure("expected '.contains(' after the list") }
        advance()
        guard accept("(") else { throw failure("expected '(' after 'contains'") }
        let keyPathColumn = column
        let keyPath = try parseKeyPath()
        guard keyPath.toMany == nil else { throw Failure(column: keyPathColumn, message: "a list can contain an attribute's value, not a to-many relationship") }
        guard accept(")") else { throw failure("expected ')'") }
        let end = position
        var values: [SQLValue] = []
        for element in elements {
            position = element
            let elementColumn = column
            guard case let .value(value, _) = try literal(for: keyPath.type, kind: keyPath.path.kind, column: elementColumn) else {
                throw Failure(column: elementColumn, message: "expected a literal in the list")
            }
            values.append(value)
        }
        position = end
        return .oneOf(.path(keyPath.path), values, keyPath.path.kind)
    }

    private static func kind(of type: AttributeType) -> QueryValueKind {
        switch type {
        case .enumeration: return .text
        case let .scalar(scalar):
            switch scalar {
            case .string, .url: return .text
            case .int, .int64, .int32, .int16: return .integer
            case .double, .float: return .real
            case .bool: return .bool
            case .date: return .date
            case .uuid: return .uuid
            case .data: return .blob
            case .decimal: return .decimal
            }
        }
    }

    /// The literal at the cursor, converted to the key path's type exactly as Swift would, as the stored value.
    /// `type` is nil for `id` and a relationship's key.
    private mutating func literal(for type: AttributeType?, kind: QueryValueKind, column: Int) throws -> QueryExpression {
        let token = current
        advance()
        let typeName = type.map(Self.typeName) ?? "Int64"
        func mismatch() -> Failure {
            Failure(column: column, message: "\(describe(token)) does not fit the type of the key path (\(typeName))")
        }
        switch token {
        case .identifier("nil"): return .value(.null, kind)
        case .identifier("true"), .identifier("false"):
            guard type == .scalar(.bool) else { throw mismatch() }
            return .value(.integer(token == .identifier("true") ? 1 : 0), kind)
        case let .number(text):
            switch type {
            case nil, .scalar(.int)?, .scalar(.int64)?, .scalar(.int32)?, .scalar(.int16)?:
                let range: ClosedRange<Int64> = switch type {
                case .scalar(.int32)?: Int64(Int32.min)...Int64(Int32.max)
                case .scalar(.int16)?: Int64(Int16.min)...Int64(Int16.max)
                default: Int64.min...Int64.max
                }
                guard text.allSatisfy({ $0 == "-" || $0.isASCII && $0.isNumber }) else { throw Failure(column: column, message: "\(text) is not a whole number, as \(typeName) needs") }
                guard let number = Int64(text), range.contains(number) else { throw Failure(column: column, message: "\(text) is out of the range of \(typeName)") }
                return .value(.integer(number), kind)
            case .scalar(.double)?, .scalar(.float)?:
                let number = type == .scalar(.float) ? Float(text).map(Double.init) : Double(text)
                guard let number, number.isFinite else { throw Failure(column: column, message: "\(text) is out of the range of \(typeName)") }
                return .value(.real(number), kind)
            case .scalar(.decimal)?:
                guard let digits = Self.decimalDigits(text) else { throw Failure(column: column, message: "\(text) is not a decimal number of at most 38 significant digits") }
                return .value(.text(digits), kind)
            case .scalar(.date)?:
                throw Failure(column: column, message: "write a Date as an ISO 8601 string, such as \"2024-01-31T12:00:00Z\"")
            default: throw mismatch()
            }
        case let .string(text):
            switch type {
            case .scalar(.string)?, .scalar(.url)?: return .value(.text(text), kind)
            case .scalar(.uuid)?:
                guard let uuid = UUID(uuidString: text) else { throw Failure(column: column, message: "\"\(text)\" is not a UUID") }
                return .value(.text(uuid.uuidString), kind)
            case .scalar(.date)?:
                guard let date = ISO8601Date.date(from: text) else {
                    throw Failure(column: column, message: "\"\(text)\" is not an ISO 8601 date such as \"2024-01-31\" or \"2024-01-31T12:00:00Z\"")
                }
                return .value(.real(date.timeIntervalSinceReferenceDate), kind)
            case let .enumeration(name)?:
                let cases = schema.enums.first { $0.name == name }?.cases ?? []
                guard cases.contains(text) else { throw Failure(column: column, message: "\"\(text)\" is not a case of '\(name)'\(NearMiss.hint(for: text, among: cases))") }
                return .value(.text(text), kind)
            default: throw mismatch()
            }
        case .symbol("."):
            guard case let .enumeration(name)? = type, case let .identifier(caseName) = current else { throw mismatch() }
            advance()
            let cases = schema.enums.first { $0.name == name }?.cases ?? []
            guard cases.contains(caseName) else { throw Failure(column: column, message: "'.\(caseName)' is not a case of '\(name)'\(NearMiss.hint(for: caseName, among: cases))") }
            return .value(.text(caseName), kind)
        default:
            throw Failure(column: column, message: "expected a literal (a number, \"text\", true, false or nil), found \(describe(token))")
        }
    }

    /// The exact digits of a decimal literal (an exponent is written out), or nil when `Decimal` cannot hold it exactly.
    private static func decimalDigits(_ text: String) -> String? {
        guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), !decimal.isNaN else { return nil }
        let significand = text.split(whereSeparator: { $0 == "e" || $0 == "E" }).first.map(String.init) ?? text
        let digits = significand.filter(\.isNumber).drop { $0 == "0" }
        let significant = significand.contains(".") ? digits.reversed().drop { $0 == "0" }.count : digits.count
        return significant <= 38 ? decimal.description : nil
    }

    private static func typeName(_ type: AttributeType) -> String {
        switch type {
        case let .scalar(scalar): return scalar.rawValue
        case let .enumeration(name): return name
        }
    }
}
