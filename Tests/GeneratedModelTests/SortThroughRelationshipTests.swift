import Foundation
@_spi(Backend) import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// A `SortDescriptor` through a to-one relationship (`\Animal.category?.name`, as SwiftData takes
/// it) orders as Swift's own sort of the objects does, on both backends: random animals in random
/// categories (or none: nil first going forward), sorted each way, saved and with unsaved changes
/// — a category renamed, animals moved, new animals in new categories — that the order must see.
extension BothBackendsTests {
    func testSortsThroughAToOneRelationshipOrderAsSwiftDoes() async throws {
        try await onBothBackends(Zoo.self, seeds: UInt64(1)...4) { seed, flow in
            var random = SeededRandom(seed: seed)
            let context = flow.makeContext()
            let categories = (0..<4).map { AnimalCategory(name: "category\($0 * 7 % 5)") }
            var animals = (0..<12).map { index in
                let animal = Animal(name: "animal\(index * 5 % 12)")
                animal.category = Bool.random(using: &random) ? nil : categories.randomElement(using: &random)
                return animal
            }
            for animal in animals { context.insert(animal) }
            for category in categories { context.insert(category) }
            try await context.save()
            try await assertSorted(animals, in: context, "\(flow.name) seed \(seed), saved")

            // Unsaved: a category renamed, animals moved (or let go), a new animal in a new category.
            categories[Int.random(in: 0..<categories.count, using: &random)].name = "category9"
            for animal in animals where Int.random(in: 0..<3, using: &random) == 0 {
                animal.category = Bool.random(using: &random) ? nil : categories.randomElement(using: &random)
            }
            let newcomer = Animal(name: "animal99")
            newcomer.category = AnimalCategory(name: "category\(Int.random(in: 0..<12, using: &random))x")
            context.insert(newcomer)
            animals.append(newcomer)
            try await assertSorted(animals, in: context, "\(flow.name) seed \(seed), unsaved")
            try await context.save()
            try await assertSorted(animals, in: flow.makeContext(), "\(flow.name) seed \(seed), saved again, read by a new context")
        }
    }

    /// Fetches every animal sorted by its category's name (each way), then by its own, and compares
    /// the names with Swift's sort of `animals` (every name differs; the store compares text by its
    /// bytes, which for these ASCII names is Swift's order).
    private func assertSorted(_ animals: [Animal], in context: some SeedFlowContext, _ label: String) async throws {
        for order in [SortOrder.forward, .reverse] {
            let descriptors = [SortDescriptor(\Animal.category?.name, order: order), SortDescriptor(\Animal.name)]
            let fetched = try await context.fetch(FetchDescriptor<Animal>(sortBy: descriptors)).map(\.name)
            XCTAssertEqual(fetched, animals.sorted(using: descriptors).map(\.name), "\(label), \(order)")
        }
    }
}
