/// The resolved schema: every name checked, every relationship paired with its inverse and
/// given its storage. Plain values in schema order; the planner and emitters read only this.
public struct ModelSchema: Equatable, Sendable {
    /// The schema's name (`schema:`), used for the generated schema type.
    public var name: String
    /// The schema file's name without `.yaml`, used for output file names.
    public var sourceFile: String
    public var enums: [EnumType]
    public var entities: [Entity]
    /// Join tables of to-many relationships whose inverse is to-many or absent.
    public var joinTables: [JoinTable]

    /// Every foreign-key column, in schema order.
    public private(set) var foreignKeys: [ForeignKey] = []
    /// Position of each entity in `entities`, for lookups by name (never iterated).
    private var entityPositions: [String: Int] = [:]
    /// Position of each join table in `joinTables`, for lookups by name (never iterated).
    private var joinTablePositions: [String: Int] = [:]

    public init(name: String, sourceFile: String, enums: [EnumType], entities: [Entity], joinTables: [JoinTable]) {
        self.name = name
        self.sourceFile = sourceFile
        self.enums = enums
        self.entities = entities
        self.joinTables = joinTables
        for (position, entity) in entities.enumerated() where entityPositions[entity.name] == nil {
            entityPositions[entity.name] = position
        }
        for (position, joinTable) in joinTables.enumerated() where joinTablePositions[joinTable.name] == nil {
            joinTablePositions[joinTable.name] = position
        }
        foreignKeys = entities.flatMap { entity in
            entity.relationships.compactMap { relationship in
                guard case let .foreignKey(column, isUnique) = relationship.storage else { return nil }
                return ForeignKey(entity: entity.name, table: entity.tableName, column: column,
                                  relationship: relationship.name, target: relationship.target,
                                  targetTable: self.entity(named: relationship.target)?.tableName ?? "",
                                  isRequired: relationship.isRequired, isUnique: isUnique,
                                  inverse: relationship.inverse)
            }
        }
    }

    /// The entity with this name.
    public func entity(named name: String) -> Entity? {
        entityPositions[name].map { entities[$0] }
    }

    /// The entity's position in `entities` (schema order).
    public func position(ofEntity name: String) -> Int? {
        entityPositions[name]
    }

    /// The join table with this name.
    public func joinTable(named name: String) -> JoinTable? {
        joinTablePositions[name].map { joinTables[$0] }
    }

    /// The relationship `entity.name`.
    public func relationship(_ entity: String, _ name: String) -> Relationship? {
        self.entity(named: entity)?.relationships.first { $0.name == name }
    }

    /// Where `relationship`'s links are, seen from the rows of its entity; nil when the schema
    /// does not hold what its storage names (a resolved schema always does).
    public func links(of relationship: Relationship) -> RelationshipLinks? {
        switch relationship.storage {
        case let .foreignKey(column, _):
            return .column(column)
        case .inverseForeignKey:
            guard case let .foreignKey(column, _)? = relationship.inverse.flatMap({ self.relationship(relationship.target, $0) })?.storage else { return nil }
            return .inverseColumn(column)
        case let .joinTable(name):
            guard let table = joinTable(named: name) else { return nil }
            // The owning side's ids are in `column`; the inverse side reads the table the other way.
            let owns = table.entity == relationship.entity && table.relationship == relationship.name
            return owns ? .joinTable(name, ownColumn: table.column, targetColumn: table.targetColumn)
                        : .joinTable(name, ownColumn: table.targetColumn, targetColumn: table.column)
        }
    }
}

/// Where a relationship's links are, seen from its entity's rows (`ModelSchema.links(of:)`).
public enum RelationshipLinks: Equatable, Sendable {
    /// A key column on the entity's own table.
    case column(String)
    /// The inverse's key column on the target's table.
    case inverseColumn(String)
    /// A join table: its column of the entity's ids and its column of the target's.
    case joinTable(String, ownColumn: String, targetColumn: String)
}

