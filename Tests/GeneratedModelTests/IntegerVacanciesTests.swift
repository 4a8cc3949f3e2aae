import Foundation
@_spi(Backend) import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// The values rows set aside in a unique integer column take (`IntegerVacancies`), checked against
/// brute force on random columns: values near the ends of Int64 and around 0, values the save
/// takes, ids up to thousands.
final class IntegerVacanciesTests: XCTestCase {
    func testVacanciesAreFreeDistinctAndNeverOverflow() {
        for seed in UInt64(1)...500 {
            var random = SeededRandom(seed: seed)
            func someValue() -> Int64 {
                switch Int.random(in: 0..<3, using: &random) {
                case 0: Int64.min + Int64.random(in: 0...20, using: &random)
                case 1: Int64.max - Int64.random(in: 0...20, using: &random)
                default: Int64.random(in: -20...20, using: &random)
                }
            }
            let stored = Set((0..<Int.random(in: 0...12, using: &random)).map { _ in someValue() })
            let taken = Set((0..<Int.random(in: 0...6, using: &random)).map { _ in someValue() })
            let ids = Array(Set((0..<Int.random(in: 1...5, using: &random)).map { _ in Int64.random(in: 1...Int64.random(in: 1...5_000, using: &random), using: &random) })).sorted()
            let trail = "seed \(seed): stored \(stored.sorted()), taken \(taken.sorted()), ids \(ids)"
            let values: [Int64]
            switch IntegerVacancies.beside(ids: ids, storedMin: stored.min(), storedMax: stored.max(), taken: taken) ?? .gaps(count: ids.count, excluding: stored.union(taken)) {
            case let .below(base):
                let (lowest, overflow) = base.subtractingReportingOverflow(ids.max()!)
                XCTAssertFalse(overflow, trail)
                XCTAssertTrue(stored.union(taken).allSatisfy { $0 >= base } && lowest < base, trail)
                values = ids.map { base - $0 }
            case let .above(base):
                let (highest, overflow) = base.addingReportingOverflow(ids.max()!)
                XCTAssertFalse(overflow, trail)
                XCTAssertTrue(stored.union(taken).allSatisfy { $0 <= base } && highest > base, trail)
                values = ids.map { base + $0 }
            case let .values(found):
                // The smallest free values, in order.
                let brute = Array((Int64.min...(Int64.min + 100)).lazy.filter { !stored.union(taken).contains($0) }.prefix(ids.count))
                XCTAssertEqual(found, brute, trail)
                values = found
            }
            XCTAssertEqual(values.count, ids.count, trail)
            XCTAssertEqual(Set(values).count, values.count, trail)
            XCTAssertTrue(stored.union(taken).isDisjoint(with: values), trail)
        }
    }

    func testTheSmallestFreeIDsSkipTakenOnesAndStopAtTheEnd() {
        XCTAssertEqual(IntegerVacancies.smallestFree(count: 3, excluding: [1, 2, 4], from: 1), [3, 5, 6])
        XCTAssertEqual(IntegerVacancies.smallestFree(count: 3, excluding: [.max - 1], from: .max - 2), [.max - 2, .max])
    }
}
