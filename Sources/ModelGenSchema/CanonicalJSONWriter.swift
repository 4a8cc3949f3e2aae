import Foundation

/// Writes a schema's canonical JSON (`ModelSchema.canonicalJSON`) straight into one string: the
/// bytes `JSONEncoder` makes of the schema's `Codable` form (sorted keys, slashes not escaped,
/// nil optionals left out, enum cases as `{"case":{"_0":…}}`), without its generic containers,
/// which took two thirds of `+Schema.swift`'s time at 10,000 entities.
///
/// Keys are written in sorted order, and plain values directly: integers, booleans and strings of
/// printable ASCII other than `"` and `\`. Every other value — a string that needs escaping, a
/// `Double`, a dictionary — is encoded by `JSONEncoder` itself, so its bytes are JSONEncoder's by
/// construction (and a value it refuses, a non-finite `Double`, fails the whole text as it would).
/// `CanonicalJSONTests` checks both give the same bytes on random schemas.
struct CanonicalJSONWriter {
    private(set) var text = ""
    private let encoder: JSONEncoder

    init(encoder: JSONEncoder) {
        self.encoder = encoder
    }

    mutating func write(_ schema: ModelSchema) throws {
        text.reserveCapacity(1_024 * (schema.entities.count + 1))
        try object {
            try $0.key("entities") { try $0.array(schema.entities) { try $0.write($1) } }
            try $0.key("enums") { try $0.array(schema.enums) { try $0.write($1) } }
            try $0.key("joinTables") { try $0.array(schema.joinTables) { try $0.write($1) } }
            try $0.key("name") { try $0.string(schema.name) }
        }
    }

    private mutating func write(_ enumType: EnumType) throws {
        try object {
            try $0.key("caseOriginalNames") { try $0.encoded(enumType.caseOriginalNames) }
            try $0.key("cases") { try $0.strings(enumType.cases) }
            try $0.key("name") { try $0.string(enumType.name) }
        }
    }

    private mutating func write(_ entity: Entity) throws {
        try object {
            try $0.key("attributes") { try $0.array(entity.attributes) { try $0.write($1) } }
            try $0.key("indexes") { try $0.array(entity.indexes) { try $0.strings($1) } }
            try $0.key("name") { try $0.string(entity.name) }
            try $0.key("originalNames") { try $0.strings(entity.originalNames) }
            try $0.key("relationships") { try $0.array(entity.relationships) { try $0.write($1) } }
            try $0.key("tableName") { try $0.string(entity.tableName) }
            try $0.key("uniqueConstraints") { try $0.array(entity.uniqueConstraints) { try $0.strings($1) } }
        }
    }

    private mutating func write(_ attribute: Attribute) throws {
        try object {
            try $0.key("columnName") { try $0.string(attribute.columnName) }
            if let defaultValue = attribute.defaultValue { try $0.key("defaultValue") { try $0.write(defaultValue) } }
            try $0.key("isIndexed") { $0.bool(attribute.isIndexed) }
            try $0.key("isOptional") { $0.bool(attribute.isOptional) }
            try $0.key("isTransient") { $0.bool(attribute.isTransient) }
            try $0.key("isUnique") { $0.bool(attribute.isUnique) }
            try $0.key("name") { try $0.string(attribute.name) }
            try $0.key("originalNames") { try $0.strings(attribute.originalNames) }
            try $0.key("type") {
                switch attribute.type {
                case let .scalar(type): try $0.enumCase("scalar") { try $0.key("_0") { try $0.string(type.rawValue) } }
                case let .enumeration(name): try $0.enumCase("enumeration") { try $0.key("_0") { try $0.string(name) } }
                }
            }
        }
    }

    private mutating func write(_ value: DefaultValue) throws {
        switch value {
        case let .string(text): try enumCase("string") { try $0.key("_0") { try $0.string(text) } }
        case let .integer(number): try enumCase("integer") { try $0.key("_0") { $0.integer(number) } }
        case let .bool(flag): try enumCase("bool") { try $0.key("_0") { $0.bool(flag) } }
        case let .uuid(text): try enumCase("uuid") { try $0.key("_0") { try $0.string(text) } }
        case let .decimal(text): try enumCase("decimal") { try $0.key("_0") { try $0.string(text) } }
        case let .enumCase(name): try enumCase("enumCase") { try $0.key("_0") { try $0.string(name) } }
        // Doubles and bytes are rare; JSONEncoder writes them.
        case .real, .date, .data: try encoded(value)
        }
    }