/// A `String`-backed enum.
public struct EnumType: Codable, Equatable, Sendable {
    public var name: String
    public var cases: [String]
    /// Names cases had in earlier versions of the schema, by case (`{carnivorous: {originalName: meat}}`).
    public var caseOriginalNames: [String: [String]]

    public init(name: String, cases: [String], caseOriginalNames: [String: [String]] = [:]) {
        self.name = name
        self.cases = cases
        self.caseOriginalNames = caseOriginalNames
    }

    private enum CodingKeys: String, CodingKey { case name, cases, caseOriginalNames }

    /// Stores recorded before enum cases took `originalName` have no `caseOriginalNames`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try container.decode(String.self, forKey: .name), cases: try container.decode([String].self, forKey: .cases),
                  caseOriginalNames: try container.decodeIfPresent([String: [String]].self, forKey: .caseOriginalNames) ?? [:])
    }
}

public struct Entity: Codable, Equatable, Sendable {
    public var name: String
    public var tableName: String
    public var attributes: [Attribute]
    public var relationships: [Relationship]
    /// Compound unique constraints, as column names.
    public var uniqueConstraints: [[String]]
    /// Compound indexes, as column names.
    public var indexes: [[String]]
    /// Names in earlier versions of the schema (`originalName`), most recent first.
    public var originalNames: [String]

    /// Attributes that have a column (transient ones do not).
    public var storedAttributes: [Attribute] { attributes.filter { !$0.isTransient } }

    /// Every set of columns declared `UNIQUE`: unique attributes, compound constraints, the key of
    /// a one-to-one stored here.
    public var uniqueColumnGroups: [[String]] {
        var groups = storedAttributes.filter(\.isUnique).map { [$0.columnName] } + uniqueConstraints
        for relationship in relationships {
            if case let .foreignKey(column, isUnique) = relationship.storage, isUnique { groups.append([column]) }
        }
        return groups
    }

    public init(name: String, tableName: String, attributes: [Attribute], relationships: [Relationship], uniqueConstraints: [[String]] = [], indexes: [[String]] = [], originalNames: [String] = []) {
        self.name = name
        self.tableName = tableName
        self.attributes = attributes
        self.relationships = relationships
        self.uniqueConstraints = uniqueConstraints
        self.indexes = indexes
        self.originalNames = originalNames
    }
}

/// The Swift types an attribute can have, besides the schema's enums.
public enum ScalarType: String, Codable, CaseIterable, Equatable, Sendable {
    case string = "String", int = "Int", int64 = "Int64", int32 = "Int32", int16 = "Int16"
    case double = "Double", float = "Float", bool = "Bool", date = "Date", uuid = "UUID"
    case data = "Data", decimal = "Decimal", url = "URL"

    /// Stored as a `Double` (`Double`, `Float`, and `Date` as its seconds since 2001): in SQLite a
    /// `REAL` value in a column without a declared type (see `SQLiteFloatingPointColumns`).
    public var isFloatingPoint: Bool { self == .double || self == .float || self == .date }
}

public enum AttributeType: Codable, Equatable, Sendable {
    case scalar(ScalarType)
    /// One of the schema's enums, by name.
    case enumeration(String)
}

/// A default value, already checked against the attribute's type.
public enum DefaultValue: Codable, Equatable, Sendable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    /// Seconds since 2001-01-01T00:00:00Z (the `Date` reference date, as stored), from an ISO 8601 date in the schema.
    case date(Double, iso8601: String)
    case uuid(String)
    case data([UInt8])
    case decimal(String)
    case enumCase(String)
}

public struct Attribute: Codable, Equatable, Sendable {
    public var name: String
    public var columnName: String
    public var type: AttributeType
    public var isOptional: Bool
    public var isUnique: Bool
    public var isIndexed: Bool
    public var isTransient: Bool
    public var defaultValue: DefaultValue?
    /// Names in earlier versions of the schema (`originalName`), most recent first.
    public var originalNames: [String]

