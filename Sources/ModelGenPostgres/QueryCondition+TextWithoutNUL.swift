import ModelGenQuery

extension QueryCondition {
    /// The condition, with each test of a stored text against a constant holding the NUL character
    /// decided as Swift decides on the texts the store holds. PostgreSQL text cannot hold NUL (a
    /// save refuses it), nor can a parameter bind it; no stored text holds one, so with `c` =
    /// `p + "\0" + …` (`p` before the first NUL), by code points, where NUL comes first:
    ///
    ///     text <  c, text <= c  →  text <= p             text == c  →  false
    ///     text >  c, text >= c  →  text >  p             text != c  →  true
    ///     text.contains(c), .hasPrefix(c), .hasSuffix(c)  →  false
    ///     [c, d].contains(text)  →  [d].contains(text)
    ///
    /// A NULL text (an optional one) gives what the original gives: false for an ordering or a text
    /// test, `!=` true.
    func withoutNULConstants() -> QueryCondition {
        replacingTests { test in
            switch test {
            case let .comparison(text, comparison, .value(.text(constant), .text)) where text.holdsNoNUL && constant.contains("\0"):
                Self.decided(text, comparison, constant)
            case let .comparison(.value(.text(constant), .text), comparison, text) where text.holdsNoNUL && constant.contains("\0"):
                Self.decided(text, comparison.mirrored, constant)
            case let .text(_, text, .value(.text(part), .text)) where text.holdsNoNUL && part.contains("\0"):
                .constant(false)
            case let .oneOf(text, values, .text) where text.holdsNoNUL:
                .oneOf(text, values.filter { if case let .text(value) = $0 { !value.contains("\0") } else { true } }, .text)
            default:
                test
            }
        }
    }

    /// `text comparison constant`, for a constant holding NUL and a text that holds none.
    private static func decided(_ text: QueryExpression, _ comparison: QueryComparison, _ constant: String) -> QueryCondition {
        let prefix = QueryExpression.value(.text(String(constant.unicodeScalars.prefix { $0 != "\0" })), .text)
        switch comparison {
        case .less, .lessOrEqual: return .comparison(text, .lessOrEqual, prefix)
        case .greater, .greaterOrEqual: return .comparison(text, .greater, prefix)
        case .equal: return .constant(false)
        case .notEqual: return .constant(true)
        }
    }
}

extension QueryExpression {
    /// A text no value of which holds NUL: a stored text, nil, a constant without NUL, or one of
    /// them in place of another (`$0.note ?? ""`).
    fileprivate var holdsNoNUL: Bool {
        neverHolds(.text) { if case let .text(text) = $0 { !text.contains("\0") } else { false } }
    }
}
