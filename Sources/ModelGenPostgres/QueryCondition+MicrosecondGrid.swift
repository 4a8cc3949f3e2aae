import ModelGenQuery

extension QueryCondition {
    /// The condition, with each comparison of a stored `Date` with a constant made to decide as
    /// Swift decides on the constant's exact value. PostgreSQL keeps whole microseconds and rounds
    /// a bound timestamp to them, so `$0.date < now` missed a row 0.4 µs before `now` (rounded down
    /// onto it) and `$0.date == now` matched it. A stored value is on the microsecond grid (a save
    /// rounds the object's value too), so binding the grid value on the right side of the constant
    /// makes each comparison exact:
    ///
    ///     date >  c  →  date >  the largest grid value ≤ c     date >= c  →  date >= the smallest ≥ c
    ///     date <  c  →  date <  the smallest grid value ≥ c    date <= c  →  date <= the largest ≤ c
    ///     date == c  →  false, when c is off the grid          date != c  →  true, when c is off it
    ///     [c, d].contains(date)  →  the same list without the values off the grid
    ///
    /// A constant outside the years the store holds (before `Date.distantPast`, after 9999, an
    /// infinity), which the server could not even read, is after or before every stored date:
    ///
    ///     date < c, date <= c  →  date >= the first instant held, when c is after the years held
    ///                          →  date <  the first instant held (never), when c is before them
    ///     date == c  →  false                                  date != c  →  true
    ///
    /// A stored date with a default on the grid (`($0.due ?? .distantFuture) < now`) is made exact
    /// alike. Dates so far from 2001 (beyond about 136 years) that a `Double` does not hold every
    /// microsecond are left as they are.
    func exactOnMicrosecondGrid() -> QueryCondition {
        replacingTests { test in
            switch test {
            case let .comparison(date, comparison, .value(.real(seconds), .date)) where date.isStoredDateOnGrid:
                return Self.exact(date, comparison, seconds) ?? test
            case let .comparison(.value(.real(seconds), .date), comparison, date) where date.isStoredDateOnGrid:
                return Self.exact(date, comparison.mirrored, seconds) ?? test
            case let .oneOf(date, values, .date) where date.isStoredDateOnGrid:
                // Each value as `date == value`, made exact: one off the grid is none.
                return .oneOf(date, values.compactMap { value in
                    guard case let .real(seconds) = value else { return value }
                    switch Self.exact(date, .equal, seconds) {
                    case let .comparison(_, _, .value(onGrid, _))?: return onGrid
                    case .constant?: return nil
                    default: return value
                    }
                }, .date)
            default:
                return test
            }
        }
    }

    /// `date comparison seconds`, exact on the grid; nil to leave it as it is.
    fileprivate static func exact(_ date: QueryExpression, _ comparison: QueryComparison, _ seconds: Double) -> QueryCondition? {
        guard let nearest = (try? PostgresTimestamp(secondsSince2001: seconds))?.microsecondsSince2001 else {
            return beyondStoredYears(date, comparison, seconds)
        }
        guard let rounded = onGrid(nearest) else { return nil }
        let (below, above) = rounded == seconds ? (nearest, nearest) : rounded < seconds ? (nearest, nearest + 1) : (nearest - 1, nearest)
        guard let low = onGrid(below), let high = onGrid(above) else { return nil }
        func compare(_ comparison: QueryComparison, _ bound: Double) -> QueryCondition { .comparison(date, comparison, .value(.real(bound), .date)) }
        switch comparison {
        case .greater: return compare(.greater, low)
        case .greaterOrEqual: return compare(.greaterOrEqual, high)
        case .less: return compare(.less, high)
        case .lessOrEqual: return compare(.lessOrEqual, low)
        case .equal: return below == above ? compare(.equal, low) : .constant(false)
        case .notEqual: return below == above ? compare(.notEqual, low) : .constant(true)
        }
    }

    /// `date comparison seconds` for a constant outside the years the store holds: decided by the
    /// first instant it holds, so that a NULL date (an optional one) gives what the comparison
    /// would. Nil for NaN, which is left to be refused when it is bound.
    fileprivate static func beyondStoredYears(_ date: QueryExpression, _ comparison: QueryComparison, _ seconds: Double) -> QueryCondition? {
        guard !seconds.isNaN else { return nil }
        let first = QueryExpression.value(.real(PostgresTimestamp.earliestSecondsSince2001), .date)
        let isAfter = seconds > 0
        switch comparison {
        case .less, .lessOrEqual: return .comparison(date, isAfter ? .greaterOrEqual : .less, first)
        case .greater, .greaterOrEqual: return .comparison(date, isAfter ? .less : .greaterOrEqual, first)
        case .equal: return .constant(false)
        case .notEqual: return .constant(true)
        }
    }
}

/// The seconds of `microseconds`, when a `Double` holds them exactly enough to round back.
private func onGrid(_ microseconds: Int64) -> Double? {
    let seconds = PostgresTimestamp(microsecondsSince2001: microseconds).secondsSince2001
    return (try? PostgresTimestamp(secondsSince2001: seconds))?.microsecondsSince2001 == microseconds ? seconds : nil
}

extension QueryExpression {
    /// A date whose every value is on the microsecond grid: a stored date, or a stored date with
    /// a default on the grid (`$0.due ?? .distantFuture`, whole seconds), not a constant alone.
    fileprivate var isStoredDateOnGrid: Bool {
        switch self {
        case let .path(path): path.kind == .date
        case let .coalesce(value, fallback): value.isStoredDateOnGrid && (fallback.isStoredDateOnGrid || fallback.isDateConstantOnGrid)
        case .value, .remainder, .count: false
        }
    }

    /// Whether this is a date constant on the microsecond grid (or nil).
    var isDateConstantOnGrid: Bool {
        switch self {
        case .value(.null, _): true
        case let .value(.real(seconds), .date):
            (try? PostgresTimestamp(secondsSince2001: seconds)).flatMap { onGrid($0.microsecondsSince2001) } == seconds
        default: false
        }
    }
}

extension QueryComparison {
    /// The comparison with its sides exchanged: `a < b` is `b > a`.
    var mirrored: QueryComparison {
        switch self {
        case .equal, .notEqual: self
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        }
    }
}
