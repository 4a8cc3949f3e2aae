/// Translates a predicate written like the body of a Swift `#Predicate` into an SQLite condition
/// on an entity's table, for `modelgen delete --where`.
///
///     visited == true
///     $0.name.hasPrefix("A") && (weight > 10 || diet == "carnivorous")
///     category.name == "Mammal"          // through a to-one relationship
///     category == nil
///
/// Grammar: `||`, `&&`, `!`, parentheses; comparisons `== != < <= > >=` between a key path
/// (optionally `% n` for integers: `id % 2 == 0`) and a literal (`12`, `1.5`, `"text"`, `true`, `false`, `nil`); `.contains`, `.hasPrefix`, `.hasSuffix`
/// on strings; a bare Bool key path. `==` and `!=` treat nil as Swift does (`IS`, `IS NOT`).
/// Anything else is an error naming the construct, never a silently different condition.
public struct WhereClauseTranslator {
    public struct Failure: Error, Equatable, CustomStringConvertible {
        /// 1-based column in the predicate text.
        public var column: Int
        public var message: String
        public var description: String { "predicate:1:\(column): error: \(message)" }
    }

    private enum Token: Equatable {
        case identifier(String), integer(Int64), real(Double), string(String)
        case symbol(String)
        case end
    }

    private let schema: ModelSchema
    private let entity: Entity
    private let dialect = SQLDialect.sqlite
    private var tokens: [(token: Token, column: Int)] = []
    private var position = 0

    private init(schema: ModelSchema, entity: Entity) {
        self.schema = schema
        self.entity = entity
    }

