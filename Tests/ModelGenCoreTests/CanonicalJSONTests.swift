import Foundation
import ModelGenCore
import ModelGenTestSupport
import XCTest

/// The canonical JSON is recorded in every store and hashed to tell schema versions apart: the
/// writer that makes it quickly must give exactly the bytes `JSONEncoder` makes of the schema's
/// `Codable` form (sorted keys, slashes not escaped), on accepted schemas and on any value the
/// types can hold — strings that need escaping, every kind of `Double`, optional members present
/// and absent, every enum case.
final class CanonicalJSONTests: XCTestCase {
    /// The canonical form by definition.
    private func encoded(_ schema: ModelSchema) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(schema)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    func testAcceptedSchemasGiveJSONEncodersBytes() throws {
        var compared = 0
        for url in TestSupport.exampleSchemas {
            let (schema, _) = ModelGen.load(path: url.lastPathComponent, bytes: [UInt8](try Data(contentsOf: url)))
            guard let schema else { continue }
            XCTAssertEqual(schema.canonicalJSON, encoded(schema), url.lastPathComponent)
            compared += 1
        }
        for seed in UInt64(1)...400 {
            guard let schema = ModelGen.load(path: "Fuzz.yaml", bytes: Array(RandomSchema.yaml(seed: seed).utf8)).0 else { continue }
            XCTAssertEqual(schema.canonicalJSON, encoded(schema), "seed \(seed)")
            compared += 1
        }
        XCTAssertGreaterThan(compared, 100)
    }

    func testAnyValueGivesJSONEncodersBytes() throws {
        var nonFinite = 0
        for seed in UInt64(1)...2_000 {
            var random = SeededRandom(seed: seed &* 7_919)
            let schema = Self.randomSchema(&random)
            let expected = encoded(schema)
            if expected.isEmpty { nonFinite += 1 }
            XCTAssertEqual(schema.canonicalJSON, expected, "seed \(seed)")
        }
        // Some values JSONEncoder refuses (a non-finite Double): the text is then empty for both.
        XCTAssertGreaterThan(nonFinite, 0)
    }

    // MARK: - Random values of the schema's types (not necessarily valid schemas)

    private static let pieces = ["a", "Z", "_", "0", "9", " ", "\"", "\\", "/", "'", "{", "}", "$", "\u{7F}", "\u{0}", "\u{1}",
                                 "\u{8}", "\t", "\n", "\u{C}", "\r", "\u{1F}", "é", "ß", "\u{301}", "\u{2028}", "\u{FEFF}", "日本", "😀", "\u{FFFD}"]

    private static func string(_ random: inout SeededRandom) -> String {
        // Mostly plain names (the fast path), sometimes anything.
        if random.below(3) > 0 { return "name\(random.below(1000))" }
        return (0..<random.below(6)).map { _ in pieces[random.below(pieces.count)] }.joined()
    }

    private static func strings(_ random: inout SeededRandom) -> [String] {
        (0..<random.below(3)).map { _ in string(&random) }
    }

    private static func double(_ random: inout SeededRandom) -> Double {
        let special: [Double] = [0, -0.0, 1, -1, 0.1, 1e-7, 1e21, 1e300, 5e-324, .greatestFiniteMagnitude, 123_456_789_012_345_678, 0.5, 2.5e-8]
        switch random.below(12) {
        case 0: return [.nan, .infinity, -.infinity][random.below(3)]
        case 1...5: return special[random.below(special.count)]
        default: return Double(bitPattern: random.next())
        }
    }

    private static func defaultValue(_ random: inout SeededRandom) -> DefaultValue? {
        switch random.below(10) {
        case 0: .string(string(&random))
        case 1: .integer(Int64(bitPattern: random.next()))
        case 2: .real(double(&random))
        case 3: .bool(random.below(2) == 0)
        case 4: .date(double(&random), iso8601: string(&random))
        case 5: .uuid(string(&random))
        case 6: .data((0..<random.below(4)).map { _ in UInt8(random.below(256)) })
        case 7: .decimal(string(&random))
        case 8: .enumCase(string(&random))
        default: nil
        }
    }

    private static func optionalCount(_ random: inout SeededRandom) -> Int? {
        random.below(3) == 0 ? Int(truncatingIfNeeded: random.next()) : nil
    }

    private static func randomSchema(_ random: inout SeededRandom) -> ModelSchema {
        let enums = (0..<random.below(3)).map { _ in
            EnumType(name: string(&random), cases: strings(&random),
                     caseOriginalNames: Dictionary((0..<random.below(3)).map { _ in (string(&random), strings(&random)) }, uniquingKeysWith: { first, _ in first }))
        }
        let entities = (0..<random.below(4)).map { _ in
            Entity(name: string(&random), tableName: string(&random),
                   attributes: (0..<random.below(4)).map { _ in
                       Attribute(name: string(&random), columnName: string(&random),
                                 type: random.below(2) == 0 ? .scalar(ScalarType.allCases[random.below(ScalarType.allCases.count)]) : .enumeration(string(&random)),
                                 isOptional: random.below(2) == 0, isUnique: random.below(2) == 0, isIndexed: random.below(2) == 0,
                                 isTransient: random.below(2) == 0, defaultValue: defaultValue(&random), originalNames: strings(&random))
                   },
                   relationships: (0..<random.below(3)).map { _ in
                       let storage: RelationshipStorage = switch random.below(3) {
                       case 0: .foreignKey(column: string(&random), isUnique: random.below(2) == 0)
                       case 1: .inverseForeignKey
                       default: .joinTable(name: string(&random))
                       }
                       return Relationship(entity: string(&random), name: string(&random), target: string(&random),
                                           cardinality: random.below(2) == 0 ? .toMany : .toOne(isOptional: random.below(2) == 0),
                                           inverse: random.below(2) == 0 ? string(&random) : nil,
                                           deleteRule: DeleteRule.allCases[random.below(DeleteRule.allCases.count)],
                                           minimumModelCount: optionalCount(&random), maximumModelCount: optionalCount(&random),
                                           originalNames: strings(&random), storage: storage)
                   },
                   uniqueConstraints: (0..<random.below(3)).map { _ in strings(&random) },
                   indexes: (0..<random.below(3)).map { _ in strings(&random) },
                   originalNames: strings(&random))
        }
        let joinTables = (0..<random.below(3)).map { _ in
            JoinTable(name: string(&random), entity: string(&random), relationship: string(&random), table: string(&random),
                      column: string(&random), target: string(&random), targetTable: string(&random), targetColumn: string(&random),
                      inverse: random.below(2) == 0 ? string(&random) : nil)
        }
        return ModelSchema(name: string(&random), sourceFile: string(&random), enums: enums, entities: entities, joinTables: joinTables)
    }
}
