/// The values rows set aside in a unique integer column take (`UniqueVacancy.unusedInteger`), for
/// either backend: numbers no row holds and the save does not take, distinct, and never past the
/// ends of `Int64` (a column holding `Int.min`, or a new row taking the number just below the
/// smallest, must not make a valid save fail).
@_spi(Backend) public enum IntegerVacancies: Equatable {
    /// Each row takes `base - id`: below every value held and taken.
    case below(Int64)
    /// Each row takes `base + id`: above every value held and taken.
    case above(Int64)
    /// Each row takes the value at its position (in the order of the ids).
    case values([Int64])

    /// The vacancies of rows `ids` (positive), in a column whose values run from `storedMin` to
    /// `storedMax` (nil when it holds none), the save taking `taken`: below them all when there is
    /// room, else above; nil when values lie so near both ends of `Int64` that neither fits —
    /// then `gaps(count:excluding:)`, over every value held and taken.
    @_spi(Backend) public static func beside(ids: [Int64], storedMin: Int64?, storedMax: Int64?, taken: some Sequence<Int64>) -> IntegerVacancies? {
        let largestID = ids.max() ?? 0
        var low = storedMin, high = storedMax
        for value in taken {
            low = Swift.min(low ?? value, value)
            high = Swift.max(high ?? value, value)
        }
        guard let low, let high else { return .below(0) }
        // `low - id` and `high + id`, for every id up to the largest, stay inside Int64.
        if low > Int64.min + largestID { return .below(low) }
        if high < Int64.max - largestID { return .above(high) }
        return nil
    }

    /// `count` values none of `excluding` is, the smallest such: the gaps between the values.
    @_spi(Backend) public static func gaps(count: Int, excluding: Set<Int64>) -> IntegerVacancies {
        .values(smallestFree(count: count, excluding: excluding, from: .min))
    }

    /// The `count` smallest values from `start` up that none of `excluding` is (fewer when the
    /// values up to `Int64.max` run out).
    @_spi(Backend) public static func smallestFree(count: Int, excluding: Set<Int64>, from start: Int64) -> [Int64] {
        let excluded = excluding.filter { $0 >= start }.sorted()
        var values: [Int64] = [], candidate = start, position = 0
        values.reserveCapacity(count)
        while values.count < count {
            while position < excluded.count && excluded[position] < candidate { position += 1 }
            if position == excluded.count || excluded[position] != candidate { values.append(candidate) }
            guard candidate < .max else { break }
            candidate += 1
        }
        return values
    }
}

extension Sequence<SQLiteValue> {
    /// The length in characters (Unicode scalars, as SQL's `length` counts them) of the longest
    /// text among the values, 0 when there is none.
    @_spi(Backend) public var longestText: Int {
        reduce(0) { longest, value in
            if case let .text(text) = value { Swift.max(longest, text.unicodeScalars.count) } else { longest }
        }
    }
}
