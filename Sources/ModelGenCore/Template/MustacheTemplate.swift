/// A [Mustache](https://mustache.github.io/mustache.5.html) template: the part of the language a code
/// generator needs, rendered over a typed ``TemplateValue`` context.
///
/// Supported: variables `{{name}}` (and `{{{name}}}`, `{{&name}}`, the same thing here: nothing is
/// HTML-escaped, the output is Swift), dotted names `{{a.b}}` and `{{.}}`, sections
/// `{{#name}}…{{/name}}`, inverted sections `{{^name}}…{{/name}}`, comments `{{! … }}` and pragmas
/// `{{% … }}` (ignored). A line holding nothing but one section, inverted-section, closing, comment or
/// pragma tag is removed with its line break, as the specification's "standalone" rule says.
/// Partials, blocks and delimiter changes are rejected with their location: a template is one file.
public struct MustacheTemplate: Sendable {
    /// Where and why a template cannot be parsed.
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public var message: String
        /// 1-based line and column of the offending tag.
        public var line: Int
        public var column: Int

        public var description: String { "\(line):\(column): \(message)" }
    }

    indirect enum Node: Sendable {
        case text(String)
        case variable(path: [String])
        case section(path: [String], inverted: Bool, body: [Node])
    }

    let nodes: [Node]

    /// Parses `text`; throws the first error with its line and column.
    public init(_ text: String) throws(ParseError) {
        var parser = Parser(bytes: Array(text.utf8))
        nodes = try parser.parse()
    }

    /// Renders the template with `context` as the outermost value.
    public func render(_ context: TemplateValue) -> String {
        var output = ""
        var stack = [context]
        Self.render(nodes, stack: &stack, into: &output)
        return output
    }

    private static func render(_ nodes: [Node], stack: inout [TemplateValue], into output: inout String) {
        for node in nodes {
            switch node {
            case let .text(text):
                output += text
            case let .variable(path):
                switch lookUp(path, in: stack) {
                case let .text(text)?: output += text
                case let .bool(flag)?: output += flag ? "true" : "false"
                case .list?, .object?, nil: break
                }
            case let .section(path, inverted, body):
                let value = lookUp(path, in: stack)
                if inverted {
                    if !(value?.isTruthy ?? false) { render(body, stack: &stack, into: &output) }
                    continue
                }
                guard let value, value.isTruthy else { continue }
                switch value {
                case let .list(elements):
                    for element in elements {
                        stack.append(element)
                        render(body, stack: &stack, into: &output)
                        stack.removeLast()
                    }
                case .bool:
                    render(body, stack: &stack, into: &output)
                case .text, .object:
                    stack.append(value)
                    render(body, stack: &stack, into: &output)
                    stack.removeLast()
                }
            }
        }
    }

    /// The first name is looked up from the innermost context outwards; the rest inside what it found.
    private static func lookUp(_ path: [String], in stack: [TemplateValue]) -> TemplateValue? {
        guard let first = path.first else { return stack.last }
        for value in stack.reversed() {
            guard case let .object(members) = value, var found = members[first] else { continue }
            for name in path.dropFirst() {
                guard case let .object(members) = found, let member = members[name] else { return nil }
                found = member
            }
            return found
        }
        return nil
    }
}

extension MustacheTemplate {
    /// Turns template bytes into a tree of nodes in one pass.
    struct Parser {
        let bytes: [UInt8]

        /// A section being parsed: its opening tag and the nodes found so far.
        private struct OpenSection {
            var name: String
            var inverted: Bool
            var offset: Int
            var nodes: [Node] = []
        }

        private enum Tag {
            case variable(String)
            case open(String, inverted: Bool)
            case close(String)
            case ignored

