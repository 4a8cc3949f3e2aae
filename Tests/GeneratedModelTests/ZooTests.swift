import Foundation
import ModelGenRuntime
import XCTest

/// The seeds' Zoo flows on plugin-generated models and a real SQLite file.
final class ZooTests: XCTestCase {
    private func container() throws -> ModelContainer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("modelgen-zoo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        return try ModelContainer(for: Zoo.self, configurations: ModelConfiguration(url: directory.appendingPathComponent("zoo.sqlite")))
    }

    func testAddAndEditAnAnimal() throws {
        let container = try container()
        let context = container.mainContext
        let mammal = AnimalCategory(name: "Mammal")
        let lion = Animal(name: "Lion", diet: .carnivorous)
        lion.category = mammal
        XCTAssertEqual(mammal.animals.map(\.name), ["Lion"], "the inverse is kept in sync in memory")
        context.insert(lion)
        XCTAssertTrue(context.hasChanges)
        XCTAssertEqual(context.insertedModelsArray.count, 2, "inserting an animal inserts its new category")
        try context.save()
        XCTAssertFalse(context.hasChanges)
        XCTAssertNotNil(lion.persistentModelID.id)

        lion.name = "King"
        XCTAssertEqual(context.changedModelsArray.count, 1)
        try context.save()
        let other = ModelContext(container)
        let fetched = try other.fetch(FetchDescriptor<Animal>())
        XCTAssertEqual(fetched.map(\.name), ["King"])
        XCTAssertEqual(fetched.first?.category?.name, "Mammal", "relationships load lazily")
        XCTAssertTrue(try other.fetch(FetchDescriptor<Animal>()).first === fetched.first, "one object per row per context")
    }

    func testCancelWithRollback() throws {
        let context = try container().mainContext
        let zebra = Animal(name: "Zebra")
        context.insert(zebra)
        try context.save()
        zebra.name = "Horse"
        context.insert(Animal(name: "Ghost"))
        context.rollback()
        XCTAssertEqual(zebra.name, "Zebra")
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Animal>()), 1)
        XCTAssertFalse(context.hasChanges)
    }

    func testDeletingACategoryCascadesToItsAnimals() throws {
        let context = try container().mainContext
        let birds = AnimalCategory(name: "Bird")
        let fish = AnimalCategory(name: "Fish")
        for (name, category) in [("Eagle", birds), ("Owl", birds), ("Shark", fish)] {
            let animal = Animal(name: name)
            animal.category = category
            context.insert(animal)
        }
        try context.save()
        let owl = try XCTUnwrap(birds.animals.first { $0.name == "Owl" })
        context.delete(birds)
        try context.save()
        XCTAssertEqual(try context.fetch(FetchDescriptor<Animal>()).map(\.name), ["Shark"])
        XCTAssertNil(owl.modelContext, "cascaded objects are detached too")
        XCTAssertEqual(fish.animals.map(\.name), ["Shark"])
    }

    func testIsDeletedAndModelContextAsTheSeedsDescribe() throws {
        let context = try container().mainContext
        let animal = Animal(name: "Dodo")
        context.insert(animal)
        try context.save()
        context.delete(animal)
        XCTAssertTrue(animal.isDeleted)
        XCTAssertFalse(context.deletedModelsArray.isEmpty)
        XCTAssertNotNil(animal.modelContext)
        try context.save()
        XCTAssertFalse(animal.isDeleted)
        XCTAssertTrue(context.deletedModelsArray.isEmpty)
        XCTAssertNil(animal.modelContext)
    }

    /// With `autosaveEnabled`, a save that fails keeps the changes for the next save (which throws)
    /// and says so on standard error (it was swallowed without a word).
    func testAFailedAutosaveKeepsTheChangesAndSaysSo() throws {
        func insertTwoReptiles() throws -> ModelContext {
            let context = try container().mainContext
            context.autosaveEnabled = true
            context.insert(AnimalCategory(name: "Reptile"))
            context.insert(AnimalCategory(name: "Reptile"))
            return context
        }
        let context = try insertTwoReptiles()
        XCTAssertTrue(context.hasChanges)
        XCTAssertEqual(context.insertedModelsArray.count, 1, "the first insert was saved, the second waits")
        XCTAssertThrowsError(try context.save()) { error in
            XCTAssertEqual(error as? ModelContextError, .uniqueViolation(entity: "AnimalCategory", attribute: "name"))
        }
        guard let child = try runInChildProcess("autosave", { _ = try insertTwoReptiles() }) else { return }
        XCTAssertTrue(child.output.contains("ModelContext autosave: nothing was saved, the changes stay unsaved:"), child.output)
    }

    /// A context with `autosaveEnabled` that goes with unsaved changes saves them first: attributes
    /// set make no save of their own (there is no run loop), and were dropped when the context went.
    /// What that save cannot write is dropped, and said.
    func testAContextWithAutosaveSavesWhatItHoldsWhenItGoes() throws {
        func renameReptiles(in container: ModelContainer, to name: String) throws {
            let context = ModelContext(container)
            context.autosaveEnabled = true
            context.insert(AnimalCategory(name: "Reptile"))
            context.insert(AnimalCategory(name: "Bird"))
            let reptile = try XCTUnwrap(context.fetch(FetchDescriptor<AnimalCategory>(predicate: #Predicate { $0.name == "Reptile" })).first)
            reptile.name = name
            XCTAssertTrue(context.hasChanges)
        }
        let container = try container()
        try renameReptiles(in: container, to: "Reptiles")
        XCTAssertEqual(try ModelContext(container).fetch(FetchDescriptor<AnimalCategory>(sortBy: [SortDescriptor(\.name)])).map(\.name), ["Bird", "Reptiles"])
        guard let child = try runInChildProcess("autosave-when-it-goes", { try renameReptiles(in: try self.container(), to: "Bird") }) else { return }
        XCTAssertTrue(child.output.contains("ModelContext was freed with unsaved changes, which its autosave could not write and were discarded: "), child.output)
    }

    func testReloadSampleDataDeletesAllCategoriesThenInserts() throws {
        let context = try container().mainContext
        let category = AnimalCategory(name: "Reptile")
        let snake = Animal(name: "Snake")
        snake.category = category
        context.insert(snake)
        context.insert(Animal(name: "Uncategorized"))
        try context.save()
        try context.delete(model: AnimalCategory.self)
        XCTAssertEqual(try context.fetch(FetchDescriptor<Animal>()).map(\.name), ["Uncategorized"])
        XCTAssertNil(snake.modelContext)
        context.insert(AnimalCategory(name: "Reptile"))
        try context.save()
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<AnimalCategory>()), 1)
    }
}
