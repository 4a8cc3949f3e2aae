import Foundation
import ModelGenQuery

extension QueryCondition {
    /// The condition, with each test of a value given in place of a missing one (`??`) that the
    /// server cannot hold exactly split in two, so that the constant is never compared in place of
    /// a stored value:
    ///
    ///     T(v ?? f)  →  (v != nil && T(v)) || (v == nil && T(f))
    ///
    /// which is what Swift's `??` means. The constants this is for: a text holding NUL (no
    /// PostgreSQL text holds one, no parameter binds one), `Decimal.nan` (the server orders its NaN
    /// above every number, Swift below), and a `Date` off the microsecond grid or outside the years
    /// the server holds (a bound timestamp is rounded). `T(f)` then tests the constant against a
    /// stored value, which the passes after this one decide exactly (`exactOnMicrosecondGrid`,
    /// `withoutNULConstants`, `withoutDecimalNaNConstants`), or against another constant, which is
    /// decided here as Swift decides it (texts by Unicode scalars, as both stores compare them):
    ///
    ///     ($0.note ?? "a\0") < "ab"   →   ($0.note != nil && $0.note < "ab") || ($0.note == nil && true)
    func splittingUnstorableFallbacks() -> QueryCondition {
        replacingTests { $0.splitAtUnstorableFallbacks() }
    }

    /// This test (a comparison, a text test, a list), split at each unstorable fallback in it.
    private func splitAtUnstorableFallbacks() -> QueryCondition {
        guard let (value, withValue, withFallback) = splitAtFirstUnstorableFallback() else { return decidedOnConstants() ?? self }
        let nothing = QueryExpression.value(.null, value.valueKind)
        return .or([
            .and([.comparison(value, .notEqual, nothing), withValue.splitAtUnstorableFallbacks()]),
            .and([.comparison(value, .equal, nothing), withFallback.splitAtUnstorableFallbacks()]),
        ])
    }

    /// For the first `v ?? f` among this test's operands whose fallback holds an unstorable
    /// constant: `v`, and the test with `v` in its place, and with `f`.
    private func splitAtFirstUnstorableFallback() -> (QueryExpression, QueryCondition, QueryCondition)? {
        switch self {
        case let .comparison(lhs, comparison, rhs):
            if let (value, left, right) = lhs.splitAtUnstorableFallback() { return (value, .comparison(left, comparison, rhs), .comparison(right, comparison, rhs)) }
            if let (value, left, right) = rhs.splitAtUnstorableFallback() { return (value, .comparison(lhs, comparison, left), .comparison(lhs, comparison, right)) }
        case let .text(test, text, part):
            if let (value, left, right) = text.splitAtUnstorableFallback() { return (value, .text(test, left, part), .text(test, right, part)) }
            if let (value, left, right) = part.splitAtUnstorableFallback() { return (value, .text(test, text, left), .text(test, text, right)) }
        case let .oneOf(subject, values, kind):
            if let (value, left, right) = subject.splitAtUnstorableFallback() { return (value, .oneOf(left, values, kind), .oneOf(right, values, kind)) }
        case .isTrue, .constant, .and, .or, .not, .exists:
            break
        }
        return nil
    }

    /// A test of constants alone, one of which the server cannot hold, decided as Swift decides it;
    /// nil for any other test.
    private func decidedOnConstants() -> QueryCondition? {
        switch self {
        case let .comparison(.value(lhs, kind), comparison, .value(rhs, rhsKind)) where kind == rhsKind && (lhs.isUnstorable(kind) || rhs.isUnstorable(kind)):
            guard lhs != .null, rhs != .null else {
                // Nil against a value: `==` false, `!=` true, an ordering false (Swift's optionals).
                return .constant(comparison == .notEqual)
            }
            guard let lhs = SwiftConstant(lhs, kind), let rhs = SwiftConstant(rhs, kind) else { return nil }
            return .constant(lhs.compare(comparison, rhs))
        case let .text(test, .value(.text(text), .text), .value(.text(part), .text)) where SQLValue.text(text).isUnstorable(.text) || SQLValue.text(part).isUnstorable(.text):
            let (whole, piece) = (Array(text.unicodeScalars), Array(part.unicodeScalars))
            switch test {
            case .contains: return .constant(piece.isEmpty || whole.indices.contains { whole[$0...].starts(with: piece) })
            case .hasPrefix: return .constant(whole.starts(with: piece))
            case .hasSuffix: return .constant(whole.reversed().starts(with: piece.reversed()))
            }
        case let .oneOf(.value(value, kind), values, valueKind) where kind == valueKind && value.isUnstorable(kind):
            guard let constant = SwiftConstant(value, kind) else { return nil }
            return .constant(values.contains { $0 != .null && SwiftConstant($0, kind).map { constant.compare(.equal, $0) } == true })
        default:
            return nil
        }
    }
}

