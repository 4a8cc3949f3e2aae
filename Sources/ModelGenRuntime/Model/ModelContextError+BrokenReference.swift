import ModelGenSchema

extension ModelContextError {
    /// A key a save wrote that names no row — an object another context or process deleted after
    /// this one read it — in the schema's words, the same on either backend. `table` and `column`
    /// are raw names, as the database names them in its errors, `key` the id that names no row
    /// (nil when the database did not say). Nil when no entity of `entities` stores the column.
    ///
    /// - A to-one's key column: `.constraintViolation("Book.writer refers to an object whose row
    ///   is gone (writer_id = 5 is not in table writer); fetch it again")`.
    /// - A join table's column (a membership of a to-many relationship): `.deletedFromStore` of
    ///   the object the column names, whose changed memberships have nowhere to go, as its changed
    ///   values would not.
    @_spi(Backend) public static func brokenReference(table: String, column: String, key: Int64?, entities: [EntityDescription]) -> ModelContextError? {
        /// What names no row, as the database would say it.
        func detail(target: String) -> String {
            "\(column) = \(key.map(String.init) ?? "?") is not in table \(entities.first { $0.name == target }?.tableName ?? target)"
        }
        for entity in entities where entity.tableName == table {
            if let property = entity.propertyName(ofColumn: column), let relationship = entity.relationships.first(where: { $0.name == property }) {
                return .constraintViolation("\(entity.name).\(property) refers to an object whose row is gone (\(detail(target: relationship.target))); fetch it again")
            }
        }
        for entity in entities {
            for relationship in entity.relationships {
                guard case let .joinTable(joinTable, ownColumn, targetColumn) = relationship.storage, SQLDialect.unquoted(joinTable) == table else { continue }
                let named = SQLDialect.unquoted(ownColumn) == column ? entity.name : SQLDialect.unquoted(targetColumn) == column ? relationship.target : nil
                guard let named else { continue }
                guard let key else {
                    return .constraintViolation("\(entity.name).\(relationship.name) holds an object whose row is gone (\(detail(target: named))); fetch it again")
                }
                return .deletedFromStore(entity: named, id: key)
            }
        }
        return nil
    }
}