            var canStandAlone: Bool {
                if case .variable = self { return false }
                return true
            }
        }

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        mutating func parse() throws(ParseError) -> [Node] {
            var sections = [OpenSection(name: "", inverted: false, offset: 0)]
            var position = 0
            while let open = find("{{", from: position) {
                let (tag, tagEnd) = try readTag(at: open)
                var textEnd = open, next = tagEnd
                if tag.canStandAlone, let (lineStart, lineEnd) = standaloneLine(tagStart: open, tagEnd: tagEnd) {
                    textEnd = lineStart
                    next = lineEnd
                }
                if textEnd > position { sections[sections.count - 1].nodes.append(.text(text(position..<textEnd))) }
                switch tag {
                case let .variable(name):
                    sections[sections.count - 1].nodes.append(.variable(path: try path(name, at: open)))
                case let .open(name, inverted):
                    _ = try path(name, at: open)
                    sections.append(OpenSection(name: name, inverted: inverted, offset: open))
                case let .close(name):
                    guard sections.count > 1 else { throw error("{{/\(name)}} closes no section", at: open) }
                    let section = sections.removeLast()
                    guard section.name == name else {
                        let (line, column) = SourceLocation.lineAndColumn(ofByte: section.offset, in: bytes)
                        throw error("{{/\(name)}} does not close {{\(section.inverted ? "^" : "#")\(section.name)}} opened at \(line):\(column)", at: open)
                    }
                    sections[sections.count - 1].nodes.append(.section(path: try path(name, at: section.offset), inverted: section.inverted, body: section.nodes))
                case .ignored:
                    break
                }
                position = next
            }
            if position < bytes.count { sections[sections.count - 1].nodes.append(.text(text(position..<bytes.count))) }
            if let unclosed = sections.last, sections.count > 1 {
                throw error("{{\(unclosed.inverted ? "^" : "#")\(unclosed.name)}} is never closed: add {{/\(unclosed.name)}}", at: unclosed.offset)
            }
            return sections[0].nodes
        }

        /// The tag starting at `open` (which holds `{{`) and the offset just past it.
        private func readTag(at open: Int) throws(ParseError) -> (Tag, Int) {
            if open + 2 < bytes.count, bytes[open + 2] == UInt8(ascii: "{") {
                guard let close = find("}}}", from: open + 3) else { throw error("{{{ is never closed with }}}", at: open) }
                return (.variable(trimmed(open + 3..<close)), close + 3)
            }
            guard let close = find("}}", from: open + 2) else { throw error("{{ is never closed with }}", at: open) }
            let content = trimmed(open + 2..<close)
            let end = close + 2
            guard let sigil = content.first else { throw error("empty tag {{}}: name a value", at: open) }
            let name = String(content.dropFirst()).trimmingSpaces
            switch sigil {
            case "#": return (.open(name, inverted: false), end)
            case "^": return (.open(name, inverted: true), end)
            case "/": return (.close(name), end)
            case "!", "%": return (.ignored, end)
            case "&": return (.variable(name), end)
            case ">": throw error("partials ({{>\(name)}}) are not supported: a template is one file", at: open)
            case "=": throw error("changing delimiters ({{=…=}}) is not supported", at: open)
            case "$", "<": throw error("template inheritance ({{\(sigil)\(name)}}) is not supported", at: open)
            default: return (.variable(content), end)
            }
        }

        /// When the tag is alone on its line (only spaces or tabs around it), the line's start and the
        /// offset after its line break: the whole line is left out of the output.
        private func standaloneLine(tagStart: Int, tagEnd: Int) -> (Int, Int)? {
            var lineStart = tagStart
            while lineStart > 0, bytes[lineStart - 1] == UInt8(ascii: " ") || bytes[lineStart - 1] == UInt8(ascii: "\t") { lineStart -= 1 }
            guard lineStart == 0 || bytes[lineStart - 1] == UInt8(ascii: "\n") else { return nil }
            var lineEnd = tagEnd
            while lineEnd < bytes.count, bytes[lineEnd] == UInt8(ascii: " ") || bytes[lineEnd] == UInt8(ascii: "\t") { lineEnd += 1 }
            if lineEnd == bytes.count { return (lineStart, lineEnd) }
            if bytes[lineEnd] == UInt8(ascii: "\n") { return (lineStart, lineEnd + 1) }
            if bytes[lineEnd] == UInt8(ascii: "\r"), lineEnd + 1 < bytes.count, bytes[lineEnd + 1] == UInt8(ascii: "\n") { return (lineStart, lineEnd + 2) }
            return nil
        }

        /// `a.b` → `["a", "b"]`; `.` → `[]` (the current value).
        private func path(_ name: String, at offset: Int) throws(ParseError) -> [String] {
            if name == "." { return [] }
            let components = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard !name.isEmpty, components.allSatisfy({ !$0.isEmpty && !$0.contains(where: \.isWhitespace) }) else {
                throw error("'\(name)' is not a name: use letters, digits and '_', dotted for members", at: offset)
            }
            return components
        }

        private func find(_ needle: StaticString, from start: Int) -> Int? {
            let count = needle.utf8CodeUnitCount
            return needle.withUTF8Buffer { needle -> Int? in
                var index = start
                while index + count <= bytes.count {
                    if bytes[index] == needle[0], (1..<count).allSatisfy({ bytes[index + $0] == needle[$0] }) { return index }
                    index += 1
                }
                return nil
            }
        }

        private func text(_ range: Range<Int>) -> String {
            String(decoding: bytes[range], as: UTF8.self)
        }

        private func trimmed(_ range: Range<Int>) -> String {
            text(range).trimmingSpaces
        }

        private func error(_ message: String, at offset: Int) -> ParseError {
            let (line, column) = SourceLocation.lineAndColumn(ofByte: offset, in: bytes)
            return ParseError(message: message, line: line, column: column)
        }
    }
}

private extension String {
    var trimmingSpaces: String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }
}
