/// A value bound to a statement or read from a row: SQLite's five storage classes, which the
/// PostgreSQL backend maps onto its own types.
///
/// Two values are equal when the store finds them equal, as a unique index and `=` do: texts by
/// their UTF-8 bytes (Swift's `String` would also take texts that differ only in normalization,
/// `"é"` and `"e\u{301}"`, for one, which the store keeps apart), reals by value (`-0.0` is `0.0`).
/// So a set of values holds every value the store tells apart, and no two it takes for one.
public enum SQLValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// The integer held, if this is one.
    public var integer: Int64? {
        if case let .integer(value) = self { return value }
        return nil
    }

    /// Whether the two hold the same bits: `==` compares as the store does, and takes `-0.0` for `0.0`.
    public func isIdentical(to other: SQLValue) -> Bool {
        if case let (.real(a), .real(b)) = (self, other) { return a.bitPattern == b.bitPattern }
        return self == other
    }

    public static func == (lhs: SQLValue, rhs: SQLValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.integer(a), .integer(b)): a == b
        case let (.real(a), .real(b)): a == b
        case let (.text(a), .text(b)): a.utf8.count == b.utf8.count && a.utf8.elementsEqual(b.utf8)
        case let (.blob(a), .blob(b)): a == b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0 as UInt8)
        case let .integer(value): hasher.combine(1 as UInt8); hasher.combine(value)
        case let .real(value): hasher.combine(2 as UInt8); hasher.combine(value)
        case var .text(text):
            hasher.combine(3 as UInt8)
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        case let .blob(bytes): hasher.combine(4 as UInt8); hasher.combine(bytes)
        }
    }
}
