import CYaml

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
/// The tree is built straight from libyaml's events (the copy Yams vendors as its `CYaml`
/// module): no intermediate document, no tag resolution (the schema language reads scalars as
/// text). Guards: bytes that are not UTF-8 are reported at their position; libyaml limits nesting
/// (1,000 levels); aliases are expanded (a copy of the anchored node) under a node budget, so an
/// alias-expansion bomb is an error rather than an exhausted machine.
public enum YAMLReader {
    /// The most nodes a document may expand to (aliases included).
    public static let nodeBudget = 2_000_000

    /// The byte order mark some editors (Notepad, Visual Studio) put before UTF-8 text: not part
    /// of the text, as the YAML specification says.
    private static let utf8ByteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    public static func read(_ bytes: [UInt8], file: String) -> Result<YAMLNode, Diagnostic> {
        if bytes.starts(with: utf8ByteOrderMark) { return read(Array(bytes.dropFirst(utf8ByteOrderMark.count)), file: file) }
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            return .failure(.error("the schema is UTF-16 text; save it as UTF-8", at: SourceLocation(file: file, line: 1, column: 1)))
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            let offset = firstInvalidUTF8Offset(bytes)
            let (line, column) = SourceLocation.lineAndColumn(ofByte: offset, in: bytes)
            return .failure(.error("the schema is not valid UTF-8 text (invalid byte 0x\(String(bytes[offset], radix: 16, uppercase: true)))",
                                   at: SourceLocation(file: file, line: line, column: column)))
        }
        if text.utf8.contains(0) {
            let offset = bytes.firstIndex(of: 0) ?? 0
            let (line, column) = SourceLocation.lineAndColumn(ofByte: offset, in: bytes)
            return .failure(.error("the schema contains a NUL byte", at: SourceLocation(file: file, line: line, column: column)))
        }
        var builder = TreeBuilder(file: file, bytes: bytes)
        return builder.build()
    }

    /// Turns libyaml's event stream into a `YAMLNode`.
    private struct TreeBuilder {
        /// A collection whose end event has not come yet.
        private struct OpenCollection {
            var isMapping: Bool
            var location: SourceLocation
            var anchor: String?
            var items: [YAMLNode] = []
            /// Nodes in the collection, itself and aliases' expansions included.
            var size = 1
        }

        let file: String
        let bytes: [UInt8]
        private var open: [OpenCollection] = []
        private var root: YAMLNode?
        /// Anchored nodes and their sizes, for the aliases that follow.
        private var anchors: [String: (node: YAMLNode, size: Int)] = [:]
        private var budget = YAMLReader.nodeBudget

        init(file: String, bytes: [UInt8]) {
            self.file = file
            self.bytes = bytes
        }

        mutating func build() -> Result<YAMLNode, Diagnostic> {
            var parser = yaml_parser_t()
            guard yaml_parser_initialize(&parser) == 1 else { return .failure(.error("out of memory reading YAML", at: location(line: 0, column: 0))) }
            defer { yaml_parser_delete(&parser) }
            let input = bytes.isEmpty ? [UInt8(ascii: "\n")] : bytes
            return input.withUnsafeBufferPointer { buffer in
                yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
                yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
                var documents = 0
                while true {
                    var event = yaml_event_t()
                    guard yaml_parser_parse(&parser, &event) == 1 else { return .failure(diagnostic(for: parser)) }
                    defer { yaml_event_delete(&event) }
                    let here = location(line: event.start_mark.line, column: event.start_mark.column)
                    switch event.type {
                    case YAML_STREAM_END_EVENT:
                        guard let root else {
                            return .failure(.error("the schema file is empty; it needs at least 'schema:' and 'entities:'", at: location(line: 0, column: 0)))
                        }
                        return .success(root)
                    case YAML_DOCUMENT_START_EVENT:
                        documents += 1
                        if documents > 1 {
                            return .failure(.error("a second YAML document starts here; a schema file holds one document", at: here))
                        }
                    case YAML_SCALAR_EVENT:
                        let scalar = event.data.scalar
                        let text = String(decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
                        let node = YAMLNode(value: .scalar(text, isPlain: scalar.style == YAML_PLAIN_SCALAR_STYLE), location: here)
                        if let error = add(node, size: 1, anchor: name(scalar.anchor)) { return .failure(error) }
                    case YAML_ALIAS_EVENT:
                        guard let alias = name(event.data.alias.anchor), let anchored = anchors[alias] else {
                            return .failure(.error("unknown alias; define the anchor (&name) before using it (*name)", at: here))
                        }
                        if let error = add(anchored.node, size: anchored.size, anchor: nil, isAliasCopy: true) { return .failure(error) }
                    case YAML_SEQUENCE_START_EVENT:
                        open.append(OpenCollection(isMapping: false, location: here, anchor: name(event.data.sequence_start.anchor)))
                    case YAML_MAPPING_START_EVENT:
                        open.append(OpenCollection(isMapping: true, location: here, anchor: name(event.data.mapping_start.anchor)))
                    case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                        let collection = open.removeLast()
                        let node: YAMLNode
                        if collection.isMapping {
                            if let duplicate = duplicateKey(in: collection.items) { return .failure(duplicate) }
                            let pairs = stride(from: 0, to: collection.items.count - 1, by: 2).map { (key: collection.items[$0], value: collection.items[$0 + 1]) }
                            node = YAMLNode(value: .mapping(pairs), location: collection.location)
                        } else {
                            node = YAMLNode(value: .sequence(collection.items), location: collection.location)
                        }
                        if let error = add(node, size: collection.size, anchor: collection.anchor) { return .failure(error) }
                    default:
                        break
                    }
                }
            }
        }

        /// Adds a finished node of `size` nodes to the open collection (keys and values alternate in
        /// a mapping), or makes it the root; an error when the document grows past the budget.
        /// A node read from events costs one (its children were counted as they came); a copy made by
        /// an alias costs its whole size.
        private mutating func add(_ node: YAMLNode, size: Int, anchor: String?, isAliasCopy: Bool = false) -> Diagnostic? {
            budget -= isAliasCopy ? size : 1
            if budget < 0 {
                return .error("the document expands to more than \(YAMLReader.nodeBudget) YAML nodes (an alias-expansion bomb?); write the schema out without such aliases", at: node.location)
            }
            if let anchor { anchors[anchor] = (node, size) }
            if open.isEmpty {
                root = node
            } else {
                open[open.count - 1].items.append(node)
                open[open.count - 1].size += size
            }
            return nil
        }

        private func name(_ anchor: UnsafeMutablePointer<yaml_char_t>?) -> String? {
            anchor.map { String(cString: $0) }
        }

        /// The second occurrence of a scalar key, pointing back at the first.
        private func duplicateKey(in items: [YAMLNode]) -> Diagnostic? {
            func duplicate(_ first: YAMLNode, _ second: YAMLNode) -> Diagnostic {
                .error("duplicate key '\(second.scalar ?? "")' in a mapping (first at \(first.location.line):\(first.location.column)); each key may appear once", at: second.location)
            }
            let keys = stride(from: 0, to: items.count, by: 2).map { items[$0] }
            // Most mappings have a handful of keys: comparing pairs beats hashing them.
            if keys.count <= 16 {
                for (position, key) in keys.enumerated() {
                    guard let text = key.scalar else { continue }
                    if let first = keys[..<position].first(where: { $0.scalar == text }) { return duplicate(first, key) }
                }
                return nil
            }
            var seen: [String: YAMLNode] = [:]
            for key in keys {
                guard let text = key.scalar else { continue }
                if let first = seen[text] { return duplicate(first, key) }
                seen[text] = key
            }
            return nil
        }

        /// libyaml counts lines and columns from 0.
        private func location(line: Int, column: Int) -> SourceLocation {
            SourceLocation(file: file, line: line + 1, column: column + 1)
        }

        private func diagnostic(for parser: yaml_parser_t) -> Diagnostic {
            let problem = parser.problem.map { String(cString: $0) } ?? "unknown problem"
            switch parser.error {
            case YAML_READER_ERROR:
                let (line, column) = SourceLocation.lineAndColumn(ofByte: parser.problem_offset, in: bytes)
                return .error("invalid YAML: \(problem)", at: SourceLocation(file: file, line: line, column: column))
            case YAML_SCANNER_ERROR, YAML_PARSER_ERROR:
                let context = parser.context.map { " " + String(cString: $0) } ?? ""
                return .error("invalid YAML: \(problem)\(context)", at: location(line: parser.problem_mark.line, column: parser.problem_mark.column))
            default:
                return .error("cannot read YAML: \(problem)", at: location(line: parser.problem_mark.line, column: parser.problem_mark.column))
            }
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
}
