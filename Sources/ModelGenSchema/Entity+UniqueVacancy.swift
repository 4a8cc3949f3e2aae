import ModelGenQuery

/// How a save sets aside the value a row holds in a unique column, so that another row of the
/// same save can take it whatever order the rows are written in: two objects swapping names, a
/// deleted object's name taken by a new one, a one-to-one partner replaced. Each statement of a
/// save checks uniqueness at once, row by row (SQLite always does; so does PostgreSQL for a
/// constraint that is not deferrable), so without this a save whose end state is valid fails.
public enum UniqueVacancy: Equatable, Sendable {
    /// The column takes NULL, which never collides.
    case null
    /// An integer column takes a number no row holds and the save does not take: below the
    /// smallest, or above the largest, or (when values lie at both ends of `Int64`) in a gap; the
    /// runtime picks them (`IntegerVacancies`), never overflowing.
    case unusedInteger
    /// A text column takes a text longer than the longest it holds or the save takes (ending in
    /// the row's id).
    case longerThanLongest
    /// A `UUID` column takes a new one: on SQLite, whose column holds text, a text longer than
    /// the longest (as `longerThanLongest`); on PostgreSQL a random UUID (`gen_random_uuid()`).
    case newUUID
}

extension UniqueVacancy {
    /// What a row's `column` of `table` (both quoted for `dialect`) takes while set aside, as SQL
    /// (`id` is the row's id), `longestTaken` being the length in characters of the longest text
    /// the save writes in the column; nil for `unusedInteger`, whose values the runtime picks:
    ///
    ///     NULL
    ///     repeat('~', greatest((SELECT max(length("code")) FROM "team"), 7)) || '#' || id      -- PostgreSQL
    ///     (SELECT replace(hex(zeroblob(max(coalesce(max(length("code")), 0), 7))), '00', '~') FROM "team") || '#' || id   -- SQLite
    public func valueSQL(column: String, table: String, dialect: SQLDialect, longestTaken: Int) -> String? {
        switch (self, dialect) {
        case (.null, _): "NULL"
        case (.unusedInteger, _): nil
        case (.newUUID, .postgresql): "gen_random_uuid()"
        case (.longerThanLongest, .postgresql):
            "repeat('~', greatest((SELECT max(length(\(column))) FROM \(table)), \(longestTaken))) || '#' || id"
        // SQLite has no repeat(): n zero bytes in hex are 2n zeros, each pair made one '~'.
        case (.longerThanLongest, .sqlite), (.newUUID, .sqlite):
            "(SELECT replace(hex(zeroblob(max(coalesce(max(length(\(column))), 0), \(longestTaken)))), '00', '~') FROM \(table)) || '#' || id"
        }
    }
}

extension Entity {
    /// The columns of a unique constraint (a unique attribute, a compound constraint, the key of
    /// a one-to-one stored here) whose value a save can set aside, and how. A column that is
    /// required and not an `Int`, `Int64`, `String`, `URL` or `UUID` (a required key, which must
    /// name a row at once on PostgreSQL; an enum, whose text is checked; a `Date`…) has none.
    public var uniqueVacancies: [String: UniqueVacancy] {
        let uniqueColumns = Set(uniqueColumnGroups.joined())
        var vacancies: [String: UniqueVacancy] = [:]
        for attribute in storedAttributes where uniqueColumns.contains(attribute.columnName) {
            if attribute.isOptional {
                vacancies[attribute.columnName] = .null
            } else if attribute.type == .scalar(.int) || attribute.type == .scalar(.int64) {
                vacancies[attribute.columnName] = .unusedInteger
            } else if attribute.type == .scalar(.string) || attribute.type == .scalar(.url) {
                vacancies[attribute.columnName] = .longerThanLongest
            } else if attribute.type == .scalar(.uuid) {
                vacancies[attribute.columnName] = .newUUID
            }
        }
        for relationship in relationships {
            guard case let .foreignKey(column, _) = relationship.storage, uniqueColumns.contains(column), !relationship.isRequired else { continue }
            vacancies[column] = .null
        }
        return vacancies
    }
}
