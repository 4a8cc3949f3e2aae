import Foundation
import ModelGenCore
import ModelGenRuntime
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
}