    private mutating func write(_ relationship: Relationship) throws {
        try object {
            try $0.key("cardinality") {
                switch relationship.cardinality {
                case let .toOne(isOptional): try $0.enumCase("toOne") { try $0.key("isOptional") { $0.bool(isOptional) } }
                case .toMany: try $0.enumCase("toMany") { _ in }
                }
            }
            try $0.key("deleteRule") { try $0.string(relationship.deleteRule.rawValue) }
            try $0.key("entity") { try $0.string(relationship.entity) }
            if let inverse = relationship.inverse { try $0.key("inverse") { try $0.string(inverse) } }
            if let count = relationship.maximumModelCount { try $0.key("maximumModelCount") { $0.integer(Int64(count)) } }
            if let count = relationship.minimumModelCount { try $0.key("minimumModelCount") { $0.integer(Int64(count)) } }
            try $0.key("name") { try $0.string(relationship.name) }
            try $0.key("originalNames") { try $0.strings(relationship.originalNames) }
            try $0.key("storage") {
                switch relationship.storage {
                case let .foreignKey(column, isUnique):
                    try $0.enumCase("foreignKey") {
                        try $0.key("column") { try $0.string(column) }
                        try $0.key("isUnique") { $0.bool(isUnique) }
                    }
                case .inverseForeignKey: try $0.enumCase("inverseForeignKey") { _ in }
                case let .joinTable(name): try $0.enumCase("joinTable") { try $0.key("name") { try $0.string(name) } }
                }
            }
            try $0.key("target") { try $0.string(relationship.target) }
        }
    }

    private mutating func write(_ joinTable: JoinTable) throws {
        try object {
            try $0.key("column") { try $0.string(joinTable.column) }
            try $0.key("entity") { try $0.string(joinTable.entity) }
            if let inverse = joinTable.inverse { try $0.key("inverse") { try $0.string(inverse) } }
            try $0.key("name") { try $0.string(joinTable.name) }
            try $0.key("relationship") { try $0.string(joinTable.relationship) }
            try $0.key("table") { try $0.string(joinTable.table) }
            try $0.key("target") { try $0.string(joinTable.target) }
            try $0.key("targetColumn") { try $0.string(joinTable.targetColumn) }
            try $0.key("targetTable") { try $0.string(joinTable.targetTable) }
        }
    }

    // MARK: - JSON

    /// `{…}`, its members written by `members` (each through `key`).
    private mutating func object(_ members: (inout CanonicalJSONWriter) throws -> Void) throws {
        text += "{"
        try members(&self)
        text += "}"
    }

    /// One member of the object being written: `"name":` and the value, after a comma unless it
    /// is the first (the text then ends in the object's `{`, which no value ends in).
    private mutating func key(_ name: String, _ value: (inout CanonicalJSONWriter) throws -> Void) throws {
        text += text.utf8.last == UInt8(ascii: "{") ? "\"" : ",\""
        text += name
        text += "\":"
        try value(&self)
    }

    /// An enum case with associated values, as Swift's synthesized `Codable` encodes it: `{"case":{…}}`.
    private mutating func enumCase(_ name: String, _ values: (inout CanonicalJSONWriter) throws -> Void) throws {
        try object { try $0.key(name) { try $0.object(values) } }
    }

    private mutating func array<Element>(_ elements: [Element], _ write: (inout CanonicalJSONWriter, Element) throws -> Void) throws {
        text += "["
        for (index, element) in elements.enumerated() {
            if index > 0 { text += "," }
            try write(&self, element)
        }
        text += "]"
    }

    private mutating func strings(_ strings: [String]) throws {
        try array(strings) { try $0.string($1) }
    }

    private mutating func string(_ string: String) throws {
        // Printable ASCII but `"` and `\` is written as it is; anything else as JSONEncoder escapes it.
        guard string.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) else {
            return try encoded(string)
        }
        text += "\""
        text += string
        text += "\""
    }

    private mutating func integer(_ number: Int64) {
        text += String(number)
    }

    private mutating func bool(_ flag: Bool) {
        text += flag ? "true" : "false"
    }

    /// `value` as JSONEncoder writes it.
    private mutating func encoded(_ value: some Encodable) throws {
        text += String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
