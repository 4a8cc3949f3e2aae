@_spi(Backend) import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// `AttributeIndexes` (an object's changed attributes: bits for the first 64, a set beyond)
/// against `Set<Int>`, on random indexes on both sides of 64.
final class AttributeIndexesTests: XCTestCase {
    func testAttributeIndexesAgreeWithASet() {
        for seed in UInt64(1)...200 {
            var random = SeededRandom(seed: seed)
            var indexes = AttributeIndexes(), expected: Set<Int> = []
            for _ in 0..<Int.random(in: 0...40, using: &random) {
                let index = Int.random(in: 0..<(Bool.random(using: &random) ? 64 : 200), using: &random)
                indexes.insert(index)
                expected.insert(index)
                XCTAssertEqual(indexes.isEmpty, expected.isEmpty, "seed \(seed)")
            }
            XCTAssertEqual(Array(indexes), expected.sorted(), "seed \(seed)")
            for index in 0..<200 { XCTAssertEqual(indexes.contains(index), expected.contains(index), "seed \(seed), index \(index)") }
        }
    }
}
