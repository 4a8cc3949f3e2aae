import Foundation
@testable import ModelGenCore
import ModelGenTestSupport
import XCTest

/// The dates schemas (`default:`) and `modelgen delete --where` write: every text is read as
/// Foundation's Gregorian calendar reads its fields, or refused when a field is out of its range
/// — never rolled over into the next month or cut down to its day.
final class ISO8601DateTests: XCTestCase {
    /// Random texts, most of them of the right shape with fields in and out of their ranges, some
    /// with one character changed: each is read as an independent reading of it (a pattern, then
    /// `Calendar` asked to build the date from its fields and give the same fields back), or
    /// refused where that reading refuses it.
    func testEveryTextMeansItsFieldsOrIsRefused() {
        var random = SeededRandom(seed: 8601)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        let shape = try! NSRegularExpression(pattern: #"\A([0-9]{4})-([0-9]{2})-([0-9]{2})(?:T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:(Z)|([+-])([0-9]{2}):([0-9]{2})))?\z"#)
        /// The instant the text means, by the independent reading (nil: refused).
        func expected(_ text: String) -> Date? {
            let whole = NSRange(text.startIndex..., in: text)
            guard let match = shape.firstMatch(in: text, range: whole) else { return nil }
            func field(_ index: Int) -> Int? { Range(match.range(at: index), in: text).flatMap { Int(text[$0]) } }
            let components = DateComponents(year: field(1), month: field(2), day: field(3), hour: field(4) ?? 0, minute: field(5) ?? 0, second: field(6) ?? 0)
            guard let date = calendar.date(from: components),
                  calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date) == components else { return nil }
            guard let sign = Range(match.range(at: 8), in: text).map({ text[$0] }) else { return date }
            guard let hours = field(9), let minutes = field(10), hours < 24, minutes < 60 else { return nil }
            return date.addingTimeInterval((sign == "+" ? -1 : 1) * Double(hours * 3_600 + minutes * 60))
        }
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        var accepted = 0, refused = 0
        for _ in 0..<20_000 {
            // Years from 1583: before, Foundation's calendar is Julian, where ISO 8601's is not.
            var text = "\(1583 + random.below(8417))-\(two(random.below(14)))-\(two(random.below(33)))"
            switch random.below(3) {
            case 0: break
            case 1: text += "T\(two(random.below(26))):\(two(random.below(62))):\(two(random.below(62)))Z"
            default: text += "T\(two(random.below(26))):\(two(random.below(62))):\(two(random.below(62)))\(random.below(2) == 0 ? "+" : "-")\(two(random.below(26))):\(two(random.below(62)))"
            }
            if random.below(5) == 0 {
                var characters = Array(text)
                characters[random.below(characters.count)] = Character(Unicode.Scalar(UInt8(32 + random.below(95))))
                text = String(characters)
            }
            let read = ISO8601Date.date(from: text)
            if let year = Int(text.prefix(4)), year < 1583 {
                // A changed digit made a year the oracle reads in the Julian calendar: the same
                // verdict. Foundation's calendar has no year 0 (1 BC is year 1 of the era before);
                // ISO 8601's year 0000 is a leap year, as 0400 is in both calendars.
                XCTAssertEqual(read == nil, expected(year == 0 ? "0400" + text.dropFirst(4) : text) == nil, text)
            } else {
                XCTAssertEqual(read, expected(text), text)
            }
            if read == nil { refused += 1 } else { accepted += 1 }
        }
        XCTAssertGreaterThan(accepted, 2_000)
        XCTAssertGreaterThan(refused, 2_000)
        // Before 1583 too, in the proleptic calendar ISO 8601 specifies (days of 86,400 seconds).
        XCTAssertEqual(ISO8601Date.date(from: "0000-03-01")?.timeIntervalSince1970, -62_162_035_200)
        XCTAssertEqual(ISO8601Date.date(from: "1582-10-15")?.timeIntervalSince1970, -12_219_292_800, "the Gregorian calendar's first day")
        XCTAssertEqual(ISO8601Date.date(from: "1582-10-05")?.timeIntervalSince1970, -12_220_156_800, "ten days before, not the Julian calendar's October 5")
        XCTAssertNil(ISO8601Date.date(from: "1900-02-29"))
        XCTAssertNotNil(ISO8601Date.date(from: "2000-02-29"))
    }

    /// A schema's default and a `--where` date that is not a date are errors, not another date.
    func testADateOutOfRangeIsAnErrorWhereverItIsWritten() throws {
        for text in ["2024-02-30", "2024-01-01T25:00:00Z", "2024-01-01T23:59:60Z", "2024-01-01T12:00:00+25:00"] {
            let yaml = "schema: Dates\nentities:\n  Item:\n    attributes:\n      added: { type: Date, default: \"\(text)\" }\n"
            let compilation = ModelGen.generate(path: "Dates.yaml", bytes: Array(yaml.utf8))
            XCTAssertTrue(compilation.diagnostics.contains { $0.message.contains("is not an ISO 8601 date") }, "\(text): \(compilation.diagnostics)")
            let schema = try XCTUnwrap(ModelGen.generate(path: "Dates.yaml", bytes: Array("schema: Dates\nentities:\n  Item:\n    attributes:\n      added: Date\n".utf8)).schema)
            let entity = try XCTUnwrap(schema.entities.first)
            guard case let .failure(failure) = WhereClauseTranslator.translate("added < \"\(text)\"", entity: entity, schema: schema) else {
                XCTFail("--where accepted \(text)")
                continue
            }
            XCTAssertTrue(failure.message.contains("is not an ISO 8601 date"), failure.message)
        }
    }
}
