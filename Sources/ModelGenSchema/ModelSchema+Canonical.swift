import Foundation

/// The canonical form of a schema: what every database records (table `modelgen_schema`) and what
/// the generated code carries, so an opening container knows the version a store is at and can
/// plan the migration from it without the YAML. JSON with sorted keys and no spaces, so the same
/// schema always gives the same bytes; the source file's name is left out (moving a file is no change).
extension ModelSchema: Codable {
    private enum CodingKeys: String, CodingKey {
        case name, enums, entities, joinTables
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try container.decode(String.self, forKey: .name), sourceFile: "",
                  enums: try container.decode([EnumType].self, forKey: .enums),
                  entities: try container.decode([Entity].self, forKey: .entities),
                  joinTables: try container.decode([JoinTable].self, forKey: .joinTables))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(enums, forKey: .enums)
        try container.encode(entities, forKey: .entities)
        try container.encode(joinTables, forKey: .joinTables)
    }

    /// The canonical JSON: what `JSONEncoder` makes of the schema with sorted keys and slashes
    /// not escaped (written by `CanonicalJSONWriter`, which gives the same bytes faster); empty
    /// when a value cannot be encoded (a non-finite `Double`, which validation refuses).
    public var canonicalJSON: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var writer = CanonicalJSONWriter(encoder: encoder)
        do {
            try writer.write(self)
        } catch {
            return ""
        }
        return writer.text
    }

    /// A hash of the canonical JSON (64-bit FNV-1a, hexadecimal): equal hashes, same schema.
    public var canonicalHash: String { Self.hash(canonicalJSON) }

    /// The hash of a canonical JSON text.
    public static func hash(_ canonicalJSON: String) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in canonicalJSON.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The schema a canonical JSON text describes.
    public init(canonicalJSON: String) throws {
        self = try JSONDecoder().decode(ModelSchema.self, from: Data(canonicalJSON.utf8))
    }
}

extension ModelSchema {
    /// The table a store records its schema in (both dialects): one row, id 1, with the canonical
    /// hash and JSON.
    public static let recordTable = "modelgen_schema"
    /// `CREATE TABLE` of `recordTable`, the same in both dialects.
    public static let recordTableDefinition = "CREATE TABLE \(recordTable) (id INTEGER PRIMARY KEY CHECK (id = 1), hash TEXT NOT NULL, schema TEXT NOT NULL)"
}