/// A constant of a predicate as the Swift value it stands for, compared with Swift's operators:
/// a text by its Unicode scalars (as both stores compare texts), a `Decimal` and a `Date` as
/// themselves (`Decimal.nan` equal to itself and below every number).
private enum SwiftConstant {
    case text(ScalarText)
    case decimal(Decimal)
    case date(Date)

    /// A text compared by its Unicode scalars, one after another.
    struct ScalarText: Comparable {
        var scalars: [Unicode.Scalar]
        static func < (lhs: ScalarText, rhs: ScalarText) -> Bool { lhs.scalars.lexicographicallyPrecedes(rhs.scalars) }
    }

    init?(_ value: SQLValue, _ kind: QueryValueKind) {
        switch (value, kind) {
        case let (.text(text), .text): self = .text(ScalarText(scalars: Array(text.unicodeScalars)))
        case (.text("NaN"), .decimal): self = .decimal(.nan)
        case let (.text(digits), .decimal):
            guard let decimal = Decimal(string: digits, locale: Locale(identifier: "en_US_POSIX")) else { return nil }
            self = .decimal(decimal)
        case let (.real(seconds), .date): self = .date(Date(timeIntervalSinceReferenceDate: seconds))
        default: return nil
        }
    }

    /// `self comparison other`, for two constants of one kind (false for two of different kinds).
    func compare(_ comparison: QueryComparison, _ other: SwiftConstant) -> Bool {
        switch (self, other) {
        case let (.text(a), .text(b)): Self.compare(a, comparison, b)
        case let (.decimal(a), .decimal(b)): Self.compare(a, comparison, b)
        case let (.date(a), .date(b)): Self.compare(a, comparison, b)
        default: false
        }
    }

    /// Swift's own operators of `Value`.
    private static func compare<Value: Comparable>(_ a: Value, _ comparison: QueryComparison, _ b: Value) -> Bool {
        switch comparison {
        case .equal: a == b
        case .notEqual: a != b
        case .less: a < b
        case .lessOrEqual: a <= b
        case .greater: a > b
        case .greaterOrEqual: a >= b
        }
    }
}

extension QueryExpression {
    /// For the first `v ?? f` in this expression whose fallback holds a constant the server cannot
    /// hold exactly: `v`, and this expression with `v` in its place, and with `f`.
    fileprivate func splitAtUnstorableFallback() -> (QueryExpression, QueryExpression, QueryExpression)? {
        guard case let .coalesce(value, fallback) = self else { return nil }
        if fallback.holdsUnstorableConstant { return (value, value, fallback) }
        return value.splitAtUnstorableFallback().map { ($0.0, .coalesce($0.1, fallback), .coalesce($0.2, fallback)) }
    }

    /// Whether some value of this expression is a constant the server cannot hold exactly.
    private var holdsUnstorableConstant: Bool {
        switch self {
        case let .value(value, kind): value.isUnstorable(kind)
        case let .coalesce(value, fallback): value.holdsUnstorableConstant || fallback.holdsUnstorableConstant
        case .path, .remainder, .count: false
        }
    }

    /// The kind of this expression's values.
    fileprivate var valueKind: QueryValueKind {
        switch self {
        case let .path(path): path.kind
        case let .value(_, kind): kind
        case let .coalesce(value, _): value.valueKind
        case .remainder, .count: .integer
        }
    }
}

extension SQLValue {
    /// Whether the server cannot hold this constant of `kind` exactly: one a parameter cannot bind
    /// (a text holding NUL, `Decimal.nan`, a date outside the years 1 to 9999: what a save refuses),
    /// or a date off the microsecond grid, which a bound timestamp rounds.
    fileprivate func isUnstorable(_ kind: QueryValueKind) -> Bool {
        if kind == .date, case .real = self { return !QueryExpression.value(self, .date).isDateConstantOnGrid }
        do {
            _ = try PostgresColumnType(kind).text(for: self)
            return false
        } catch {
            return true
        }
    }
}