    public init(name: String, columnName: String, type: AttributeType, isOptional: Bool, isUnique: Bool = false, isIndexed: Bool = false, isTransient: Bool = false, defaultValue: DefaultValue? = nil, originalNames: [String] = []) {
        self.name = name
        self.columnName = columnName
        self.type = type
        self.isOptional = isOptional
        self.isUnique = isUnique
        self.isIndexed = isIndexed
        self.isTransient = isTransient
        self.defaultValue = defaultValue
        self.originalNames = originalNames
    }
}

public enum DeleteRule: String, Codable, CaseIterable, Equatable, Sendable {
    case nullify, cascade, deny, noAction
}

public enum Cardinality: Codable, Equatable, Sendable {
    case toOne(isOptional: Bool)
    case toMany
}

/// Where a relationship's references are stored.
public enum RelationshipStorage: Codable, Equatable, Sendable {
    /// A foreign-key column on the relationship's own table (`UNIQUE` for one-to-one).
    case foreignKey(column: String, isUnique: Bool)
    /// The key is the inverse's foreign-key column on the target's table.
    case inverseForeignKey
    /// Rows of a join table.
    case joinTable(name: String)
}

public struct Relationship: Codable, Equatable, Sendable {
    /// The entity that declares it.
    public var entity: String
    public var name: String
    public var target: String
    public var cardinality: Cardinality
    public var inverse: String?
    public var deleteRule: DeleteRule
    public var minimumModelCount: Int?
    public var maximumModelCount: Int?
    /// Names in earlier versions of the schema (`originalName`), most recent first.
    public var originalNames: [String]
    public var storage: RelationshipStorage

    public var isToMany: Bool { cardinality == .toMany }
    /// The bounds saves check: `minimumModelCount` and `maximumModelCount`, each nil where the
    /// schema sets none or 0 (SwiftData's "no bound").
    public var modelCountBounds: (minimum: Int?, maximum: Int?) {
        (Self.modelCountBound(minimumModelCount), Self.modelCountBound(maximumModelCount))
    }
    /// A `minimumModelCount` or `maximumModelCount` as a bound: nil where none is set or it is 0.
    public static func modelCountBound(_ count: Int?) -> Int? { count.flatMap { $0 > 0 ? $0 : nil } }
    /// A to-one that must always point at an object.
    public var isRequired: Bool { cardinality == .toOne(isOptional: false) }

    public init(entity: String, name: String, target: String, cardinality: Cardinality, inverse: String?, deleteRule: DeleteRule, minimumModelCount: Int? = nil, maximumModelCount: Int? = nil, originalNames: [String] = [], storage: RelationshipStorage) {
        self.entity = entity
        self.name = name
        self.target = target
        self.cardinality = cardinality
        self.inverse = inverse
        self.deleteRule = deleteRule
        self.minimumModelCount = minimumModelCount
        self.maximumModelCount = maximumModelCount
        self.originalNames = originalNames
        self.storage = storage
    }
}

/// A foreign-key column, seen from the table that holds it.
public struct ForeignKey: Codable, Hashable, Sendable {
    public var entity: String
    public var table: String
    public var column: String
    /// The to-one relationship the column stores.
    public var relationship: String
    public var target: String
    public var targetTable: String
    public var isRequired: Bool
    public var isUnique: Bool
    /// The target's relationship back, if any.
    public var inverse: String?
}

/// A join table: one row per pair, a foreign key to each side.
public struct JoinTable: Codable, Equatable, Sendable {
    public var name: String
    /// The relationship that owns the table and the entity that declares it.
    public var entity: String
    public var relationship: String
    public var table: String
    public var column: String
    public var target: String
    public var targetTable: String
    public var targetColumn: String
    /// The target's to-many relationship back, if any.
    public var inverse: String?

    public init(name: String, entity: String, relationship: String, table: String, column: String, target: String, targetTable: String, targetColumn: String, inverse: String?) {
        self.name = name
        self.entity = entity
        self.relationship = relationship
        self.table = table
        self.column = column
        self.target = target
        self.targetTable = targetTable
        self.targetColumn = targetColumn
        self.inverse = inverse
    }
}