    /// The SQL condition for `text` on `entity`'s table (columns unqualified).
    public static func translate(_ text: String, entity: Entity, schema: ModelSchema) -> Result<String, Failure> {
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
        while index < characters.count {
            let c = characters[index]
            let column = index + 1
            if c == " " || c == "\t" || c == "\n" { index += 1; continue }
            if isIdentifierStart(c) {
                var end = index
                while end < characters.count && (isIdentifierStart(characters[end]) || isDigit(characters[end])) { end += 1 }
                result.append((.identifier(String(String.UnicodeScalarView(characters[index..<end]))), column))
                index = end
            } else if isDigit(c) || (c == "-" && index + 1 < characters.count && isDigit(characters[index + 1])) {
                var end = index + 1
                while end < characters.count && (isDigit(characters[end]) || characters[end] == ".") { end += 1 }
                let literal = String(String.UnicodeScalarView(characters[index..<end]))
                if let integer = Int64(literal) { result.append((.integer(integer), column)) }
                else if let real = Double(literal) { result.append((.real(real), column)) }
                else { throw Failure(column: column, message: "'\(literal)' is not a number") }
                index = end
            } else if c == "\"" || c == "'" {
                var end = index + 1
                var value = String.UnicodeScalarView()
                while end < characters.count && characters[end] != c {
                    if characters[end] == "\\" && end + 1 < characters.count { end += 1 }
                    value.append(characters[end])
                    end += 1
                }
                guard end < characters.count else { throw Failure(column: column, message: "unterminated string") }
                result.append((.string(String(value)), column))
                index = end + 1
            } else {
                let two = index + 1 < characters.count ? String(String.UnicodeScalarView([c, characters[index + 1]])) : ""
                if ["==", "!=", "<=", ">=", "&&", "||"].contains(two) {
                    result.append((.symbol(two), column))
                    index += 2
                } else if "()<>!.,%".unicodeScalars.contains(c) {
                    result.append((.symbol(String(c)), column))
                    index += 1
                } else {
                    throw Failure(column: column, message: "unexpected character '\(c)'")
                }
            }
        }
        result.append((.end, characters.count + 1))
        return result
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
        case let .integer(value): return "'\(value)'"
        case let .real(value): return "'\(value)'"
        case let .string(value): return "\"\(value)\""
        case let .symbol(symbol): return "'\(symbol)'"
        case .end: return "end of predicate"
        }
    }

    // MARK: - Grammar

    private mutating func parseOr() throws -> String {
        var terms = [try parseAnd()]
        while accept("||") { terms.append(try parseAnd()) }
        return terms.count == 1 ? terms[0] : "(" + terms.joined(separator: " OR ") + ")"
    }

    private mutating func parseAnd() throws -> String {
        var terms = [try parseUnary()]
        while accept("&&") { terms.append(try parseUnary()) }
        return terms.count == 1 ? terms[0] : "(" + terms.joined(separator: " AND ") + ")"
    }

    private mutating func parseUnary() throws -> String {
        if accept("!") { return "NOT " + (try parseUnary()) }
        if accept("(") {
            let inner = try parseOr()
            guard accept(")") else { throw failure("expected ')'") }
            return "(" + inner + ")"
        }
        return try parseComparison()
    }

    /// A resolved key path: the SQL expression and the attribute type it denotes.
    private struct KeyPath {
        var sql: String
        var type: AttributeType?
        var isRelationship: Bool
        /// Wraps a condition on `sql` so that it applies through to-one relationships.
        var wrap: (String) -> String
    }

    private mutating func parseComparison() throws -> String {
        let pathColumn = column
        guard case .identifier = current else { throw failure("expected a key path such as 'name', found \(describe(current))") }
        var path = try parseKeyPath()
        if accept(".") {
            guard case let .identifier(method) = current, ["contains", "hasPrefix", "hasSuffix"].contains(method) else {
                throw failure("unsupported member \(describe(current)); supported: contains, hasPrefix, hasSuffix")
            }
            advance()
            guard path.type == .scalar(.string) || path.type == .scalar(.url) else {
                throw Failure(column: pathColumn, message: "'\(method)' applies to String attributes only")
            }
            guard accept("("), case let .string(argument) = current else { throw failure("expected \(method)(\"text\")") }
            advance()
            guard accept(")") else { throw failure("expected ')'") }
            let literal = dialect.literal(argument)
            let condition = switch method {
            case "contains": "instr(\(path.sql), \(literal)) > 0"
            case "hasPrefix": "substr(\(path.sql), 1, length(\(literal))) = \(literal)"
            default: "substr(\(path.sql), -length(\(literal))) = \(literal)"
            }
            return path.wrap(condition)
        }
        if accept("%") {
            let integerTypes: [AttributeType] = [.scalar(.int), .scalar(.int64), .scalar(.int32), .scalar(.int16)]
            guard integerTypes.contains(where: { $0 == path.type }), case let .integer(divisor) = current, divisor != 0 else {
                throw failure("'%' takes an integer key path and a non-zero whole number, as in 'id % 2 == 0'")
            }
            advance()
            path.sql = "(\(path.sql) % \(divisor))"
        }
        let operators = ["==": "IS", "!=": "IS NOT", "<": "<", "<=": "<=", ">": ">", ">=": ">="]
        guard case let .symbol(symbol) = current, let sqlOperator = operators[symbol] else {
            guard path.type == .scalar(.bool) else {
                throw failure("expected a comparison after the key path, found \(describe(current))")
            }
            return path.wrap("\(path.sql) = 1")
        }
        advance()
        let valueColumn = column
        let value = try literal(for: &path, column: valueColumn)
        if value == "NULL" && !["IS", "IS NOT"].contains(sqlOperator) {
            throw Failure(column: valueColumn, message: "nil can only be compared with == or !=")
        }
        return path.wrap("\(path.sql) \(sqlOperator) \(value)")
    }

    private mutating func parseKeyPath() throws -> KeyPath {
        guard case var .identifier(name) = current else { throw failure("expected a key path") }
        advance()
        if name == "$0" {
            guard accept("."), case let .identifier(next) = current else { throw failure("expected a key path after '$0.'") }
            name = next
            advance()
        }
        var entity = self.entity
        var wrappers: [(String) -> String] = []
        while true {
            if name == "id" {
                return finish(KeyPath(sql: "id", type: .scalar(.int64), isRelationship: false, wrap: { $0 }), wrappers)
            }
            if let attribute = entity.attributes.first(where: { $0.name == name }) {
                guard !attribute.isTransient else { throw failure("'\(name)' is transient and not stored; it cannot be used in a predicate") }
                return finish(KeyPath(sql: dialect.quote(attribute.columnName), type: attribute.type, isRelationship: false, wrap: { $0 }), wrappers)
            }
            guard let relationship = entity.relationships.first(where: { $0.name == name }) else {
                let names = ["id"] + entity.attributes.map(\.name) + entity.relationships.map(\.name)
                throw failure("'\(entity.name)' has no attribute or relationship '\(name)'\(NearMiss.hint(for: name, among: names))")
            }
            guard case let .foreignKey(column, _) = relationship.storage, let target = schema.entity(named: relationship.target) else {
                throw failure("'\(entity.name).\(name)' is not a to-one relationship stored on '\(entity.name)'; predicates can follow only those")
            }
            // `category.name` continues into the target; `category` alone compares the key.
            guard current == .symbol("."), case let .identifier(next) = tokens[position + 1].token,
                  !["contains", "hasPrefix", "hasSuffix"].contains(next) else {
                return finish(KeyPath(sql: dialect.quote(column), type: .scalar(.int64), isRelationship: true, wrap: { $0 }), wrappers)
            }
            advance()
            advance()
            let quotedColumn = dialect.quote(column), table = dialect.quote(target.tableName)
            wrappers.append { "\(quotedColumn) IN (SELECT id FROM \(table) WHERE \($0))" }
            entity = target
            name = next
        }
    }

    private func finish(_ path: KeyPath, _ wrappers: [(String) -> String]) -> KeyPath {
        var path = path
        path.wrap = { condition in wrappers.reversed().reduce(condition) { inner, wrap in wrap(inner) } }
        return path
    }

    /// The literal at the cursor, as SQL, checked against the key path's type.
    private mutating func literal(for path: inout KeyPath, column: Int) throws -> String {
        let token = current
        advance()
        func mismatch() -> Failure {
            Failure(column: column, message: "\(describe(token)) does not fit the type of the key path (\(typeName(path.type)))")
        }
        switch token {
        case .identifier("nil"): return "NULL"
        case .identifier("true"), .identifier("false"):
            guard path.type == .scalar(.bool) else { throw mismatch() }
            return token == .identifier("true") ? "1" : "0"
        case let .integer(value):
            switch path.type {
            case .scalar(.int)?, .scalar(.int64)?, .scalar(.int32)?, .scalar(.int16)?, .scalar(.double)?, .scalar(.float)?, .scalar(.date)?: return String(value)
            default: throw mismatch()
            }
        case let .real(value):
            switch path.type {
            case .scalar(.double)?, .scalar(.float)?, .scalar(.date)?: return "\(value)"
            default: throw mismatch()
            }
        case let .string(text):
            switch path.type {
            case .scalar(.string)?, .scalar(.url)?, .scalar(.uuid)?, .scalar(.decimal)?: return dialect.literal(text)
            case let .enumeration(name)?:
                let cases = schema.enums.first { $0.name == name }?.cases ?? []
                guard cases.contains(text) else { throw Failure(column: column, message: "\"\(text)\" is not a case of '\(name)'\(NearMiss.hint(for: text, among: cases))") }
                return dialect.literal(text)
            default: throw mismatch()
            }
        case .symbol("."):
            guard case let .enumeration(name)? = path.type, case let .identifier(caseName) = current else { throw mismatch() }
            advance()
            let cases = schema.enums.first { $0.name == name }?.cases ?? []
            guard cases.contains(caseName) else { throw Failure(column: column, message: "'.\(caseName)' is not a case of '\(name)'\(NearMiss.hint(for: caseName, among: cases))") }
            return dialect.literal(caseName)
        default:
            throw Failure(column: column, message: "expected a literal (a number, \"text\", true, false or nil), found \(describe(token))")
        }
    }

    private func typeName(_ type: AttributeType?) -> String {
        switch type {
        case let .scalar(scalar)?: return scalar.rawValue
        case let .enumeration(name)?: return name
        case nil: return "unknown"
        }
    }
}
