@testable import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// The identity map's table against a `Dictionary`: random inserts, replacements, lookups that
/// register what they do not find, and removals of ids drawn dense (an array of slots), sparse (a
/// hash table, the turn from the one to the other and back, as a fetch sorted by another column
/// makes: a few ids from all over a range, then the rest of it), negative, at the ends of `Int64`,
/// and in strides that crowd a masked table (powers of two).
final class RowIDTableTests: XCTestCase {
    func testTheTableAgreesWithADictionaryWhateverTheIds() {
        let backings = (0..<8).map { _ in ModelBackingData(entity: Project.entity) }
        var turnsBack = 0
        for seed in UInt64(1)...60 {
            var random = SeededRandom(seed: seed)
            let stride: Int64 = [1, 2, 7, 1 << 10, 1 << 20, 1 << 40][Int(seed % 6)]
            // From 1, from below zero, up to the largest id, from the smallest, and across the
            // farthest id an array of slots holds.
            let base: Int64 = [1, -5_000 * stride, .max - 1_499 * stride, .min, (1 << 62) - 700 * stride][Int(seed % 5)]
            var table = RowIDTable(), expected: [Int64: ModelBackingData] = [:]
            var wasArray = true
            for step in 0..<3_000 {
                // Some runs start at both ends of the range, then fill it.
                let fromTheEnds = seed % 3 == 0 && step < 10
                let id = base + (fromTheEnds ? [0, 1_499][step % 2] : Int64.random(in: 0..<1_500, using: &random)) * stride
                let backing = backings.randomElement(using: &random)!
                switch Int.random(in: 0..<4, using: &random) {
                case 0:
                    let onlyIf = backings.randomElement(using: &random)!
                    if seed % 2 == 0 {
                        table.remove(id, ifItIs: Unmanaged.passUnretained(onlyIf).toOpaque())
                        if expected[id] === onlyIf { expected[id] = nil }
                    } else {
                        table.remove(id)
                        expected[id] = nil
                    }
                case 1:
                    var made = false
                    let found = table.registered(id) {
                        made = true
                        return backing
                    }
                    XCTAssertEqual(made, expected[id] == nil, "seed \(seed): id \(id)")
                    XCTAssertTrue(found === (expected[id] ?? backing), "seed \(seed): id \(id)")
                    expected[id] = found
                default:
                    table.insert(backing, for: id)
                    expected[id] = backing
                }
                if table.isArrayOfSlots && !wasArray { turnsBack += 1 }
                wasArray = table.isArrayOfSlots
                if step % 500 == 499 {
                    XCTAssertEqual(table.count, expected.count, "seed \(seed), stride \(stride)")
                    for (id, backing) in expected { XCTAssertTrue(table[id] === backing, "seed \(seed): id \(id)") }
                    for probe in 0..<200 { let id = base + Int64(probe) * stride; XCTAssertTrue(table[id] === expected[id], "seed \(seed): id \(id)") }
                    XCTAssertEqual(Set(table.all.map(\.id)), Set(expected.keys), "seed \(seed)")
                }
            }
        }
        XCTAssertGreaterThan(turnsBack, 5, "few tables went back from hashing to an array of slots")
    }

    /// The registry queues the entries of models that went and removes them before its next use:
    /// models made, found and dropped in random order (their backing data freed, its memory
    /// reused by the next ones), checked against a dictionary of the models alive.
    func testTheRegistryForgetsEachModelThatWentAndNoOther() {
        for seed in UInt64(1)...60 {
            var random = SeededRandom(seed: seed)
            let registry = ModelContext.Registry()
            var alive: [Int64: Project] = [:]
            // Models whose row got another registered model while the app kept them.
            var replaced: [(id: Int64, model: Project)] = []
            for step in 0..<4_000 {
                let id = Int64.random(in: 1...600, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0:
                    // The app drops a model (its deinit queues the entry).
                    if let model = alive.removeValue(forKey: id) {
                        registry.remove(id, ifItIs: model.persistentBackingData)
                    }
                    if !replaced.isEmpty, Bool.random(using: &random) {
                        let (id, model) = replaced.removeLast()
                        registry.remove(id, ifItIs: model.persistentBackingData)
                    }
                case 1:
                    let model = Project(code: "r\(id)")
                    registry.register(model.persistentBackingData, id: id)
                    if let old = alive.updateValue(model, forKey: id) { replaced.append((id, old)) }
                case 2:
                    var made: Project?
                    let backing = registry.registered(id) {
                        let model = Project(code: "p\(id)")
                        made = model
                        return model.persistentBackingData
                    }
                    XCTAssertEqual(made == nil, alive[id] != nil, "seed \(seed), step \(step): id \(id)")
                    if let made { alive[id] = made }
                    XCTAssertTrue(backing === alive[id]!.persistentBackingData, "seed \(seed), step \(step): id \(id)")
                default:
                    XCTAssertTrue(registry[id] === alive[id]?.persistentBackingData, "seed \(seed), step \(step): id \(id)")
                }
                if step % 1_000 == 999 {
                    XCTAssertEqual(Set(registry.all.map(\.id)), Set(alive.keys), "seed \(seed)")
                }
            }
        }
    }
}
