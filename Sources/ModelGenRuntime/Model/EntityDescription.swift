/// What the runtime knows of an entity: generated from the schema into each model class.
public struct EntityDescription: Sendable {
    public var name: String
    /// The table, quoted as needed.
    public var table: String
    public var attributes: [AttributeDescription]
    public var relationships: [RelationshipDescription]
    /// The table's raw name, as `PredicateSQLRenderer` takes it.
    var tableName: String { SQLDialect.unquoted(table) }

    public init(name: String, table: String, attributes: [AttributeDescription], relationships: [RelationshipDescription]) {
        self.name = name
        self.table = table
        self.attributes = attributes
        self.relationships = relationships
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

    public init(name: String, target: String, isToMany: Bool, isOptional: Bool, inverse: String?, deleteRule: String, storage: Storage) {
        self.name = name
        self.target = target
        self.isToMany = isToMany
        self.isOptional = isOptional
        self.inverse = inverse
        self.deleteRule = deleteRule
        self.storage = storage
    }
}
