import ModelGenSchema

/// What the runtime knows of an entity: generated from the schema into each model class (one
/// shared instance per class), with what every fetch and save of its rows needs worked out once.
public final class EntityDescription: Sendable {
    public let name: String
    /// The table, quoted as needed.
    public let table: String
    public let attributes: [AttributeDescription]
    public let relationships: [RelationshipDescription]
    /// The table's raw name, as `PredicateSQLRenderer` takes it.
    @_spi(Backend) public let tableName: String
    /// The relationships whose key is a column of this table, by index, with the column.
    @_spi(Backend) public let foreignKeys: [(index: Int, column: String)]
    /// For each relationship, the position of its key in a backing's values (after the
    /// attributes, in the order of `foreignKeys`), or nil when its key is not on this table.
    @_spi(Backend) public let keySlots: [Int?]
    /// How many values a backing data holds: one per attribute, then one per key column.
    @_spi(Backend) public let valueCount: Int
    /// For each value slot, the position of its column among those `selectSQL` reads, or nil
    /// (a transient attribute, which has none).
    let selectedPositions: [Int?]
    /// The columns of a row, as the DDL names them (quoted as needed): `id`, the stored
    /// attributes', the keys'.
    let columns: [String]
    /// The columns a fetch reads, in the order of `columns`.
    ///
    ///     SELECT id, "title", "price", "writer_id" FROM "volume"
    let selectSQL: String
    /// The row with one id, read as `selectSQL` reads rows (`model(for:)`).
    ///
    ///     SELECT id, "title", "price", "writer_id" FROM "volume" WHERE id = ?
    let selectByIDSQL: String
    /// The statement that inserts a row, with the columns in the order of `selectSQL`.
    ///
    ///     INSERT INTO "volume" (id, "title", "price", "writer_id") VALUES (?, ?, ?, ?)
    let insertSQL: String

    public init(name: String, table: String, attributes: [AttributeDescription], relationships: [RelationshipDescription]) {
        self.name = name
        self.table = table
        self.attributes = attributes
        self.relationships = relationships
        tableName = SQLDialect.unquoted(table)
        foreignKeys = relationships.indices.compactMap { index in
            if case let .column(column) = relationships[index].storage { return (index, column) }
            return nil
        }
        var keySlots = [Int?](repeating: nil, count: relationships.count)
        for (position, key) in foreignKeys.enumerated() { keySlots[key.index] = attributes.count + position }
        self.keySlots = keySlots
        valueCount = attributes.count + foreignKeys.count
        var position = 0
        selectedPositions = (attributes.map(\.column) + foreignKeys.map(\.column)).map { column in
            guard column != nil else { return nil }
            position += 1
            return position
        }
        columns = ["id"] + attributes.compactMap(\.column) + foreignKeys.map(\.column)
        selectSQL = "SELECT " + columns.joined(separator: ", ") + " FROM \(table)"
        selectByIDSQL = selectSQL + " WHERE id = ?"
        insertSQL = "INSERT INTO \(table) (" + columns.joined(separator: ", ") + ") VALUES (" + columns.map { _ in "?" }.joined(separator: ", ") + ")"
    }
}

extension EntityDescription {
    /// The index of the relationship named `name`.
    @_spi(Backend) public func relationshipIndex(named name: String) -> Int? {
        relationships.firstIndex { $0.name == name }
    }

    /// The index of the to-one relationship whose key is `column` (quoted, as `Storage` holds it)
    /// of this table: the inverse of a relationship of another entity stored as `.inverseColumn(column)`.
    @_spi(Backend) public func relationshipIndex(keyedBy column: String) -> Int? {
        foreignKeys.first { $0.column == column }?.index
    }

    /// The index of the stored attribute whose column is `column` (its raw name).
    @_spi(Backend) public func attributeIndex(ofColumn column: String) -> Int? {
        attributes.firstIndex { $0.column.map(SQLDialect.unquoted) == column }
    }

    /// The attribute, or the to-one relationship whose key this table holds, stored in `column`
    /// (its raw name, as databases name it in errors).
    @_spi(Backend) public func propertyName(ofColumn column: String) -> String? {
        if let index = attributeIndex(ofColumn: column) { return attributes[index].name }
        return foreignKeys.first { SQLDialect.unquoted($0.column) == column }.map { relationships[$0.index].name }
    }
}

public struct AttributeDescription: Sendable {
    public var name: String
    /// The column, quoted as needed; nil for a transient attribute.
    public var column: String?
    public var isUnique: Bool

    public init(name: String, column: String?, isUnique: Bool = false) {
        self.name = name
        self.column = column
        self.isUnique = isUnique
    }
}

public struct RelationshipDescription: Sendable {
    /// Where the references live.
    public enum Storage: Sendable {
        /// A foreign-key column on this entity's table (quoted).
        case column(String)
        /// The inverse's foreign-key column on the target's table (quoted).
        case inverseColumn(String)
        /// A join table (quoted) with this side's column and the target's column.
        case joinTable(String, ownColumn: String, targetColumn: String)
    }

    public var name: String
    public var target: String
    public var isToMany: Bool
    public var isOptional: Bool
    public var inverse: String?
    /// `nullify`, `cascade`, `deny` or `noAction`.
    public var deleteRule: String
    public var storage: Storage
    /// A to-many relationship's bounds (the schema's `minimumModelCount` and
    /// `maximumModelCount`; nil, or 0 as in SwiftData, is none), checked by each save
    /// (`ModelCountCheck`).
    public var minimumModelCount: Int?
    public var maximumModelCount: Int?

    public init(name: String, target: String, isToMany: Bool, isOptional: Bool, inverse: String?, deleteRule: String, storage: Storage,
                minimumModelCount: Int? = nil, maximumModelCount: Int? = nil) {
        self.name = name
        self.target = target
        self.isToMany = isToMany
        self.isOptional = isOptional
        self.inverse = inverse
        self.deleteRule = deleteRule
        self.storage = storage
        self.minimumModelCount = Relationship.modelCountBound(minimumModelCount)
        self.maximumModelCount = Relationship.modelCountBound(maximumModelCount)
    }

    /// Whether a save checks how many objects the relationship holds.
    var isBounded: Bool { minimumModelCount != nil || maximumModelCount != nil }
}
