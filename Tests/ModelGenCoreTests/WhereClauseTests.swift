import Foundation
import ModelGenCore
import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// `modelgen delete --where` text: literals read exactly as Swift reads them, and every input
/// either translates or fails with a located error (the equivalence with `#Predicate` on real data
/// is checked in GeneratedModelTests.StorageAndPredicateTests).
final class WhereClauseTests: XCTestCase {
    private let yaml = """
        schema: Shop
        enums:
          Size: [small, large]
        entities:
          Item:
            attributes:
              name: String
              note: String?
              count: Int16
              weight: Double
              price: Decimal
              added: Date
              size: Size
            relationships:
              parent: { type: Item?, inverse: children }
              children: { type: "[Item]", inverse: parent }
        """

    private func translate(_ text: String) throws -> Result<QueryCondition, WhereClauseTranslator.Failure> {
        let schema = try XCTUnwrap(TestSupport.compile(yaml).schema)
        return WhereClauseTranslator.translate(text, entity: try XCTUnwrap(schema.entity(named: "Item")), schema: schema)
    }

    private func failure(_ text: String) throws -> WhereClauseTranslator.Failure? {
        if case let .failure(failure) = try translate(text) { return failure }
        return nil
    }

    /// Rows of a real database that the condition selects.
    private func select(_ text: String, rows: String) throws -> [Int64] {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try SQLiteDatabase(path: directory.appendingPathComponent("shop.sqlite").path)
        try database.execute(TestSupport.sqliteDDL(yaml) + rows)
        var renderer = PredicateSQLRenderer(dialect: .sqlite, table: "item")
        let sql = "SELECT id FROM item WHERE \(renderer.condition(try translate(text).get())) ORDER BY id"
        return try database.query(sql, renderer.bindings).compactMap { $0[0].integer }
    }

