import ModelGenQuery

extension QueryCondition {
    /// The condition, with each comparison of a stored decimal with `Decimal.nan` decided as Swift
    /// decides it on the decimals the store holds. Swift orders `Decimal.nan` below every number and
    /// equal to itself; PostgreSQL orders its `NaN` above every number, so the constant cannot be
    /// bound, and no stored decimal is NaN (a save refuses it). So, for a decimal `d`:
    ///
    ///     d <  .nan, d <= .nan  →  false             d == .nan  →  false
    ///     d >  .nan, d >= .nan  →  d != nil          d != .nan  →  true
    ///     [.nan, x].contains(d)  →  [x].contains(d)
    ///
    /// A NULL decimal (an optional one) gives what the original gives: false for an ordering, `!=` true.
    func withoutDecimalNaNConstants() -> QueryCondition {
        replacingTests { test in
            switch test {
            case let .comparison(decimal, comparison, .value(.text(constant), .decimal)) where decimal.holdsNoNaN && constant == Self.nan:
                Self.decided(decimal, comparison)
            case let .comparison(.value(.text(constant), .decimal), comparison, decimal) where decimal.holdsNoNaN && constant == Self.nan:
                Self.decided(decimal, comparison.mirrored)
            case let .oneOf(decimal, values, .decimal) where decimal.holdsNoNaN:
                .oneOf(decimal, values.filter { $0 != .text(Self.nan) }, .decimal)
            default:
                test
            }
        }
    }

    /// How a predicate binds `Decimal.nan`: its `description`, as every decimal.
    fileprivate static let nan = "NaN"

    /// `decimal comparison Decimal.nan`, for a decimal that is never NaN.
    private static func decided(_ decimal: QueryExpression, _ comparison: QueryComparison) -> QueryCondition {
        switch comparison {
        case .less, .lessOrEqual, .equal: .constant(false)
        case .greater, .greaterOrEqual: .comparison(decimal, .notEqual, .value(.null, .decimal))
        case .notEqual: .constant(true)
        }
    }
}

extension QueryExpression {
    /// A decimal no value of which is NaN: a stored decimal, nil, a number, or one of them in
    /// place of another (`$0.price ?? 0`).
    fileprivate var holdsNoNaN: Bool {
        neverHolds(.decimal) { if case let .text(text) = $0 { text != QueryCondition.nan } else { false } }
    }
}
