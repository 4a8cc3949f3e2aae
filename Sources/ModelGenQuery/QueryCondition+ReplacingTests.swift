extension QueryCondition {
    /// The condition with each test in it (a comparison, a text test, a list, a `Bool`, a
    /// constant) replaced by `transform` of it, at any depth of `&&`, `||`, `!` and `exists`.
    public func replacingTests(_ transform: (QueryCondition) -> QueryCondition) -> QueryCondition {
        switch self {
        case let .and(conditions): .and(conditions.map { $0.replacingTests(transform) })
        case let .or(conditions): .or(conditions.map { $0.replacingTests(transform) })
        case let .not(condition): .not(condition.replacingTests(transform))
        case let .exists(toMany, condition): .exists(toMany, condition.replacingTests(transform))
        case .comparison, .isTrue, .text, .constant, .oneOf: transform(self)
        }
    }
}
