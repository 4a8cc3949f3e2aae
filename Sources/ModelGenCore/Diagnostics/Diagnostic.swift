/// A message about a schema, printed as `file:line:column: error: message`.
public struct Diagnostic: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Severity: String, Hashable, Sendable {
        case error
        case warning
    }

    public var severity: Severity
    public var location: SourceLocation
    public var message: String

    public init(_ severity: Severity, at location: SourceLocation, _ message: String) {
        self.severity = severity
        self.location = location
        self.message = message
    }

    public static func error(_ message: String, at location: SourceLocation) -> Diagnostic {
        Diagnostic(.error, at: location, message)
    }

    public static func warning(_ message: String, at location: SourceLocation) -> Diagnostic {
        Diagnostic(.warning, at: location, message)
    }

    /// The compiler form: `Zoo.yaml:12:7: error: unknown type 'Strin'; did you mean 'String'?`,
    /// always one line: control characters and line separators the message quotes from the
    /// schema are written `\u{…}` (`Naming.printable`).
    public var description: String { "\(location): \(severity.rawValue): \(Naming.printable(message))" }
}

/// Collects the diagnostics of one compilation, in the order they are found.
public struct DiagnosticCollector: Sendable {
    public private(set) var diagnostics: [Diagnostic] = []

    public init() {}

    public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }

    public mutating func error(_ message: String, at location: SourceLocation) {
        diagnostics.append(.error(message, at: location))
    }

    public mutating func warning(_ message: String, at location: SourceLocation) {
        diagnostics.append(.warning(message, at: location))
    }

    public mutating func append(contentsOf other: [Diagnostic]) {
        diagnostics.append(contentsOf: other)
    }

    /// Diagnostics sorted by position (stable for equal positions), duplicates removed.
    public var sorted: [Diagnostic] {
        var seen: Set<Diagnostic> = []
        return diagnostics.enumerated().sorted(by: { lhs, rhs in
            lhs.element.location == rhs.element.location ? lhs.offset < rhs.offset : lhs.element.location < rhs.element.location
        }).map(\.element).filter { seen.insert($0).inserted }
    }
}