    func testStringLiteralsTakeSwiftsEscapes() throws {
        let rows = """
            INSERT INTO item (id, name, count, weight, price, added, size) VALUES
              (1, 'a' || char(10) || 'b', 0, 0, '0', 0, 'small'), (2, 'anb', 0, 0, '0', 0, 'small'),
              (3, 'tab' || char(9) || 'q"''', 0, 0, '0', 0, 'small'), (4, '😀', 0, 0, '0', 0, 'small');
            """
        XCTAssertEqual(try select(#"name == "a\nb""#, rows: rows), [1])
        XCTAssertEqual(try select(#"name == "tab\tq\"'""#, rows: rows), [3])
        XCTAssertEqual(try select(#"name == "\u{1F600}""#, rows: rows), [4])
        XCTAssertEqual(try select(#"name.hasSuffix("")"#, rows: rows), [1, 2, 3, 4], "every string ends with the empty string")
        XCTAssertEqual(try select(#"name.hasPrefix("") && name.contains("n")"#, rows: rows), [2])
        XCTAssertEqual(try failure(#"name == "\q""#)?.column, 10, "at the backslash")
        XCTAssertEqual(try failure(#"name == "\u{110000}""#)?.column, 10)
    }

    func testNilComparesAsInSwiftThroughRelationships() throws {
        let rows = """
            INSERT INTO item (id, name, count, weight, price, added, size, parent_id) VALUES
              (1, 'root', 0, 0, '0', 0, 'small', NULL), (2, 'child', 0, 0, '0', 0, 'small', 1),
              (3, 'grandchild', 0, 0, '0', 0, 'small', 2);
            """
        XCTAssertEqual(try select(#"parent.name != "root""#, rows: rows), [1, 3], "nil != \"root\" is true")
        XCTAssertEqual(try select(#"parent.parent.name == "root""#, rows: rows), [3])
        XCTAssertEqual(try select("parent.parent.name == nil", rows: rows), [1, 2])
        XCTAssertEqual(try select("!(parent.note == nil)", rows: rows), [])
        // Written with optional chaining, as in a #Predicate: the same.
        XCTAssertEqual(try select(#"$0.parent?.parent?.name == "root""#, rows: rows), [3])
        XCTAssertEqual(try select(#"parent?.name != "root""#, rows: rows), [1, 3])
        XCTAssertEqual(try failure(#"parent? .name == "root""#)?.column, 7, "a '?' not followed by '.' is no optional chaining")
    }

    func testTrueAndFalseAloneAreSwiftsLiterals() throws {
        let rows = """
            INSERT INTO item (id, name, count, weight, price, added, size) VALUES
              (1, 'a', 0, 0, '0', 0, 'small'), (2, 'b', 0, 0, '0', 0, 'small');
            """
        XCTAssertEqual(try select("true", rows: rows), [1, 2])
        XCTAssertEqual(try select("false", rows: rows), [])
        XCTAssertEqual(try select(#"!(name == "a") && true"#, rows: rows), [2])
        XCTAssertEqual(try select(#"false || name == "a""#, rows: rows), [1])
        XCTAssertEqual(try select("!false", rows: rows), [1, 2])
        XCTAssertEqual(try failure("true == false")?.column, 6, "a literal is not compared with a literal")
        // An attribute named `true` is read as `$0.true`, as in a #Predicate.
        let words = try XCTUnwrap(TestSupport.compile("""
            schema: Words
            entities:
              Flag:
                attributes:
                  true: Bool
            """).schema)
        let flag = try XCTUnwrap(words.entity(named: "Flag"))
        XCTAssertEqual(try WhereClauseTranslator.translate("true", entity: flag, schema: words).get(), .constant(true))
        XCTAssertNotEqual(try WhereClauseTranslator.translate("$0.true", entity: flag, schema: words).get(), .constant(true))
    }

    func testNumbersAreExactAndMustFitTheType() throws {
        let rows = """
            INSERT INTO item (id, name, count, weight, price, added, size) VALUES
              (1, 'a', 7, 0.1, '9.5', 0, 'small'), (2, 'b', -3, 2.5, '10', 0, 'large'), (3, 'c', 0, 1e300, '-20', 0, 'small');
            """
        XCTAssertEqual(try select("price > 9.75", rows: rows), [2], "Decimal compares by value, not as text")
        XCTAssertEqual(try select("price < -3", rows: rows), [3])
        XCTAssertEqual(try select("weight == 0.1", rows: rows), [1])
        XCTAssertEqual(try select("weight > 1e299", rows: rows), [3])
        XCTAssertEqual(try select("size == .large && count < 0", rows: rows), [2])
        XCTAssertTrue(try failure("count == 40000")?.message.contains("out of the range of Int16") == true)
        XCTAssertTrue(try failure("weight == " + String(repeating: "9", count: 400))?.message.contains("out of the range of Double") == true)
        XCTAssertTrue(try failure("count == 1.5")?.message.contains("not a whole number") == true)
        XCTAssertTrue(try failure("added < 12")?.message.contains("ISO 8601") == true)
        XCTAssertEqual(try failure("count == 12abc")?.column, 12)
    }

    func testDatesAreWrittenInISO8601() throws {
        let day = Date(timeIntervalSince1970: 1_706_659_200).timeIntervalSinceReferenceDate
        let rows = "INSERT INTO item (id, name, count, weight, price, added, size) VALUES (1, 'a', 0, 0, '0', \(day), 'small'), (2, 'b', 0, 0, '0', \(day + 1), 'small');"
        XCTAssertEqual(try select(#"added == "2024-01-31""#, rows: rows), [1])
        XCTAssertEqual(try select(#"added > "2024-01-31T00:00:00Z""#, rows: rows), [2])
    }

    func testToManyRelationshipsAndListsTranslate() throws {
        let rows = """
            INSERT INTO item (id, name, count, weight, price, added, size, parent_id) VALUES
              (1, 'root', 0, 0, '0', 0, 'small', NULL), (2, 'a', 1, 0, '0', 0, 'large', 1), (3, 'b', 2, 0, '0', 0, 'small', 1),
              (4, 'c', 3, 0, '0', 0, 'small', 2);
            """
        XCTAssertEqual(try select("children.isEmpty", rows: rows), [3, 4])
        XCTAssertEqual(try select("children.count == 2", rows: rows), [1])
        XCTAssertEqual(try select(#"children.contains { $0.name == "c" }"#, rows: rows), [2])
        XCTAssertEqual(try select("children.allSatisfy { size == .small }", rows: rows), [2, 3, 4], "true for no children, as in Swift")
        XCTAssertEqual(try select(#"children.contains { children.contains { name == "c" } }"#, rows: rows), [1])
        XCTAssertEqual(try select(#"["a", "c", "zz"].contains(name)"#, rows: rows), [2, 4])
        XCTAssertEqual(try select("[.large].contains(size) || [].contains(count)", rows: rows), [2])
        XCTAssertEqual(try select("[1, -1].contains(parent)", rows: rows), [2, 3], "a relationship's key")
        XCTAssertEqual(try failure("children.count == 1.5")?.message.contains("whole number"), true)
        XCTAssertEqual(try failure("children == nil")?.message.contains("after a to-many relationship"), true)
        // Of the object a to-one relationship reaches: false where there is none (`== true` in Swift).
        XCTAssertEqual(try select("parent.children.count == 2", rows: rows), [2, 3])
        XCTAssertEqual(try select("parent.children.allSatisfy { size == .small }", rows: rows), [4], "false for the root, which has no parent")
        XCTAssertEqual(try select("!parent.children.allSatisfy { size == .small }", rows: rows), [1, 2, 3])
        XCTAssertEqual(try failure("children.children.isEmpty")?.message.contains("after a to-many relationship"), true, "no path continues past a to-many")
        XCTAssertEqual(try failure(#"["a", 1].contains(name)"#)?.column, 7, "the literal that does not fit")
        XCTAssertEqual(try failure("[1, 2].contains(children)")?.message.contains("not a to-many relationship"), true)
        XCTAssertEqual(try failure("children.contains { name == 1 ")?.column, 29, "the literal that does not fit the related object's attribute")
    }

    func testDeepNestingIsALocatedErrorNotACrash() throws {
        for opener in ["(", "!"] {
            let text = String(repeating: opener, count: 40_000) + "count == 1" + (opener == "(" ? String(repeating: ")", count: 40_000) : "")
            let failure = try XCTUnwrap(try failure(text))
            XCTAssertEqual(failure.column, WhereClauseTranslator.maximumDepth + 1)
            XCTAssertTrue(failure.message.contains("more than \(WhereClauseTranslator.maximumDepth) levels"), failure.message)
        }
        let nested = String(repeating: "(", count: 150) + "count == 1" + String(repeating: ")", count: 150)
        XCTAssertEqual(try select(nested, rows: "INSERT INTO item (id, name, count, weight, price, added, size) VALUES (1, 'a', 1, 0, '0', 0, 'small');"), [1])
    }

    /// Thousands of mutations of valid clauses (characters inserted, removed, replaced or swapped,
    /// pieces of other clauses spliced in): each either translates, and then its SQL runs on a real
    /// SQLite file and renders for PostgreSQL, or fails at a column within the text with a message.
    /// None may stop the program.
    func testMutatedClausesRunOrFailAtAColumn() throws {
        let clauses = [#"name == "a\nb""#, #"name.hasPrefix("") && name.contains("n")"#, #"parent.parent.name == "root""#,
                       "!(parent.note == nil)", #"$0.parent?.parent?.name == "root""#, "price > 9.75", "weight > 1e299",
                       "size == .large && count < 0", #"added > "2024-01-31T00:00:00Z""#, "children.count == 2",
                       #"children.contains { $0.name == "c" }"#, "children.allSatisfy { size == .small }",
                       #"["a", "c", "zz"].contains(name)"#, "[1, -1].contains(parent)", "parent.children.count == 2",
                       "!parent.children.allSatisfy { size == .small } || id % 2 == 0"]
        let pieces = Array(#"()[]{}!&|=<>?.,"$0 -+*/%12095eE_nilsize.smallcount"#.unicodeScalars).map(String.init)
            + ["é", "😀", "\n", #"\n"#, #"\t"#, #"\\"#, #"\u{"#, #"\""#, "==", "&&", "||", "nil", "true", ".large", "parent.", "children.", "{ $0.", "1e400"]
        let schema = try XCTUnwrap(TestSupport.compile(yaml).schema)
        let entity = try XCTUnwrap(schema.entity(named: "Item"))
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try SQLiteDatabase(path: directory.appendingPathComponent("shop.sqlite").path)
        try database.execute(TestSupport.sqliteDDL(yaml) + """
            INSERT INTO item (id, name, note, count, weight, price, added, size, parent_id) VALUES
              (1, 'root', NULL, 0, 0, '0', 0, 'small', NULL), (2, 'a', 'x', 1, 2.5, '9.5', 1, 'large', 1), (3, 'b', NULL, -2, 1e300, '-3', 2, 'small', 2);
            """)
        var generator = SeededRandom(seed: 12_345)
        var translated = 0
        for round in 0..<8_000 {
            var text = Array(clauses[generator.below(clauses.count)].unicodeScalars).map(String.init)
            for _ in 0...generator.below(2) {
                let at = generator.below(text.count + 1)
                switch generator.below(4) {
                case 0: text.insert(pieces[generator.below(pieces.count)], at: at)
                case 1 where at < text.count: text.remove(at: at)
                case 2 where at < text.count: text[at] = pieces[generator.below(pieces.count)]
                default:
                    let other = Array(clauses[generator.below(clauses.count)].unicodeScalars).map(String.init)
                    let start = generator.below(other.count)
                    text.insert(contentsOf: other[start..<min(other.count, start + 1 + generator.below(8))], at: at)
                }
            }
            let clause = text.joined()
            switch WhereClauseTranslator.translate(clause, entity: entity, schema: schema) {
            case let .success(condition):
                translated += 1
                var sqlite = PredicateSQLRenderer(dialect: .sqlite, table: "item")
                let sql = "SELECT id FROM item WHERE \(sqlite.condition(condition))"
                XCTAssertNoThrow(try database.query(sql, sqlite.bindings), "round \(round): \(clause)")
                var postgresql = PredicateSQLRenderer(dialect: .postgresql, table: "item")
                XCTAssertFalse(postgresql.condition(condition).isEmpty, "round \(round): \(clause)")
            case let .failure(failure):
                XCTAssertTrue((1...clause.unicodeScalars.count + 1).contains(failure.column), "round \(round): \(clause) -> \(failure)")
                XCTAssertFalse(failure.message.isEmpty, "round \(round): \(clause)")
            }
            if testRun?.failureCount ?? 0 > 0 { return }
        }
        XCTAssertGreaterThan(translated, 300, "enough mutations stay valid to exercise the SQL they translate to")
    }
}
