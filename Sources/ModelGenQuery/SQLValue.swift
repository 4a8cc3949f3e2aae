/// A value bound to a statement or read from a row: SQLite's five storage classes, which the
/// PostgreSQL backend maps onto its own types.
public enum SQLValue: Equatable, Hashable, Sendable {
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

    /// Whether the two hold the same bits: `==` compares as Swift does, and takes `-0.0` for `0.0`.
    public func isIdentical(to other: SQLValue) -> Bool {
        if case let (.real(a), .real(b)) = (self, other) { return a.bitPattern == b.bitPattern }
        return self == other
    }
}
