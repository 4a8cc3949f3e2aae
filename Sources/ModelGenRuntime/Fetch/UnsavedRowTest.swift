import ModelGenQuery

/// Whether an unsaved object matches a fetch's condition as its row will once saved: SQLite
/// decides, on the values the object holds now, bound as a one-row table named like the entity's
/// (it hides the table within the statement).
///
///     WITH "volume"(id, title, price, writer_id) AS (VALUES (?2, ?3, ?4, ?5))
///     SELECT 1 FROM "volume" WHERE ("volume"."price" < ?1)
///
/// `Predicate.evaluate` would not do: it compares text as Swift's `String` does (canonically
/// equivalent texts are equal, `"e\u{301}" == "é"`; `contains` and `starts(with:)` compare
/// `Character`s), where the store compares the bytes it holds, so a fetch would select other
/// objects before a save than after it. Keys of partners not yet saved, and the id of an object
/// not yet saved, are bound as a value that equals no id and is not NULL.
///
/// A condition that is one equality of an attribute with a value compared as stored (an integer,
/// a boolean, a text, a UUID, bytes: `PendingValueIndex.indexes`) — the commonest fetch with
/// unsaved objects, find-or-create — is decided without SQLite, as the store's `=` decides it:
/// integers by value, texts and bytes byte for byte (`SQLValue`'s `==`).
struct UnsavedRowTest {
    private let entity: EntityDescription
    private let kind: Kind

    private enum Kind {
        /// An attribute's value (its index) must be this value (not NULL).
        case equality(Int, SQLiteValue)
        /// The statement, and the condition's bindings (the row's values follow them).
        case statement(String, [SQLiteValue])
    }

    /// The test of `condition` (nil: every object matches) on objects of `entity`.
    init?(_ condition: QueryCondition?, entity: EntityDescription) {
        guard let condition else { return nil }
        self.entity = entity
        if case .comparison(_, .equal, _) = condition, let (attribute, value) = condition.indexableEquality(on: entity), value != .null {
            kind = .equality(attribute, value)
            return
        }
        var renderer = PredicateSQLRenderer(dialect: .sqlite, table: entity.tableName)
        let test = renderer.condition(condition)
        let first = renderer.bindings.count + 1
        let parameters = entity.columns.indices.map { "?\(first + $0)" }.joined(separator: ", ")
        let sql = "WITH \(entity.table)(\(entity.columns.joined(separator: ", "))) AS (VALUES (\(parameters))) SELECT 1 FROM \(entity.table) WHERE \(test)"
        kind = .statement(sql, renderer.bindings)
    }

    /// A value no id equals, and not NULL: the id of an object, or of a partner, not yet saved.
    private static let unsavedID = SQLiteValue.blob([])

    /// Whether `backing`'s values now meet the condition.
    func matches(_ backing: ModelBackingData, in database: SQLiteDatabase) throws -> Bool {
        switch kind {
        case let .equality(attribute, wanted):
            return backing.storedValue(attribute) == wanted
        case let .statement(sql, conditionBindings):
            var row = conditionBindings
            row.reserveCapacity(conditionBindings.count + entity.columns.count)
            row.append(backing.id.map(SQLiteValue.integer) ?? Self.unsavedID)
            for (index, attribute) in entity.attributes.enumerated() where attribute.column != nil {
                row.append(backing.storedValue(index))
            }
            for (index, _) in entity.foreignKeys {
                switch backing.relationship(index) {
                case let .unloaded(foreignID): row.append(foreignID.map(SQLiteValue.integer) ?? .null)
                case let .toOne(partner?): row.append(partner.persistentBackingData.id.map(SQLiteValue.integer) ?? Self.unsavedID)
                case .toOne(nil), .toMany: row.append(.null)
                }
            }
            var found = false
            try database.forEachRow(sql, row) { _ in found = true }
            return found
        }
    }
}
