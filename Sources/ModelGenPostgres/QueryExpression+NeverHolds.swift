import ModelGenQuery

extension QueryExpression {
    /// Whether no value of this expression is a constant of `kind` that a save refuses, and so no
    /// stored value is (`storable` says which constants a store can hold): a stored column of `kind`,
    /// nil, a constant `storable` accepts, or one of them in place of another (`$0.note ?? ""`).
    func neverHolds(_ kind: QueryValueKind, unless storable: (SQLValue) -> Bool) -> Bool {
        switch self {
        case let .path(path): path.kind == kind
        case .value(.null, _): true
        case let .value(value, valueKind) where valueKind == kind: storable(value)
        case let .coalesce(value, fallback): value.neverHolds(kind, unless: storable) && fallback.neverHolds(kind, unless: storable)
        case .value, .remainder, .count: false
        }
    }
}
