import Foundation
@_spi(Backend) import ModelGenRuntime
import ModelGenPostgres
import PostgresNIO
import XCTest

/// What the seed flows ask of a context, on either backend: `ModelContext` (SQLite, loading
/// relationships on access) and `PostgresModelContext` (loading them when asked). One test body
/// runs on both.
protocol SeedFlowContext: AnyObject {
    func insert<Model: PersistentModel>(_ model: Model)
    func delete<Model: PersistentModel>(_ model: Model)
    func save() async throws
    func rollback()
    var hasChanges: Bool { get }
    var insertedModelsArray: [any PersistentModel] { get }
    var changedModelsArray: [any PersistentModel] { get }
    var deletedModelsArray: [any PersistentModel] { get }
    func fetch<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>) async throws -> [Model]
    func fetchCount<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>) async throws -> Int
    @discardableResult
    func delete<Model: PersistentModel>(model: Model.Type, where predicate: Predicate<Model>?, dryRun: Bool) async throws -> DeletionReport
    /// Loads a relationship before it is read (SQLite loads on access: nothing to do).
    func load<Model: PersistentModel>(_ keyPath: PartialKeyPath<Model>, of objects: [Model]) async throws
}

extension ModelContext: SeedFlowContext {
    func load<Model: PersistentModel>(_ keyPath: PartialKeyPath<Model>, of objects: [Model]) async throws {}
}

extension PostgresModelContext: SeedFlowContext {}

final class BothBackendsTests: XCTestCase {
    /// Runs `flow` with a way to make contexts over one new database of `schema`, on SQLite and on PostgreSQL.
    private func onBothBackends(_ schema: any ModelSchemaDefinition.Type, _ flow: (_ backend: String, _ makeContext: () -> any SeedFlowContext) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("modelgen-both-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let sqlite = try ModelContainer(for: schema, configurations: ModelConfiguration(url: directory.appendingPathComponent("store.sqlite")))
        try await flow("SQLite") { ModelContext(sqlite) }
        try await PostgresTestServer.withClient { client in
            let container = try await PostgresModelContainer(for: schema, client: client)
            try await flow("PostgreSQL") { PostgresModelContext(container) }
        }
    }

    /// Whether `context` manages `object` (SwiftData's `modelContext`, for either kind of context).
    private func isManaged(_ object: any PersistentModel, by context: any SeedFlowContext) -> Bool {
        object.persistentBackingData.managingContext === context
    }

    func testAddEditCancelAndCascadeAsTheSeedsDescribe() async throws {
        try await onBothBackends(Zoo.self) { backend, makeContext in
            let context = makeContext()
            let mammal = AnimalCategory(name: "Mammal")
            let lion = Animal(name: "Lion", diet: .carnivorous)
            lion.category = mammal
            XCTAssertEqual(mammal.animals.map(\.name), ["Lion"], "\(backend): the inverse is kept in sync in memory")
            context.insert(lion)
            XCTAssertEqual(context.insertedModelsArray.count, 2, "\(backend): inserting an animal inserts its new category")
            try await context.save()
            XCTAssertFalse(context.hasChanges)
            lion.name = "King"
            XCTAssertEqual(context.changedModelsArray.count, 1)
            try await context.save()

            let other = makeContext()
            let fetched = try await other.fetch(FetchDescriptor<Animal>())
            try await other.load(\.category, of: fetched)
            XCTAssertEqual(fetched.map(\.name), ["King"], backend)
            XCTAssertEqual(fetched.first?.category?.name, "Mammal", backend)
            try await assertEqual(await other.fetch(FetchDescriptor<Animal>()).first === fetched.first, true, "\(backend): one object per row per context")

            // Cancel with rollback.
            lion.name = "Horse"
            context.insert(Animal(name: "Ghost"))
            context.rollback()
            XCTAssertEqual(lion.name, "King", backend)
            try await assertEqual(await context.fetchCount(FetchDescriptor<Animal>()), 1, backend)
            XCTAssertFalse(context.hasChanges)

            // Deleting a category cascades to its animals, which leave the context.
            let fish = AnimalCategory(name: "Fish")
            let shark = Animal(name: "Shark")
            shark.category = fish
            context.insert(shark)
            try await context.save()
            context.delete(mammal)
            XCTAssertTrue(mammal.isDeleted)
            XCTAssertFalse(context.deletedModelsArray.isEmpty)
            try await context.save()
            XCTAssertFalse(mammal.isDeleted)
            XCTAssertFalse(self.isManaged(lion, by: context), "\(backend): cascaded objects are detached too")
            try await assertEqual(await context.fetch(FetchDescriptor<Animal>()).map(\.name), ["Shark"], backend)

            // Reload sample data: delete every category, then insert.
            try await context.delete(model: AnimalCategory.self, where: nil, dryRun: false)
            XCTAssertFalse(self.isManaged(shark, by: context), backend)
            context.insert(AnimalCategory(name: "Reptile"))
            try await context.save()
            try await assertEqual(await context.fetchCount(FetchDescriptor<AnimalCategory>()), 1, backend)
            try await assertEqual(await context.fetchCount(FetchDescriptor<Animal>()), 0, backend)
        }
    }

    func testARefusedDeleteChangesNothingAndManyToManyMembershipIsSaved() async throws {
        try await onBothBackends(Lending.self) { backend, makeContext in
            let context = makeContext()
            let author = Author(name: "Herbert")
            let dune = Book(title: "Dune"), second = Book(title: "Second")
            author.books = [dune, second]
            let loan = Loan(borrower: "Ann")
            loan.book = dune
            let ann = Reader(name: "Ann")
            ann.books = [dune, second]
            XCTAssertEqual(second.readers.map(\.name), ["Ann"], "\(backend): the inverse is kept in sync in memory")
            context.insert(author)
            context.insert(ann)
            try await context.save()

            context.delete(author)
            do {
                try await context.save()
                XCTFail("\(backend): the loan's deny rule let the author go")
            } catch {
                XCTAssertTrue(error is DeletionRefused || error is PostgresDeletionRefused, "\(backend): \(error)")
                XCTAssertTrue("\(error)".contains("Book.loans (deny) still refers to"), "\(backend): \(error)")
            }
            let reader = makeContext()
            try await assertEqual(await reader.fetchCount(FetchDescriptor<Book>()), 2, "\(backend): a refused delete changes nothing")
            context.rollback()

            let readers = try await reader.fetch(FetchDescriptor<Reader>())
            try await reader.load(\.books, of: readers)
            XCTAssertEqual(readers.first?.books.map(\.title).sorted(), ["Dune", "Second"], backend)
            let dryRun = try await context.delete(model: Book.self, where: #Predicate { $0.title == "Second" }, dryRun: true)
            XCTAssertEqual(dryRun.deletedCount(of: "Book"), 1, backend)
            try await assertEqual(await context.fetchCount(FetchDescriptor<Book>()), 2, "\(backend): a dry run changes nothing")
            let report = try await context.delete(model: Book.self, where: #Predicate { $0.title == "Second" }, dryRun: false)
            XCTAssertEqual(report.deletedCount(of: "Book"), 1, backend)
            try await context.load(\.books, of: [ann])
            XCTAssertEqual(ann.books.map(\.title), ["Dune"], "\(backend): memory follows the store after the delete")

            // Returning the book lets the author go, with its books.
            context.delete(loan)
            try await context.save()
            context.delete(author)
            try await context.save()
            try await assertEqual(await reader.fetchCount(FetchDescriptor<Book>()), 0, backend)
            XCTAssertFalse(self.isManaged(dune, by: context), backend)
        }
    }
}
