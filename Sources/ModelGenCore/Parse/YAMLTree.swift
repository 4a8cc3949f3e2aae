import Foundation
import Yams

/// A YAML node with its position, the only YAML shape the rest of the pipeline sees.
public struct YAMLNode: Sendable {
    public enum Value: Sendable {
        /// A scalar's text; `isPlain` is false when the scalar was quoted or a block scalar.
        case scalar(String, isPlain: Bool)
        case sequence([YAMLNode])
        case mapping([(key: YAMLNode, value: YAMLNode)])
    }

    public var value: Value
    public var location: SourceLocation

    /// The scalar's text, or nil for a collection.
    public var scalar: String? {
        if case let .scalar(text, _) = value { return text }
        return nil
    }

    /// True for an empty plain scalar, `~` or `null`: YAML's spellings of nothing.
    public var isNull: Bool {
        if case let .scalar(text, isPlain) = value, isPlain {
            return text.isEmpty || text == "~" || text == "null" || text == "Null" || text == "NULL"
        }
        return false
    }

    /// What kind of node this is, for messages such as "expected a mapping, found a sequence".
    public var kindDescription: String {
        switch value {
        case .scalar: return isNull ? "an empty value" : "a scalar"
        case .sequence: return "a sequence"
        case .mapping: return "a mapping"
        }
    }
}

/// Reads schema text into a located YAML tree, never crashing and never hanging.
///
/// Guards: bytes that are not UTF-8 are reported at their position; libyaml limits nesting
/// (1,000 levels); aliases are expanded under a node budget, so an alias-expansion bomb is
/// an error rather than an exhausted machine.
public enum YAMLReader {
    /// The most nodes a document may expand to (aliases included).
    public static let nodeBudget = 2_000_000

    public static func read(_ bytes: [UInt8], file: String) -> Result<YAMLNode, Diagnostic> {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            let offset = firstInvalidUTF8Offset(bytes)
            let (line, column) = lineAndColumn(ofByte: offset, in: bytes)
            return .failure(.error("the schema is not valid UTF-8 text (invalid byte 0x\(String(bytes[offset], radix: 16, uppercase: true)))",
                                   at: SourceLocation(file: file, line: line, column: column)))
        }
        if text.unicodeScalars.contains(where: { $0.value == 0 }) {
            let offset = bytes.firstIndex(of: 0) ?? 0
            let (line, column) = lineAndColumn(ofByte: offset, in: bytes)
            return .failure(.error("the schema contains a NUL byte", at: SourceLocation(file: file, line: line, column: column)))
        }
        let start = SourceLocation(file: file, line: 1, column: 1)
        let root: Node?
        do {
            root = try Yams.compose(yaml: text, .basic)
        } catch let error as YamlError {
            return .failure(diagnostic(for: error, file: file, bytes: bytes))
        } catch {
            return .failure(.error("cannot read YAML: \(error)", at: start))
        }
        guard let root else {
            return .failure(.error("the schema file is empty; it needs at least 'schema:' and 'entities:'", at: start))
        }
        var budget = nodeBudget
        do {
            return .success(try convert(root, file: file, budget: &budget))
        } catch let overflow as BudgetExceeded {
            return .failure(.error("the document expands to more than \(nodeBudget) YAML nodes (an alias-expansion bomb?); write the schema out without such aliases", at: overflow.location))
        } catch {
            return .failure(.error("cannot read YAML: \(error)", at: start))
        }
    }

    private struct BudgetExceeded: Error {
        var location: SourceLocation
    }

    private static func convert(_ node: Node, file: String, budget: inout Int) throws -> YAMLNode {
        let location = SourceLocation(file: file, line: node.mark?.line ?? 1, column: node.mark?.column ?? 1)
        budget -= 1
        if budget < 0 { throw BudgetExceeded(location: location) }
        switch node {
        case let .scalar(scalar):
            return YAMLNode(value: .scalar(scalar.string, isPlain: scalar.style == .plain), location: location)
        case let .sequence(sequence):
            var items: [YAMLNode] = []
            for item in sequence {
                items.append(try convert(item, file: file, budget: &budget))
            }
            return YAMLNode(value: .sequence(items), location: location)
        case let .mapping(mapping):
            var pairs: [(key: YAMLNode, value: YAMLNode)] = []
            for (key, value) in mapping {
                pairs.append((try convert(key, file: file, budget: &budget), try convert(value, file: file, budget: &budget)))
            }
            return YAMLNode(value: .mapping(pairs), location: location)
        case let .alias(alias):
            let aliasLocation = SourceLocation(file: file, line: alias.mark?.line ?? 1, column: alias.mark?.column ?? 1)
            return YAMLNode(value: .scalar("*", isPlain: false), location: aliasLocation)
        }
    }

    private static func diagnostic(for error: YamlError, file: String, bytes: [UInt8]) -> Diagnostic {
        func located(_ mark: Mark) -> SourceLocation {
            SourceLocation(file: file, line: max(1, mark.line), column: max(1, mark.column))
        }
        switch error {
        case let .scanner(context, problem, mark, _), let .parser(context, problem, mark, _), let .composer(context, problem, mark, _):
            let while_ = context.map { " \($0.text)" } ?? ""
            return .error("invalid YAML: \(problem)\(while_)", at: located(mark))
        case let .reader(problem, offset, _, _):
            let (line, column) = lineAndColumn(ofByte: offset ?? 0, in: bytes)
            return .error("invalid YAML: \(problem)", at: SourceLocation(file: file, line: line, column: column))
        case let .duplicatedKeysInMapping(duplicates, context):
            let keys = duplicates.map { "'\($0)'" }.joined(separator: ", ")
            return .error("duplicate key \(keys) in a mapping; each key may appear once", at: located(context.mark))
        default:
            return .error("invalid YAML: \(error)", at: SourceLocation(file: file, line: 1, column: 1))
        }
    }

    /// The offset of the first byte that does not belong to a well-formed UTF-8 sequence.
    private static func firstInvalidUTF8Offset(_ bytes: [UInt8]) -> Int {
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            let length: Int
            var low: UInt8 = 0x80, high: UInt8 = 0xBF
            switch lead {
            case 0x00...0x7F: length = 1
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE, 0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return index
            }
            for position in 1..<length {
                guard index + position < bytes.count else { return index }
                let byte = bytes[index + position]
                let (minimum, maximum) = position == 1 ? (low, high) : (UInt8(0x80), UInt8(0xBF))
                guard byte >= minimum && byte <= maximum else { return index }
            }
            index += length
        }
        return max(0, bytes.count - 1)
    }

    /// 1-based line and column (in Unicode scalars, counting invalid bytes as one) of a byte offset.
    static func lineAndColumn(ofByte offset: Int, in bytes: [UInt8]) -> (Int, Int) {
        var line = 1, column = 1
        for byte in bytes.prefix(max(0, offset)) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }
}
