@_spi(Backend) @testable import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// `OrderedObjects` (a to-many list's members, a context's inserted and deleted objects: removals
/// leave slots that are skipped, then compacted) against a plain array, on random sequences of
/// appends, removals (of members and of others), removals of sets, and indexing at any point.
final class OrderedObjectsTests: XCTestCase {
    func testOrderedObjectsAgreeWithAnArray() {
        let pool = (0..<40).map { Project(code: "p\($0)") }
        for seed in UInt64(1)...300 {
            var random = SeededRandom(seed: seed)
            let start = Array(pool.shuffled(using: &random).prefix(random.below(30)))
            var objects = OrderedObjects(start, indexed: Bool.random(using: &random))
            var expected: [any PersistentModel] = start
            for step in 0..<random.below(400) {
                let object = pool[random.below(pool.count)]
                let isMember = expected.contains { $0 === object }
                switch random.below(10) {
                case 0..<4:
                    if !isMember {
                        objects.appendNew(object)
                        expected.append(object)
                    }
                case 4..<8:
                    XCTAssertEqual(objects.remove(object), isMember, "seed \(seed), step \(step): remove")
                    expected.removeAll { $0 === object }
                case 8:
                    let excluded = Set(pool.filter { _ in random.below(8) == 0 }.map(ObjectIdentifier.init))
                    objects.removeAll(in: excluded)
                    expected.removeAll { excluded.contains(ObjectIdentifier($0)) }
                default:
                    objects.index()
                }
                XCTAssertTrue(objects.elements.elementsEqual(expected, by: ===), "seed \(seed), step \(step): members or their order")
                XCTAssertEqual(objects.count, expected.count, "seed \(seed), step \(step)")
                XCTAssertEqual(objects.isEmpty, expected.isEmpty, "seed \(seed), step \(step)")
                for other in pool { XCTAssertEqual(objects.contains(other), expected.contains { $0 === other }, "seed \(seed), step \(step): membership") }
                if objects.isIndexed {
                    let positions = expected.map { objects.position(of: $0) }
                    XCTAssertFalse(positions.contains(nil), "seed \(seed), step \(step): a member without a position")
                    XCTAssertEqual(positions.compactMap { $0 }, positions.compactMap { $0 }.sorted(), "seed \(seed), step \(step): positions out of order")
                }
            }
        }
    }
}
