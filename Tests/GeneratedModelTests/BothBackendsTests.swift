import Foundation
@_spi(Backend) import ModelGenRuntime
import ModelGenPostgres
import ModelGenTestSupport
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
    func fetchIdentifiers<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>) async throws -> [PersistentIdentifier]
    @discardableResult
    func delete<Model: PersistentModel>(model: Model.Type, where predicate: Predicate<Model>?, dryRun: Bool) async throws -> DeletionReport
    /// Loads a relationship before it is read (SQLite loads on access: nothing to do).
    func load<Model: PersistentModel>(_ keyPath: PartialKeyPath<Model>, of objects: [Model]) async throws
    func model(for identifier: PersistentIdentifier) async throws -> (any PersistentModel)?
    func registeredModel<Model: PersistentModel>(for identifier: PersistentIdentifier) -> Model?
    /// The objects `enumerate(_:batchSize:block:)` gives the block, in order.
    func enumerated<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>, batchSize: Int) async throws -> [Model]
}

extension ModelContext: SeedFlowContext {
    func load<Model: PersistentModel>(_ keyPath: PartialKeyPath<Model>, of objects: [Model]) async throws {}

    func enumerated<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>, batchSize: Int) async throws -> [Model] {
        var objects: [Model] = []
        try enumerate(descriptor, batchSize: batchSize) { objects.append($0) }
        return objects
    }
}

extension PostgresModelContext: SeedFlowContext {
    func enumerated<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>, batchSize: Int) async throws -> [Model] {
        var objects: [Model] = []
        try await enumerate(descriptor, batchSize: batchSize) { objects.append($0) }
        return objects
    }
}

/// One new database of a schema on one backend: its name, and what a flow does with its container.
struct SeedFlowBackend {
    let name: String
    /// A new context over the database.
    let makeContext: () -> any SeedFlowContext
    /// The container's `deleteAllData()`.
    let deleteAllData: () async throws -> Void
}

/// The seeds' flows (the examples' schemas), each from one test body on SQLite and on PostgreSQL.
final class BothBackendsTests: XCTestCase {
    /// Runs `flow` on one new database of `schema` on SQLite, then on PostgreSQL.
    func onBothBackends(_ schema: any ModelSchemaDefinition.Type, _ flow: (_ backend: SeedFlowBackend) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("modelgen-both-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let sqlite = try ModelContainer(for: schema, configurations: ModelConfiguration(url: directory.appendingPathComponent("store.sqlite")))
        try await flow(SeedFlowBackend(name: "SQLite", makeContext: { ModelContext(sqlite) }, deleteAllData: { try sqlite.deleteAllDataThrowing() }))
        try await PostgresTestServer.withClient { client in
            let container = try await PostgresModelContainer(for: schema, client: client)
            try await flow(SeedFlowBackend(name: "PostgreSQL", makeContext: { PostgresModelContext(container) }, deleteAllData: { try await container.deleteAllData() }))
        }
    }

    /// Runs `run` for each seed on a new database of `schema` on SQLite, then on PostgreSQL, the
    /// database emptied before each seed; stops at the first failure.
    func onBothBackends(_ schema: any ModelSchemaDefinition.Type, seeds: ClosedRange<UInt64>,
                        _ run: (_ seed: UInt64, _ backend: SeedFlowBackend) async throws -> Void) async throws {
        try await onBothBackends(schema) { flow in
            for seed in seeds {
                try await flow.deleteAllData()
                try await run(seed, flow)
                if testRun?.failureCount ?? 0 > 0 { return }
            }
        }
    }

    /// Whether `context` manages `object` (SwiftData's `modelContext`, for either kind of context).
    private func isManaged(_ object: any PersistentModel, by context: any SeedFlowContext) -> Bool {
        object.persistentBackingData.managingContext === context
    }

    func testAddEditCancelAndCascadeAsTheSeedsDescribe() async throws {
        try await onBothBackends(Zoo.self) { flow in
            let (backend, makeContext) = (flow.name, flow.makeContext)
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
        try await onBothBackends(Lending.self) { flow in
            let (backend, makeContext) = (flow.name, flow.makeContext)
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
    /// Inserting an object the context marked deleted takes the deletion back, as an app's undo
    /// would: the object stays, with the changes it holds, and the save writes them; once the
    /// deletion is saved, inserting it brings it back as a new object.
    func testInsertingADeletedObjectAgainKeepsIt() async throws {
        try await onBothBackends(Catalog.self) { flow in
            let (backend, makeContext) = (flow.name, flow.makeContext)
            let context = makeContext()
            let ann = Employee(name: "ann"), bob = Employee(name: "bob")
            bob.manager = ann
            context.insert(bob)
            try await context.save()
            ann.level = 2
            context.delete(ann)
            XCTAssertTrue(ann.isDeleted, backend)
            context.insert(ann)
            XCTAssertFalse(ann.isDeleted, backend)
            XCTAssertEqual(context.deletedModelsArray.count, 0, backend)
            XCTAssertEqual(context.changedModelsArray.count, 1, "\(backend): the change stays unsaved")
            context.insert(ann)
            try await context.save()
            let reader = makeContext()
            let staff = try await reader.fetch(FetchDescriptor<Employee>(sortBy: [SortDescriptor(\.name)]))
            try await reader.load(\.manager, of: staff)
            XCTAssertEqual(staff.map { "\($0.name) \($0.level ?? 0) \($0.manager?.name ?? "-")" }, ["ann 2 -", "bob 0 ann"], backend)

            // Once the deletion is saved, inserting the object again brings it back as a new one:
            // a new row, with its values and the relationships it shows, on both sides.
            let project = Project(code: "x")
            ann.projects = [project]
            try await context.save()
            context.delete(ann)
            try await context.save()
            XCTAssertNil(bob.manager, "\(backend): the deletion nullified bob's manager")
            XCTAssertNil(ann.modelContext, backend)
            context.insert(ann)
            XCTAssertTrue(bob.manager === ann, "\(backend): bob reports to ann again, as ann's reports show")
            XCTAssertEqual(project.members.map(\.name), ["ann"], backend)
            try await context.save()
            let again = makeContext()
            let people = try await again.fetch(FetchDescriptor<Employee>(sortBy: [SortDescriptor(\.name)]))
            try await again.load(\.manager, of: people)
            try await again.load(\.projects, of: people)
            XCTAssertEqual(people.map { "\($0.name) \($0.level ?? 0) \($0.manager?.name ?? "-") \($0.projects.map(\.code))" },
                           ["ann 2 - [\"x\"]", "bob 0 ann []"], backend)
        }
    }

    /// Two contexts over one store, the second saving while the first holds older values: the first
    /// keeps showing what it read (README, "One object per row per context"), and its saves write
    /// only what it changed, so nothing the second saved is written over — not by an attribute it
    /// did not set, not by the key of an object whose manager it deleted, not by the join rows of
    /// a list it read before, not after a rollback.
    func testAContextNeverWritesAnOlderValueOverANewerOne() async throws {
        try await onBothBackends(Catalog.self) { flow in
            let (backend, makeContext) = (flow.name, flow.makeContext)
            /// The employees by name, their managers, reports and projects loaded.
            func staff(of context: any SeedFlowContext) async throws -> [Employee] {
                let staff = try await context.fetch(FetchDescriptor<Employee>(sortBy: [SortDescriptor(\.name)]))
                try await context.load(\.manager, of: staff)
                try await context.load(\.reports, of: staff)
                try await context.load(\.projects, of: staff)
                return staff
            }
            func stored() async throws -> [String] {
                let reader = makeContext()
                let employees = try await staff(of: reader)
                return withExtendedLifetime(reader) {
                    employees.map { employee in
                        let projects = employee.projects.map(\.code).sorted().joined(separator: ",")
                        return "\(employee.name) \(employee.level.map(String.init) ?? "-") \(employee.manager?.name ?? "-") [\(projects)]"
                    }
                }
            }
            let setup = makeContext()
            let e = Employee(name: "e", level: 1), p = Employee(name: "p"), q = Employee(name: "q")
            e.manager = p
            e.projects = [Project(code: "x")]
            setup.insert(e)
            setup.insert(q)
            setup.insert(Project(code: "y"))
            try await setup.save()

            let first = makeContext()
            let held = try await staff(of: first)                  // e, p, q
            let heldProjects = try await first.fetch(FetchDescriptor<Project>(sortBy: [SortDescriptor(\.code)]))
            let other = makeContext()
            let changed = try await staff(of: other)
            let projects = try await other.fetch(FetchDescriptor<Project>(sortBy: [SortDescriptor(\.code)]))
            changed[0].level = 2
            changed[0].manager = changed[2]
            changed[0].projects.append(projects[1])
            try await other.save()

            XCTAssertEqual(held[0].level, 1, "\(backend): an object shows what its context read")
            XCTAssertEqual(held[0].manager?.name, "p", backend)
            let matching = try await first.fetch(FetchDescriptor<Employee>(predicate: #Predicate { $0.level == 2 }))
            XCTAssertTrue(matching.count == 1 && matching[0] === held[0], "\(backend): matched on the row as stored now")
            XCTAssertEqual(matching.first?.level, 1, "\(backend): and shown as this context read it")

            held[0].name = "ed"
            first.delete(held[1])                                  // p, e's manager as this context read it
            first.delete(heldProjects[0])                          // x
            try await first.save()
            try await assertEqual(await stored(), ["ed 2 q [y]", "q - - []"], "\(backend): only what the first context changed was written")
            // e's manager as this context read it (p) is gone; the key it did not change is not
            // written as nil over the newer one another context saved (q).
            held[0].level = 5
            try await first.save()
            try await assertEqual(await stored(), ["ed 5 q [y]", "q - - []"], "\(backend): a key left as read is not written when the object read there is deleted")

            held[0].level = 7
            let third = makeContext()
            let again = try await staff(of: third)
            again[0].level = 3
            try await third.save()
            first.rollback()
            held[0].name = "Ed"
            try await first.save()
            try await assertEqual(await stored(), ["Ed 3 q [y]", "q - - []"], "\(backend): a rolled-back change is not written either")
        }
    }

    /// `minimumModelCount` and `maximumModelCount`, checked as SwiftData checks them: a save that
    /// leaves an object it touches outside the bounds throws, naming the object, and saves nothing.
    /// The count is the store's, whichever side changed (the list, the other side's key, a join
    /// row, a deleted member) and whether the list was loaded or not; 0 is no bound.
    func testRelationshipBoundsAreCheckedBySaveWhicheverSideChanges() async throws {
        try await onBothBackends(Teams.self) { flow in
            let (backend, makeContext) = (flow.name, flow.makeContext)
            let reader = makeContext()
            func assertRefused(_ context: any SeedFlowContext, _ expected: String, line: UInt = #line) async throws {
                do {
                    try await context.save()
                    XCTFail("\(backend): saved, though \(expected)", line: line)
                } catch let error as ModelContextError {
                    guard case .modelCountViolation = error else { return XCTFail("\(backend): \(error)", line: line) }
                    XCTAssertTrue("\(error)".contains(expected), "\(backend): \(error)", line: line)
                    XCTAssertTrue("\(error)".hasSuffix("nothing was saved (change the relationship, or roll back)"), "\(backend): \(error)", line: line)
                }
                context.rollback()
            }
            let context = makeContext()
            context.insert(Team(name: "Empty"))
            try await assertRefused(context, ".players would hold 0 objects, and Team.players holds at least 1 (minimumModelCount) and at most 3 (maximumModelCount)")
            try await assertEqual(await reader.fetchCount(FetchDescriptor<Team>()), 0, "\(backend): nothing was saved")

            // Within the bounds; sponsors' bounds of 0 are none.
            let reds = Team(name: "Reds"), blues = Team(name: "Blues")
            reds.players = [Player(name: "Ann"), Player(name: "Bo")]
            blues.players = [Player(name: "Cy")]
            reds.sponsors = (1...5).map { Sponsor(name: "Sponsor \($0)") }
            context.insert(reds)
            context.insert(blues)
            try await context.save()
            let (redsID, bluesID) = (reds.persistentModelID.id!, blues.persistentModelID.id!)

            // Too many, through the other side's key, on a list another context never loaded.
            let other = makeContext()
            let loadedBlues = try await other.fetch(FetchDescriptor<Team>(predicate: #Predicate { $0.name == "Blues" }))[0]
            for name in ["Di", "Ed", "Flo"] {
                let player = Player(name: name)
                player.team = loadedBlues
                other.insert(player)
            }
            try await assertRefused(other, "Team#\(bluesID).players would hold 4 objects")
            try await assertEqual(await reader.fetchCount(FetchDescriptor<Player>()), 3, "\(backend): nothing was saved")

            // Too few, by moving the only player away, and by deleting it.
            let cy = try await other.fetch(FetchDescriptor<Player>(predicate: #Predicate { $0.name == "Cy" }))[0]
            let loadedReds = try await other.fetch(FetchDescriptor<Team>(predicate: #Predicate { $0.name == "Reds" }))[0]
            cy.team = loadedReds
            try await assertRefused(other, "Team#\(bluesID).players would hold 0 objects")
            other.delete(cy)
            try await assertRefused(other, "Team#\(bluesID).players would hold 0 objects")

            // Too many coaches, from the coaches' side of the join table; deleting a coach with
            // its join rows lowers the team's count, which has no minimum.
            let coaches = (1...3).map { Coach(name: "Coach \($0)") }
            for coach in coaches {
                coach.teams = [loadedReds]
                other.insert(coach)
            }
            try await assertRefused(other, "Team#\(redsID).coaches would hold 3 objects, and Team.coaches holds at most 2 (maximumModelCount)")
            let kept = [Coach(name: "Gus"), Coach(name: "Hal")]
            for coach in kept {
                coach.teams = [loadedReds]
                other.insert(coach)
            }
            try await other.save()
            // Saved coaches joining a team through their own lists are counted on the team's side.
            let ivy = Coach(name: "Ivy")
            ivy.teams = [loadedBlues]
            other.insert(ivy)
            try await other.save()
            for coach in kept { coach.teams = [loadedReds, loadedBlues] }
            try await assertRefused(other, "Team#\(bluesID).coaches would hold 3 objects")
            other.delete(kept[0])
            try await other.save()
            try await assertEqual(await reader.fetchCount(FetchDescriptor<Coach>()), 2, backend)

            // Deleting a team takes its join rows: a coach left with no team is refused, unless
            // the coach goes too (the team's players go by cascade).
            other.delete(loadedReds)
            try await assertRefused(other, "Coach#\(kept[1].persistentModelID.id!).teams would hold 0 objects, and Coach.teams holds at least 1 (minimumModelCount)")
            other.delete(loadedReds)
            other.delete(kept[1])
            try await other.save()
            try await assertEqual(await reader.fetchCount(FetchDescriptor<Player>()), 1, backend)
            try await assertEqual(await reader.fetchCount(FetchDescriptor<Coach>()), 1, backend)
        }
    }

    /// Random saves of players, coaches and teams against a plain model of the data: a save is
    /// refused exactly when the state it would make breaks a bound somewhere (the saved state
    /// always keeps them, so an object whose count changed is one the save must have counted), the
    /// error names an object that breaks one, and the store then holds what the model holds.
    func testRandomSavesAreRefusedExactlyWhenTheyWouldBreakABound() async throws {
        for seed in UInt64(1)...4 {
            try await onBothBackends(Teams.self) { flow in
                var run = RelationshipBoundsRun(seed: seed, backend: flow.name, context: flow.makeContext(), reader: flow.makeContext)
                try await run.run(steps: 40)
            }
        }
    }

    func testDeleteVisitedCountriesWithAPredicate() async throws {
        try await onBothBackends(Countries.self) { flow in
            let context = flow.makeContext()
            for (name, visited) in [("France", true), ("Peru", false), ("Japan", true)] {
                context.insert(Country(name: name, visited: visited))
            }
            try await context.save()
            try await context.delete(model: Country.self, where: #Predicate { $0.visited }, dryRun: false)
            try await assertEqual(await context.fetch(FetchDescriptor<Country>()).map(\.name), ["Peru"], flow.name)
            try await context.delete(model: Country.self, where: nil, dryRun: false)
            try await assertEqual(await context.fetchCount(FetchDescriptor<Country>()), 0, flow.name)
        }
    }

    /// FitIQ's deletions need no manual relationship breaking; `deleteAllData()` empties the store.
    func testDeletingAProfileWithAOneToOneNeedsNoManualBreaking() async throws {
        try await onBothBackends(FitIQ.self) { flow in
            let context = flow.makeContext()
            let profile = SDUserProfile(userID: "u1", name: "Ada", createdAt: Date(timeIntervalSince1970: 0))
            let preferences = SDDietaryAndActivityPreferences(dailyCalorieGoal: 2_000)
            profile.dietaryAndActivityPreferences = preferences
            XCTAssertTrue(preferences.userProfile === profile, flow.name)
            let session = SDSleepSession(startDate: Date(), endDate: Date())
            session.stages = [SDSleepStage(stage: "deep", startDate: Date(), endDate: Date())]
            profile.sleepSessions = [session]
            profile.progressEntries = [SDProgressEntry(userID: "u1", metric: "weight", value: 70, date: Date())]
            context.insert(profile)
            context.insert(SDOutboxEvent(eventType: "sync", payload: Data([1]), createdAt: Date()))
            try await context.save()

            context.delete(profile)
            try await context.save()
            try await assertEqual(await context.fetchCount(FetchDescriptor<SDSleepStage>()), 0, flow.name)
            try await assertEqual(await context.fetchCount(FetchDescriptor<SDDietaryAndActivityPreferences>()), 0, flow.name)
            try await assertEqual(await context.fetchCount(FetchDescriptor<SDOutboxEvent>()), 1, "\(flow.name): standalone events survive")
            XCTAssertFalse(self.isManaged(preferences, by: context), flow.name)

            context.insert(SDUserProfile(userID: "u2", name: "Bob", createdAt: Date()))
            try await context.save()
            try await flow.deleteAllData()
            let fresh = flow.makeContext()
            try await assertEqual(await fresh.fetchCount(FetchDescriptor<SDOutboxEvent>()), 0, flow.name)
            try await assertEqual(await fresh.fetchCount(FetchDescriptor<SDUserProfile>()), 0, flow.name)
        }
    }
    func testUniqueViolationNamesTheEntityAndAttributeAndSavesNothing() async throws {
        try await onBothBackends(Zoo.self) { flow in
            let context = flow.makeContext()
            context.insert(AnimalCategory(name: "Mammal"))
            try await context.save()
            context.insert(AnimalCategory(name: "Mammal"))
            context.insert(Animal(name: "Cat"))
            do {
                try await context.save()
                XCTFail("\(flow.name): a second Mammal was saved")
            } catch {
                XCTAssertEqual(error as? ModelContextError, .uniqueViolation(entity: "AnimalCategory", attribute: "name"), flow.name)
            }
            try await assertEqual(await flow.makeContext().fetchCount(FetchDescriptor<Animal>()), 0, "\(flow.name): nothing was saved")
        }
    }

    /// A save that fails changes nothing, in the store or in the context: its changes, the cause
    /// fixed, all save on the next try — new objects inserted (not taken for saved ones), edits,
    /// links from either side and deletions.
    func testAFailedSaveKeepsEveryChangeForTheNextTry() async throws {
        try await onBothBackends(Zoo.self) { flow in
            let context = flow.makeContext()
            let mammal = AnimalCategory(name: "Mammal"), fish = AnimalCategory(name: "Fish")
            let cat = Animal(name: "Cat"), shark = Animal(name: "Shark")
            cat.category = mammal
            shark.category = fish
            context.insert(cat)
            context.insert(shark)
            try await context.save()

            cat.name = "Tabby"
            let birds = AnimalCategory(name: "Mammal")   // a second Mammal: the save fails
            let owl = Animal(name: "Owl")
            owl.category = birds
            context.insert(owl)
            let dog = Animal(name: "Dog")
            try await context.load(\.animals, of: [mammal])
            mammal.animals.append(dog)
            context.insert(dog)
            context.delete(shark)
            for attempt in 1...2 {
                do {
                    try await context.save()
                    XCTFail("\(flow.name): a second Mammal was saved")
                } catch {
                    XCTAssertEqual(error as? ModelContextError, .uniqueViolation(entity: "AnimalCategory", attribute: "name"), "\(flow.name), attempt \(attempt)")
                }
                XCTAssertTrue(context.hasChanges, flow.name)
                XCTAssertEqual(context.insertedModelsArray.count, 3, "\(flow.name), attempt \(attempt): the new objects are still new")
                let stored = flow.makeContext()
                try await assertEqual(await stored.fetch(FetchDescriptor<Animal>(sortBy: [SortDescriptor(\.name)])).map(\.name), ["Cat", "Shark"], "\(flow.name): nothing was saved")
            }
            birds.name = "Bird"
            try await context.save()
            XCTAssertFalse(context.hasChanges, flow.name)

            let fresh = flow.makeContext()
            let animals = try await fresh.fetch(FetchDescriptor<Animal>(sortBy: [SortDescriptor(\.name)]))
            try await fresh.load(\.category, of: animals)
            XCTAssertEqual(animals.map { "\($0.name) \($0.category?.name ?? "none")" }, ["Dog Mammal", "Owl Bird", "Tabby Mammal"], flow.name)
            try await assertEqual(await fresh.fetch(FetchDescriptor<AnimalCategory>(sortBy: [SortDescriptor(\.name)])).map(\.name), ["Bird", "Fish", "Mammal"], flow.name)
        }
    }

    func testFetchWithPredicateSortLimitAndOffset() async throws {
        try await onBothBackends(Zoo.self) { flow in
            let context = flow.makeContext()
            let mammal = AnimalCategory(name: "Mammal")
            for (name, diet) in [("Lion", Diet.carnivorous), ("Zebra", .herbivorous), ("Bear", .omnivorous), ("Tiger", .carnivorous)] {
                let animal = Animal(name: name, diet: diet)
                if name != "Bear" { animal.category = mammal }
                context.insert(animal)
            }
            try await context.save()
            let carnivorous = Diet.carnivorous
            let carnivores = try await context.fetch(FetchDescriptor<Animal>(predicate: #Predicate { $0.diet == carnivorous }, sortBy: [SortDescriptor(\.name, order: .reverse)]))
            XCTAssertEqual(carnivores.map(\.name), ["Tiger", "Lion"], flow.name)
            let prefixed = try await context.fetch(FetchDescriptor<Animal>(predicate: #Predicate { $0.name.contains("e") && !$0.name.starts(with: "Z") }, sortBy: [SortDescriptor(\.name)]))
            XCTAssertEqual(prefixed.map(\.name), ["Bear", "Tiger"], flow.name)
            let inMammals = try await context.fetch(FetchDescriptor<Animal>(predicate: #Predicate { $0.category?.name == "Mammal" }, sortBy: [SortDescriptor(\.name)]))
            XCTAssertEqual(inMammals.map(\.name), ["Lion", "Tiger", "Zebra"], flow.name)
            let uncategorized = try await context.fetch(FetchDescriptor<Animal>(predicate: #Predicate { $0.category == nil }))
            XCTAssertEqual(uncategorized.map(\.name), ["Bear"], flow.name)
            var page = FetchDescriptor<Animal>(sortBy: [SortDescriptor(\.name)])
            page.fetchLimit = 2
            page.fetchOffset = 1
            try await assertEqual(await context.fetch(page).map(\.name), ["Lion", "Tiger"], flow.name)
            try await assertEqual(await context.fetchCount(page), 2, flow.name)
        }
    }

    /// A negative limit or offset is refused alike on both backends, with unsaved objects or not
    /// (SQLite read a negative limit as none, PostgreSQL refused it, and cutting the unsaved
    /// objects a fetch adds to it stopped the program); a limit of 0 fetches nothing on both.
    func testANegativeLimitOrOffsetIsRefusedAndZeroFetchesNothing() async throws {
        try await onBothBackends(Zoo.self) { flow in
            let context = flow.makeContext()
            context.insert(AnimalCategory(name: "Bird"))
            try await context.save()
            for unsaved in [false, true] {
                if unsaved { context.insert(AnimalCategory(name: "Fish")) }
                for (limit, offset) in [(-1, nil), (nil, -1), (-5, 0), (2, -3)] as [(Int?, Int?)] {
                    for sorted in [false, true] {
                        var descriptor = FetchDescriptor<AnimalCategory>(sortBy: sorted ? [SortDescriptor(\.name)] : [])
                        (descriptor.fetchLimit, descriptor.fetchOffset) = (limit, offset)
                        let label = "\(flow.name), unsaved \(unsaved), limit \(String(describing: limit)), offset \(String(describing: offset))"
                        for count in [false, true] {
                            do {
                                _ = count ? try await context.fetchCount(descriptor) : try await context.fetch(descriptor).count
                                XCTFail("\(label): ran")
                            } catch let error as ModelContextError {
                                guard case let .invalidDescriptor(reason) = error else { return XCTFail("\(label): \(error)") }
                                XCTAssertTrue(reason.contains("must be 0 or more"), reason)
                            }
                        }
                    }
                }
                var none = FetchDescriptor<AnimalCategory>()
                none.fetchLimit = 0
                try await assertEqual(await context.fetch(none).count, 0, "\(flow.name), unsaved \(unsaved)")
                try await assertEqual(await context.fetchCount(none), 0, "\(flow.name), unsaved \(unsaved)")
                // The largest limit and offset, with a changed object (whose row the page must not count).
                let bird = try await context.fetch(FetchDescriptor<AnimalCategory>(predicate: #Predicate { $0.name == "Bird" }))
                bird.first?.name = "Bird"
                var all = FetchDescriptor<AnimalCategory>()
                all.fetchLimit = .max
                try await assertEqual(await context.fetch(all).count, unsaved ? 2 : 1, "\(flow.name), unsaved \(unsaved)")
                all.fetchOffset = .max
                try await assertEqual(await context.fetch(all).count, 0, "\(flow.name), unsaved \(unsaved)")
            }
        }
    }

    /// SQL's keywords as the names of tables, columns, key columns and a join table
    /// (Keywords.yaml): saves, fetches of unsaved and saved objects (predicates, through to-many
    /// relationships too, sorts, prefetching), counts, a unique violation and a safe delete, on both backends.
    func testSQLKeywordsAsTableAndColumnNamesWork() async throws {
        try await onBothBackends(Keywords.self) { flow in
            let context = flow.makeContext()
            let first = Order(group: "b", select: 1, from: Date(timeIntervalSinceReferenceDate: 10))
            first.where = 2.5
            let second = Order(group: "a", select: 2, from: Date(timeIntervalSinceReferenceDate: 20))
            let offset = Offset(table: "t", check: true)
            offset.order = first
            offset.having = [first, second]
            context.insert(first)
            context.insert(second)
            let group = "a"
            for saved in [false, true] {
                let label = "\(flow.name), saved \(saved)"
                try await assertEqual(await context.fetch(FetchDescriptor<Order>(predicate: #Predicate { $0.group != group })).map(\.select), [1], label)
                try await assertEqual(await context.fetch(FetchDescriptor<Order>(sortBy: [SortDescriptor(\.group)])).map(\.select), [2, 1], label)
                try await assertEqual(await context.fetchCount(FetchDescriptor<Order>(predicate: #Predicate { ($0.where ?? 0) > 1 && $0.group.contains("b") })), 1, label)
                try await assertEqual(await context.fetchCount(FetchDescriptor<Offset>(predicate: #Predicate { $0.check && $0.table.starts(with: "t") })), 1, label)
                // Through the key column, the join table and the related table, by name.
                try await assertEqual(await context.fetchCount(FetchDescriptor<Order>(predicate: #Predicate { $0.values.contains { $0.table == "t" } })), 2, label)
                try await assertEqual(await context.fetch(FetchDescriptor<Order>(predicate: #Predicate { $0.limit.isEmpty })).map(\.select), [2], label)
                try await assertEqual(await context.fetchCount(FetchDescriptor<Order>(predicate: #Predicate { $0.limit.allSatisfy { $0.check } && [group].contains($0.group) })), 1, label)
                try await assertEqual(await context.fetch(FetchDescriptor<Offset>(sortBy: [SortDescriptor(\.order?.group)])).map(\.table), ["t"], label)
                if !saved { try await context.save() }
            }

            let other = flow.makeContext()
            var descriptor = FetchDescriptor<Order>(predicate: #Predicate { $0.select >= 1 }, sortBy: [SortDescriptor(\.from, order: .reverse)])
            descriptor.relationshipKeyPathsForPrefetching = [\.limit, \.values]
            descriptor.propertiesToFetch = [\.select]
            let orders = try await other.fetch(descriptor)
            XCTAssertEqual(orders.map(\.select), [2, 1], flow.name)
            XCTAssertEqual(orders.map(\.group), ["a", "b"], "\(flow.name): the attributes not named in propertiesToFetch hold their values too")
            XCTAssertEqual(orders.map { $0.limit.map(\.table) }, [[], ["t"]], flow.name)
            XCTAssertEqual(orders.map { $0.values.map(\.table) }, [["t"], ["t"]], flow.name)

            other.insert(Order(group: "c", select: 1, from: Date(timeIntervalSinceReferenceDate: 30)))
            do {
                try await other.save()
                XCTFail("\(flow.name): a second Order with select 1 was saved")
            } catch let error as ModelContextError {
                XCTAssertEqual(error, .uniqueViolation(entity: "Order", attribute: "select"), flow.name)
            }
            other.rollback()
            // Compound constraints, one of them holding a to-one relationship's key.
            for attributes in ["table, check", "order, table"] {
                let duplicate = Offset(table: "t", check: attributes == "table, check")
                if attributes == "order, table" { duplicate.order = orders.last }
                other.insert(duplicate)
                do {
                    try await other.save()
                    XCTFail("\(flow.name): a second Offset with the same \(attributes) was saved")
                } catch let error as ModelContextError {
                    XCTAssertEqual(error, .uniqueViolation(entity: "Offset", attribute: attributes), flow.name)
                }
                other.rollback()
            }
            let dryRun = try await other.delete(model: Order.self, where: #Predicate { $0.group == "b" }, dryRun: true)
            try await assertEqual(await flow.makeContext().fetchCount(FetchDescriptor<Offset>()), 1, "\(flow.name): a dry run changes nothing")
            let report = try await other.delete(model: Order.self, where: #Predicate { $0.group == "b" }, dryRun: false)
            XCTAssertEqual([report.deletedCount(of: "Order"), report.deletedCount(of: "Offset"), report.totalDeleted], [1, 1, 2], flow.name)
            XCTAssertEqual(dryRun.deleted.map { "\($0.entity) \($0.count)" }, report.deleted.map { "\($0.entity) \($0.count)" }, "\(flow.name): the dry run reports the real run")
            try await assertEqual(await flow.makeContext().fetchCount(FetchDescriptor<Order>()), 1, flow.name)
            try await assertEqual(await flow.makeContext().fetchCount(FetchDescriptor<Offset>()), 0, flow.name)
        }
    }

    /// A required relationship left nil, and a key to a row another context deleted, fail the save
    /// with errors that name the entity and the relationship, alike on both backends.
    func testConstraintErrorsNameTheEntityAndProperty() async throws {
        try await onBothBackends(Lending.self) { flow in
            let context = flow.makeContext()
            context.insert(Loan(borrower: "nobody"))
            do {
                try await context.save()
                XCTFail("\(flow.name): a loan without its required book was saved")
            } catch let ModelContextError.constraintViolation(message) {
                XCTAssertTrue(message.hasPrefix("Loan.book is required and was nil"), "\(flow.name): \(message)")
            }
            context.rollback()

            let author = Author(name: "Herbert")
            context.insert(author)
            try await context.save()
            // Another context deletes the author; this one still holds it and refers to it.
            try await flow.makeContext().delete(model: Author.self, where: nil, dryRun: false)
            let book = Book(title: "Dune")
            context.insert(book)
            book.author = author
            do {
                try await context.save()
                XCTFail("\(flow.name): a book referring to a deleted author was saved")
            } catch let ModelContextError.constraintViolation(message) {
                XCTAssertTrue(message.hasPrefix("Book.author refers to an object whose row is gone"), "\(flow.name): \(message)")
            }
        }
    }

    /// An unsaved object not yet complete (a required relationship still nil, as between
    /// creating it and setting its partner) is found by a count and a fetch in id order on its
    /// own attributes, on both backends; only a save, or a query that must write the unsaved
    /// rows (a sorted fetch), says that it cannot be stored yet.
    func testAnIncompleteUnsavedObjectIsCountedAndFetchedByItsValues() async throws {
        try await onBothBackends(Lending.self) { flow in
            let context = flow.makeContext()
            let saved = Loan(borrower: "Ann")
            saved.book = Book(title: "Dune")
            context.insert(saved)
            try await context.save()
            let loan = Loan(borrower: "Ann")
            context.insert(loan)
            let ann = FetchDescriptor<Loan>(predicate: #Predicate { $0.borrower == "Ann" })
            try await assertEqual(await context.fetchCount(ann), 2, flow.name)
            try await assertEqual(await context.fetch(ann).map(ObjectIdentifier.init), [ObjectIdentifier(saved), ObjectIdentifier(loan)], flow.name)
            let notAnn = FetchDescriptor<Loan>(predicate: #Predicate { $0.borrower != "Ann" })
            try await assertEqual(await context.fetchCount(notAnn), 0, flow.name)
            do {
                _ = try await context.fetch(FetchDescriptor<Loan>(sortBy: [SortDescriptor(\.borrower)]))
                XCTFail("\(flow.name): a sorted fetch wrote a loan without its required book")
            } catch let ModelContextError.constraintViolation(message) {
                XCTAssertTrue(message.hasPrefix("Loan.book is required and was nil"), "\(flow.name): \(message)")
            }
            loan.book = saved.book
            try await context.save()
            try await assertEqual(await flow.makeContext().fetchCount(ann), 2, flow.name)
        }
    }

    /// `fetchIdentifiers` gives the identifiers `fetch` gives, in its order, with and without
    /// unsaved changes that count; `transaction` saves what its block did with the context's
    /// other changes, and nothing when the block throws.
    func testFetchIdentifiersAndTransactionsAsInSwiftData() async throws {
        try await onBothBackends(Zoo.self) { flow in
            let context = flow.makeContext()
            for name in ["Zebra", "Lion", "Okapi", "Tiger"] { context.insert(Animal(name: name)) }
            try await context.save()
            var descriptor = FetchDescriptor<Animal>(predicate: #Predicate { $0.name != "Okapi" }, sortBy: [SortDescriptor(\.name)])
            descriptor.fetchLimit = 2
            let reader = flow.makeContext()
            let identifiers = try await reader.fetchIdentifiers(descriptor)
            let fetched = try await reader.fetch(descriptor).map(\.persistentModelID)
            XCTAssertEqual(identifiers, fetched, flow.name)
            XCTAssertEqual(identifiers.count, 2, flow.name)

            let animals = try await context.fetch(FetchDescriptor<Animal>(sortBy: [SortDescriptor(\.name)]))
            animals[3].name = "Aardvark"
            context.insert(Animal(name: "Bear"))
            let unsaved = try await context.fetchIdentifiers(descriptor)
            let fetchedUnsaved = try await context.fetch(descriptor).map(\.persistentModelID)
            XCTAssertEqual(unsaved, fetchedUnsaved, flow.name)
            XCTAssertEqual(unsaved.first, animals[3].persistentModelID, "\(flow.name): the renamed zebra comes first")
            XCTAssertNil(unsaved.last?.id, "\(flow.name): the bear is not saved")

            struct Refused: Error {}
            let panda = Animal(name: "Panda")
            do {
                if let context = context as? ModelContext {
                    try context.transaction {
                        context.insert(panda)
                        throw Refused()
                    }
                } else if let context = context as? PostgresModelContext {
                    try await context.transaction {
                        context.insert(panda)
                        throw Refused()
                    }
                }
                XCTFail("\(flow.name): the block's error was not rethrown")
            } catch is Refused {}
            try await assertEqual(await flow.makeContext().fetchCount(FetchDescriptor<Animal>()), 4, "\(flow.name): a block that threw saved nothing")
            XCTAssertTrue(context.hasChanges, flow.name)
            if let context = context as? ModelContext {
                try context.transaction { context.insert(Animal(name: "Koala")) }
            } else if let context = context as? PostgresModelContext {
                try await context.transaction { context.insert(Animal(name: "Koala")) }
            }
            XCTAssertFalse(context.hasChanges, flow.name)
            try await assertEqual(await flow.makeContext().fetchCount(FetchDescriptor<Animal>()), 7, "\(flow.name): the koala, the bear and the panda")
            try await assertEqual(await flow.makeContext().fetchCount(FetchDescriptor<Animal>(predicate: #Predicate { $0.name == "Aardvark" })), 1, flow.name)
        }
    }

    /// `enumerate` visits what `fetch` returns, in its order, with the relationships named for
    /// prefetching loaded, a batch at a time: the objects of a batch the block lets go are freed
    /// before the next batch is made.
    func testEnumerateVisitsWhatFetchReturnsABatchAtATime() async throws {
        try await onBothBackends(Zoo.self) { flow in
            let setup = flow.makeContext()
            let mammal = AnimalCategory(name: "Mammal")
            for index in 0..<25 {
                let animal = Animal(name: "a\(100 - index)")
                animal.category = mammal
                setup.insert(animal)
            }
            try await setup.save()
            var descriptor = FetchDescriptor<Animal>(predicate: #Predicate { $0.name != "a90" }, sortBy: [SortDescriptor(\.name)])
            descriptor.relationshipKeyPathsForPrefetching = [\.category]
            let expected = try await flow.makeContext().fetch(descriptor).map { "\($0.name) \($0.category?.name ?? "none")" }
            XCTAssertEqual(expected.count, 24, flow.name)

            let context = flow.makeContext()
            var visited: [String] = []
            weak var firstOfBatch: Animal?
            var keptAcrossBatches = 0
            func visit(_ animal: Animal) {
                visited.append("\(animal.name) \(animal.category?.name ?? "none")")
                guard visited.count % 5 == 1 else { return }
                if firstOfBatch != nil { keptAcrossBatches += 1 }
                firstOfBatch = animal
            }
            if let context = context as? ModelContext {
                try context.enumerate(descriptor, batchSize: 5) { visit($0) }
                XCTAssertThrowsError(try context.enumerate(descriptor, batchSize: 0) { _ in })
            } else if let context = context as? PostgresModelContext {
                try await context.enumerate(descriptor, batchSize: 5) { visit($0) }
                do {
                    try await context.enumerate(descriptor, batchSize: 0) { _ in }
                    XCTFail("\(flow.name): a batch size of 0 was taken")
                } catch ModelContextError.invalidDescriptor {}
            }
            XCTAssertEqual(visited, expected, flow.name)
            XCTAssertEqual(keptAcrossBatches, 0, "\(flow.name): a batch's objects outlived it")
        }
    }

    /// A context that goes with unsaved changes drops them, as SwiftData's does, but never
    /// without a word: standard error names what was dropped, unless the app was told already
    /// (the last save threw); a context saved or rolled back says nothing.
    func testAContextFreedWithUnsavedChangesSaysWhatItDropped() async throws {
        try await onBothBackends(Zoo.self) { flow in
            let kind = flow.name == "SQLite" ? "ModelContext" : "PostgresModelContext"
            var said = try await standardError {
                var context: (any SeedFlowContext)? = flow.makeContext()
                context!.insert(Animal(name: "Lion"))
                context!.insert(AnimalCategory(name: "Mammal"))
                context = nil
            }
            XCTAssertEqual(said, "\(kind) was freed with unsaved changes, which were discarded: 2 inserted (Animal, AnimalCategory). "
                + "Call save() or rollback() before a context goes\n", flow.name)

            let setup = flow.makeContext()
            let tiger = Animal(name: "Tiger")
            setup.insert(tiger)
            try await setup.save()
            said = try await standardError {
                var context: (any SeedFlowContext)? = flow.makeContext()
                let animals = try await context!.fetch(FetchDescriptor<Animal>())
                animals[0].name = "Tigress"
                context!.delete(animals[0])
                context = nil
            }
            XCTAssertTrue(said.contains("1 changed (Animal), 1 deleted (Animal)"), "\(flow.name): \(said)")

            said = try await standardError {
                var saved: (any SeedFlowContext)? = flow.makeContext(), rolledBack: (any SeedFlowContext)? = flow.makeContext()
                saved!.insert(Animal(name: "Zebra"))
                try await saved!.save()
                rolledBack!.insert(Animal(name: "Okapi"))
                rolledBack!.rollback()
                saved = nil
                rolledBack = nil
            }
            XCTAssertEqual(said, "", flow.name)

            said = try await standardError {
                var refused: (any SeedFlowContext)? = flow.makeContext()
                refused!.insert(AnimalCategory(name: "Bird"))
                refused!.insert(AnimalCategory(name: "Bird"))
                do {
                    try await refused!.save()
                    XCTFail("\(flow.name): two categories of one unique name were saved")
                } catch {}
                refused = nil
            }
            XCTAssertEqual(said, "", "\(flow.name): the save's error told the app already")
        }
    }

    /// What `body` writes to standard error (file descriptor 2, sent to a file meanwhile).
    private func standardError(of body: () async throws -> Void) async throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("modelgen-stderr-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let saved = dup(2), descriptor = open(file.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        dup2(descriptor, 2)
        close(descriptor)
        do {
            try await body()
        } catch {
            dup2(saved, 2)
            close(saved)
            throw error
        }
        dup2(saved, 2)
        close(saved)
        return try String(contentsOf: file, encoding: .utf8)
    }

    /// `deleteAllData()` on SQLite empties the main context too: the unsaved changes it held go
    /// with the rows, never without a word, and the objects it held leave it (inserted again, a
    /// new one is saved anew).
    func testDeleteAllDataSaysWhatTheMainContextDropped() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("modelgen-reset-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = try ModelContainer(for: Zoo.self, configurations: ModelConfiguration(url: directory.appendingPathComponent("store.sqlite")))
        let context = container.mainContext
        let tiger = Animal(name: "Tiger")
        context.insert(tiger)
        try context.save()
        tiger.name = "Tigress"
        let lion = Animal(name: "Lion")
        context.insert(lion)
        let said = try await standardError { container.deleteAllData() }
        XCTAssertEqual(said, "The main context was emptied by deleteAllData() with unsaved changes, which were discarded: 1 inserted (Animal), "
            + "1 changed (Animal). Save or roll back before deleting all data\n")
        XCTAssertFalse(context.hasChanges)
        XCTAssertTrue(lion.modelContext == nil && tiger.modelContext == nil, "the objects left the context")
        context.insert(lion)
        try context.save()
        XCTAssertEqual(try ModelContext(container).fetch(FetchDescriptor<Animal>()).map(\.name), ["Lion"])
    }

    /// A `Double` or `Float` NaN is neither saved nor compared with, on either backend: SQLite
    /// would read it back as nil, PostgreSQL would order it above every number and equal to
    /// itself (a predicate `$0.double > 5` matched it there), and Swift's NaN compares false with
    /// everything, so no SQL says what Swift does. The save is refused and changes nothing.
    func testNaNIsNeitherSavedNorComparedWith() async throws {
        try await onBothBackends(Catalog.self) { flow in
            var random = SeededRandom(seed: 3)
            for (attribute, spoil) in [("double", { (sample: Sample) in sample.double = .nan }), ("float", { (sample: Sample) in sample.float = .nan })] {
                let context = flow.makeContext()
                let sample = Sample.random(&random, withNUL: false, withNaN: false)
                spoil(sample)
                context.insert(sample)
                do {
                    try await context.save()
                    XCTFail("\(flow.name): a NaN \(attribute) was saved")
                } catch {
                    guard case let .unstorableValue(entity, name, _)? = error as? ModelContextError else { return XCTFail("\(flow.name): \(error)") }
                    XCTAssertEqual([entity, name], ["Sample", attribute], flow.name)
                }
                try await assertEqual(await flow.makeContext().fetchCount(FetchDescriptor<Sample>()), 0, "\(flow.name): nothing was saved")
            }
            let nan = Double.nan
            for predicate in [#Predicate<Sample> { $0.double > nan }, #Predicate<Sample> { $0.double != nan }] {
                do {
                    _ = try await flow.makeContext().fetch(FetchDescriptor(predicate: predicate))
                    XCTFail("\(flow.name): a comparison with NaN ran")
                } catch {
                    guard let error = error as? ModelContextError, case .unsupportedPredicate = error else { return XCTFail("\(flow.name): \(error)") }
                    XCTAssertEqual(error.description, "cannot translate a comparison with NaN, which no stored value can be (a save refuses it) to SQL; compare with a number")
                }
            }
        }
    }

    /// A predicate that compares with the identifier of an object not saved yet cannot say which
    /// row it means: refused on both backends, saying what to do.
    func testAPredicateOnAnUnsavedObjectSaysToSaveFirst() async throws {
        try await onBothBackends(Zoo.self) { flow in
            let context = flow.makeContext()
            let mammal = AnimalCategory(name: "Mammal")
            context.insert(mammal)
            let identifier = mammal.persistentModelID
            let predicate = #Predicate<Animal> { $0.category?.persistentModelID == identifier }
            do {
                _ = try await context.fetch(FetchDescriptor(predicate: predicate))
                XCTFail("\(flow.name): a predicate on an unsaved object ran")
            } catch let error as ModelContextError {
                XCTAssertEqual(error.description, "cannot translate the identifier of a model object that has not been saved to SQL; save the context first", flow.name)
            }
            try await context.save()
            let saved = mammal.persistentModelID
            try await assertEqual(await context.fetchCount(FetchDescriptor(predicate: #Predicate<Animal> { $0.category?.persistentModelID == saved })), 0,
                                  "\(flow.name): with the identifier the save gave, it runs")
        }
    }

    /// Texts compared with, and searched for, constants holding the NUL character, which no
    /// PostgreSQL text holds (a save refuses it) and no parameter binds: both backends select what
    /// Swift selects, with and without unsaved objects (SQLite stores NUL, so its texts hold some).
    func testTextsComparedWithConstantsHoldingNULSelectWhatSwiftSelects() async throws {
        try await onBothBackends(Catalog.self) { flow in
            let stored = ["", "a", "ab", "a\u{1}", "b", "é"] + (flow.name == "SQLite" ? ["a\0", "a\0x", "\0"] : [])
            let samples = try await SavedAndUnsavedSamples(flow, seed: 11, saved: stored, unsaved: ["a", "a\u{2}", ""]) { sample, text in
                (sample.text, sample.note) = (text, text.isEmpty ? nil : text)
            }
            for c in ["a\0", "a\0x", "\0", "b\0", "é\0"] {
                let note: String? = c, texts = [c, "ab"], a = "a", ab = "ab"
                let predicates: [(String, Predicate<Sample>)] = [
                    ("text < c", #Predicate { $0.text < c }), ("text <= c", #Predicate { $0.text <= c }),
                    ("text > c", #Predicate { $0.text > c }), ("text >= c", #Predicate { $0.text >= c }),
                    ("text == c", #Predicate { $0.text == c }), ("text != c", #Predicate { $0.text != c }), ("c < text", #Predicate { c < $0.text }),
                    ("note == c", #Predicate { $0.note == note }), ("note != c", #Predicate { $0.note != note }),
                    ("(note ?? \"\") >= c", #Predicate { ($0.note ?? "") >= c }),
                    ("text contains c", #Predicate { $0.text.contains(c) }), ("!(text starts with c)", #Predicate { !$0.text.starts(with: c) }),
                    ("[c, ab] contains text", #Predicate { texts.contains($0.text) }),
                    // The constant in place of a missing text: compared with a constant, with a stored text and with itself.
                    ("(note ?? c) < ab", #Predicate { ($0.note ?? c) < ab }), ("(note ?? c) >= text", #Predicate { ($0.note ?? c) >= $0.text }),
                    ("(note ?? c) == c", #Predicate { ($0.note ?? c) == c }), ("(note ?? c) != a", #Predicate { ($0.note ?? c) != a }),
                    ("text < (note ?? c)", #Predicate { $0.text < ($0.note ?? c) }), ("(note ?? (note ?? c)) <= ab", #Predicate { ($0.note ?? ($0.note ?? c)) <= ab }),
                    ("(note ?? c) contains a", #Predicate { ($0.note ?? c).contains(a) }), ("(note ?? c) starts with c", #Predicate { ($0.note ?? c).starts(with: c) }),
                    ("text contains (note ?? c)", #Predicate { $0.text.contains($0.note ?? c) }),
                    ("[c, ab] contains (note ?? c)", #Predicate { texts.contains($0.note ?? c) }),
                ]
                try await samples.assertSelectWhatSwiftSelects(predicates, "c = \(c.debugDescription)")
            }
        }
    }

    /// Decimals compared with `Decimal.nan`, which Swift orders below every number and equal to
    /// itself, and which no PostgreSQL decimal is (a save refuses it; the server orders its NaN
    /// above every number, so the constant is not bound): both backends select what Swift selects,
    /// with and without unsaved objects (SQLite stores NaN, so some of its decimals are).
    func testDecimalsComparedWithNaNSelectWhatSwiftSelects() async throws {
        try await onBothBackends(Catalog.self) { flow in
            let stored: [Decimal] = [-1, 0, Decimal(string: "2.5")!, .greatestFiniteMagnitude] + (flow.name == "SQLite" ? [.nan] : [])
            let samples = try await SavedAndUnsavedSamples(flow, seed: 12, saved: stored, unsaved: [-3, 7, 0]) { sample, amount in
                (sample.amount, sample.price) = (amount, amount == 0 ? nil : amount)
            }
            let nan = Decimal.nan, optionalNaN: Decimal? = .nan, amounts: [Decimal] = [.nan, Decimal(string: "2.5")!], one = Decimal(1)
            let predicates: [(String, Predicate<Sample>)] = [
                ("amount < nan", #Predicate { $0.amount < nan }), ("amount <= nan", #Predicate { $0.amount <= nan }),
                ("amount > nan", #Predicate { $0.amount > nan }), ("amount >= nan", #Predicate { $0.amount >= nan }),
                ("amount == nan", #Predicate { $0.amount == nan }), ("amount != nan", #Predicate { $0.amount != nan }),
                ("nan < amount", #Predicate { nan < $0.amount }), ("!(amount > nan)", #Predicate { !($0.amount > nan) }),
                ("price == nan", #Predicate { $0.price == optionalNaN }), ("price != nan", #Predicate { $0.price != optionalNaN }),
                ("(price ?? 0) > nan", #Predicate { ($0.price ?? 0) > nan }), ("(price ?? 1) <= nan", #Predicate { ($0.price ?? 1) <= nan }),
                ("price > nan == true", #Predicate { $0.price.flatMap { $0 > nan } == true }),
                ("price > nan != true", #Predicate { $0.price.flatMap { $0 > nan } != true }),
                ("[nan, 2.5] contains amount", #Predicate { amounts.contains($0.amount) }),
                // `Decimal.nan` in place of a missing decimal: compared with a number, with a stored decimal and with itself.
                ("(price ?? nan) < 1", #Predicate { ($0.price ?? nan) < one }), ("(price ?? nan) > 1", #Predicate { ($0.price ?? nan) > one }),
                ("(price ?? nan) == nan", #Predicate { ($0.price ?? nan) == nan }), ("(price ?? nan) != nan", #Predicate { ($0.price ?? nan) != nan }),
                ("(price ?? nan) >= amount", #Predicate { ($0.price ?? nan) >= $0.amount }), ("amount <= (price ?? nan)", #Predicate { $0.amount <= ($0.price ?? nan) }),
                ("[nan, 2.5] contains (price ?? nan)", #Predicate { amounts.contains($0.price ?? nan) }),
            ]
            try await samples.assertSelectWhatSwiftSelects(predicates)
        }
    }

    /// Comparisons of stored dates with constants select what Swift selects on the objects'
    /// values, on both backends: random dates a few microseconds apart (PostgreSQL keeps whole
    /// microseconds; a save rounds the object's value too), constants on them and between them
    /// (`Date.now` is rarely on a microsecond) and now and then one no store holds (before
    /// `Date.distantPast`, after the year 9999, an infinity), every comparison, the constant on
    /// either side.
    func testDateComparisonsSelectWhatSwiftSelects() async throws {
        try await onBothBackends(Catalog.self, seeds: UInt64(1)...3) { seed, flow in
            var random = SeededRandom(seed: seed)
            let base = Double(Int.random(in: 0...800_000_000, using: &random))
            func someDate() -> Date {
                Date(timeIntervalSinceReferenceDate: base + Double(Int.random(in: 0...6, using: &random)) * 1e-6 + [0, 1e-7, 4e-7, 5e-7, 6e-7].randomElement(using: &random)!)
            }
            let context = flow.makeContext()
            let samples = (0..<12).map { _ in Sample.random(&random, withNUL: false, withNaN: false) }
            for sample in samples {
                sample.date = someDate()
                sample.due = Bool.random(using: &random) ? someDate() : nil
                context.insert(sample)
            }
            try await context.save()
            // And unsaved objects, which match as their rows will after the save (on PostgreSQL, their
            // dates to the microsecond), whether the fetch reads them by value or writes them first
            // (a sort).
            let unsaved = flow.makeContext()
            let news = (0..<4).map { _ in Sample.random(&random, withNUL: false, withNaN: false) }
            for sample in news {
                sample.date = someDate()
                unsaved.insert(sample)
            }
            let stored = { (date: Date) in flow.name == "PostgreSQL" ? PostgresModelContainer.storedDate(date) : date }
            let dates = samples.map(\.date), unsavedDates = news.map { stored($0.date) }
            // An optional date compared through a default on the grid, as apps compare one.
            let dues = samples.map { $0.due ?? .distantFuture }
            // Now and then a constant no store holds: beyond PostgreSQL's years, or no date at all.
            let beyond = [Date(timeIntervalSinceReferenceDate: 1e12), Date(timeIntervalSinceReferenceDate: -1e12), Date.distantPast.addingTimeInterval(-1),
                          Date(timeIntervalSinceReferenceDate: .greatestFiniteMagnitude), Date(timeIntervalSinceReferenceDate: -.infinity), .distantPast, .distantFuture]
            for _ in 0..<12 {
                let c = Int.random(in: 0..<3, using: &random) == 0 ? beyond.randomElement(using: &random)! : someDate()
                let predicates: [(String, Predicate<Sample>, (Date) -> Bool)] = [
                    (">", #Predicate { $0.date > c }, { $0 > c }), (">=", #Predicate { $0.date >= c }, { $0 >= c }),
                    ("<", #Predicate { $0.date < c }, { $0 < c }), ("<=", #Predicate { $0.date <= c }, { $0 <= c }),
                    ("==", #Predicate { $0.date == c }, { $0 == c }), ("!=", #Predicate { $0.date != c }, { $0 != c }),
                    ("c <", #Predicate { c < $0.date }, { c < $0 }), ("c >=", #Predicate { c >= $0.date }, { c >= $0 })]
                for (name, predicate, swift) in predicates {
                    let trail = "\(flow.name), seed \(seed): date \(name) \(c.timeIntervalSinceReferenceDate) over \(dates.map(\.timeIntervalSinceReferenceDate))"
                    let found = try await flow.makeContext().fetchCount(FetchDescriptor(predicate: predicate))
                    XCTAssertEqual(found, dates.filter(swift).count, trail)
                    let expected = dates.filter(swift).count + unsavedDates.filter(swift).count
                    try await assertEqual(await unsaved.fetch(FetchDescriptor(predicate: predicate)).count, expected, "\(trail), with unsaved objects")
                    try await assertEqual(await unsaved.fetch(FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.int)])).count, expected,
                                          "\(trail), with unsaved objects, sorted")
                }
                let far = Date.distantFuture
                for (name, predicate, swift) in [("due ?? far <", #Predicate<Sample> { ($0.due ?? far) < c }, { (date: Date) in date < c }),
                                                 ("due ?? far >=", #Predicate<Sample> { ($0.due ?? far) >= c }, { (date: Date) in date >= c })] {
                    let found = try await flow.makeContext().fetchCount(FetchDescriptor(predicate: predicate))
                    XCTAssertEqual(found, dues.filter(swift).count, "\(flow.name), seed \(seed): \(name) \(c.timeIntervalSinceReferenceDate)")
                }
                // A default no store holds exactly (between microseconds, or beyond PostgreSQL's
                // years), against the constant and against the stored date.
                let fallback = Int.random(in: 0..<3, using: &random) == 0 ? beyond.randomElement(using: &random)! : someDate()
                for (name, predicate, swift) in [("due ?? fallback <", #Predicate<Sample> { ($0.due ?? fallback) < c }, { (sample: Sample) in (sample.due ?? fallback) < c }),
                                                 ("due ?? fallback ==", #Predicate<Sample> { ($0.due ?? fallback) == c }, { (sample: Sample) in (sample.due ?? fallback) == c }),
                                                 ("due ?? fallback >= date", #Predicate<Sample> { ($0.due ?? fallback) >= $0.date }, { (sample: Sample) in (sample.due ?? fallback) >= sample.date })] {
                    let found = try await flow.makeContext().fetchCount(FetchDescriptor(predicate: predicate))
                    XCTAssertEqual(found, samples.filter(swift).count,
                                   "\(flow.name), seed \(seed): \(name) \(c.timeIntervalSinceReferenceDate), fallback \(fallback.timeIntervalSinceReferenceDate)")
                }
            }
        }
    }

    func testUntranslatablePredicateIsAnErrorNamingTheConstruct() async throws {
        try await onBothBackends(Zoo.self) { flow in
            do {
                _ = try await flow.makeContext().fetch(FetchDescriptor<Animal>(predicate: #Predicate { $0.name.count > 3 }))
                XCTFail("\(flow.name): a predicate on a computed value was run")
            } catch {
                guard case let .unsupportedPredicate(construct)? = error as? ModelContextError else { return XCTFail("\(flow.name): \(error)") }
                XCTAssertTrue(construct.contains("key path") && construct.contains("computed value"), construct)
            }
            // `$0.category.flatMap { _ in "x" } == "x"` holds only for an animal with a category:
            // SQL would read the constant for every row, so a value computed inside a chain is refused.
            let constantInChain = Predicate<Animal> { animal in
                PredicateExpressions.build_Equal(
                    lhs: PredicateExpressions.build_flatMap(PredicateExpressions.build_KeyPath(root: animal, keyPath: \.category)) { (_: PredicateExpressions.Variable<AnimalCategory>) in
                        PredicateExpressions.build_Arg("x")
                    },
                    rhs: PredicateExpressions.build_Arg(Optional("x")))
            }
            do {
                _ = try await flow.makeContext().fetch(FetchDescriptor<Animal>(predicate: constantInChain))
                XCTFail("\(flow.name): a value computed inside optional chaining was run")
            } catch {
                guard let error = error as? ModelContextError, case .unsupportedPredicate = error else { return XCTFail("\(flow.name): \(error)") }
                // What to do instead replaces the general advice.
                XCTAssertEqual(error.description, "cannot translate a value computed inside optional chaining to SQL; "
                               + "chain to a stored property, and compute outside: `($0.category?.rank ?? 0) + 1`")
            }
        }
    }
}

/// One run of `testRandomSavesAreRefusedExactlyWhenTheyWouldBreakABound`: the model of the
/// Teams schema's data (`Team.players` 1 to 3, `Team.coaches` at most 2, `Coach.teams` at least 1),
/// kept beside a context that changes it a few objects at a time.
private struct RelationshipBoundsRun {
    let seed: UInt64
    let backend: String
    let context: any SeedFlowContext
    let reader: () -> any SeedFlowContext
    /// Saved state: each player's team, each coach's teams (by name); the teams.
    var teams: Set<String> = []
    var playerTeams: [String: String?] = [:]
    var coachTeams: [String: Set<String>] = [:]
    /// The context's objects, by name.
    var teamObjects: [String: Team] = [:], playerObjects: [String: Player] = [:], coachObjects: [String: Coach] = [:]

    init(seed: UInt64, backend: String, context: any SeedFlowContext, reader: @escaping () -> any SeedFlowContext) {
        (self.seed, self.backend, self.context, self.reader) = (seed, backend, context, reader)
    }

    /// The bounds the state breaks, as `Entity.name` of each breaking object.
    static func breaking(teams: Set<String>, playerTeams: [String: String?], coachTeams: [String: Set<String>]) -> Set<String> {
        var broken: Set<String> = []
        for team in teams {
            let players = playerTeams.values.filter { $0 == team }.count
            let coaches = coachTeams.values.filter { $0.contains(team) }.count
            if !(1...3).contains(players) || coaches > 2 { broken.insert("Team \(team)") }
        }
        for (coach, teams) in coachTeams where teams.isEmpty { broken.insert("Coach \(coach)") }
        return broken
    }

    mutating func run(steps: Int) async throws {
        var random = SeededRandom(seed: seed)
        var counter = 0
        func newName(_ prefix: String) -> String {
            counter += 1
            return "\(prefix)\(counter)"
        }
        for step in 1...steps {
            var (teams, playerTeams, coachTeams) = (self.teams, self.playerTeams, self.coachTeams)
            var (newTeams, newPlayers, newCoaches): ([String: Team], [String: Player], [String: Coach]) = ([:], [:], [:])
            var log: [String] = []
            func team(_ name: String) -> Team { newTeams[name] ?? teamObjects[name]! }
            func someTeams(_ count: Int) -> [String] { Array(teams.sorted().shuffled(using: &random).prefix(count)) }
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                switch Int.random(in: 0..<8, using: &random) {
                case 0:
                    let name = newName("p"), target = someTeams(1).first
                    let player = Player(name: name)
                    player.team = target.map(team)
                    context.insert(player)
                    newPlayers[name] = player
                    playerTeams[name] = target
                    log.append("insert \(name) in \(target ?? "none")")
                case 1:
                    guard let name = playerTeams.keys.sorted().randomElement(using: &random), let player = newPlayers[name] ?? playerObjects[name] else { continue }
                    let target = Bool.random(using: &random) ? someTeams(1).first : nil
                    player.team = target.map(team)
                    playerTeams[name] = target
                    log.append("move \(name) to \(target ?? "none")")
                case 2:
                    guard let name = playerTeams.keys.sorted().randomElement(using: &random), let player = newPlayers[name] ?? playerObjects[name] else { continue }
                    context.delete(player)
                    playerTeams[name] = nil
                    log.append("delete \(name)")
                case 3, 4:
                    let isNew = coachTeams.isEmpty || Bool.random(using: &random)
                    let name = isNew ? newName("c") : coachTeams.keys.sorted().randomElement(using: &random)!
                    let targets = someTeams(Int.random(in: 0...2, using: &random))
                    let coach = isNew ? Coach(name: name) : (newCoaches[name] ?? coachObjects[name]!)
                    // PostgreSQL: a list is loaded before it is replaced (after a delete, the context may have let it go).
                    if !isNew { try await context.load(\Coach.teams, of: [coach]) }
                    coach.teams = targets.map(team)
                    if isNew {
                        context.insert(coach)
                        newCoaches[name] = coach
                    }
                    coachTeams[name] = Set(targets)
                    log.append("\(isNew ? "insert" : "set") \(name) coaching \(targets)")
                case 5:
                    guard let name = coachTeams.keys.sorted().randomElement(using: &random), let coach = newCoaches[name] ?? coachObjects[name] else { continue }
                    context.delete(coach)
                    coachTeams[name] = nil
                    log.append("delete \(name)")
                case 6:
                    let name = newName("t"), players = (0..<Int.random(in: 0...4, using: &random)).map { _ in newName("p") }
                    let made = Team(name: name)
                    made.players = players.map { Player(name: $0) }
                    for player in made.players { newPlayers[player.name] = player }
                    context.insert(made)
                    newTeams[name] = made
                    teams.insert(name)
                    for player in players { playerTeams[player] = name }
                    log.append("insert \(name) with \(players)")
                default:
                    // A saved team: its players go with it (cascade), its coaches lose it.
                    guard let name = teams.filter({ teamObjects[$0] != nil }).sorted().randomElement(using: &random) else { continue }
                    context.delete(teamObjects[name]!)
                    teams.remove(name)
                    for (player, target) in playerTeams where target == name { playerTeams[player] = nil }
                    for coach in coachTeams.keys { coachTeams[coach]?.remove(name) }
                    log.append("delete \(name)")
                }
            }
            let broken = Self.breaking(teams: teams, playerTeams: playerTeams, coachTeams: coachTeams)
            let trail = "\(backend), seed \(seed), step \(step): \(log.joined(separator: "; "))"
            do {
                try await context.save()
                XCTAssertTrue(broken.isEmpty, "\(trail): saved, though \(broken.sorted()) break a bound")
                (self.teams, self.playerTeams, self.coachTeams) = (teams, playerTeams, coachTeams)
                teamObjects.merge(newTeams) { $1 }
                playerObjects.merge(newPlayers) { $1 }
                coachObjects.merge(newCoaches) { $1 }
                teamObjects = teamObjects.filter { teams.contains($0.key) }
                playerObjects = playerObjects.filter { playerTeams[$0.key] != nil }
                coachObjects = coachObjects.filter { coachTeams[$0.key] != nil }
            } catch let error as ModelContextError {
                guard case let .modelCountViolation(entity, _, _, _, _, _) = error else { throw error }
                XCTAssertFalse(broken.isEmpty, "\(trail): refused, though nothing breaks a bound: \(error)")
                XCTAssertTrue(broken.contains { $0.hasPrefix(entity + " ") }, "\(trail): \(error) names no object that breaks a bound (\(broken.sorted()))")
                context.rollback()
            }
            try await assertStoreHoldsTheModel(trail)
        }
    }

    /// The store, read by a new context, holds the model's teams, players and coaches.
    func assertStoreHoldsTheModel(_ trail: String) async throws {
        let reader = reader()
        var players = FetchDescriptor<Player>()
        players.relationshipKeyPathsForPrefetching = [\.team]
        var coaches = FetchDescriptor<Coach>()
        coaches.relationshipKeyPathsForPrefetching = [\.teams]
        let storedTeams = Set(try await reader.fetch(FetchDescriptor<Team>()).map(\.name))
        let storedPlayers = Dictionary(uniqueKeysWithValues: try await reader.fetch(players).map { ($0.name, $0.team?.name) })
        let storedCoaches = Dictionary(uniqueKeysWithValues: try await reader.fetch(coaches).map { ($0.name, Set($0.teams.map(\.name))) })
        XCTAssertEqual(storedTeams, teams, trail)
        XCTAssertEqual(storedPlayers, playerTeams, trail)
        XCTAssertEqual(storedCoaches, coachTeams, trail)
    }
}

/// Random Catalog samples given values by `set`: one saved for each of `saved`, and one for each of
/// `unsaved` inserted into a context of its own and not saved, beside the saved ones.
private struct SavedAndUnsavedSamples {
    let flow: SeedFlowBackend
    let saved: [Sample], unsaved: [Sample]
    let unsavedContext: any SeedFlowContext

    init<Value>(_ flow: SeedFlowBackend, seed: UInt64, saved: [Value], unsaved: [Value], _ set: (Sample, Value) -> Void) async throws {
        var random = SeededRandom(seed: seed)
        func sample(_ value: Value) -> Sample {
            let sample = Sample.random(&random, withNUL: false, withNaN: false)
            set(sample, value)
            return sample
        }
        let context = flow.makeContext()
        self.saved = saved.map(sample)
        for sample in self.saved { context.insert(sample) }
        try await context.save()
        (self.flow, unsavedContext, self.unsaved) = (flow, flow.makeContext(), unsaved.map(sample))
        for sample in self.unsaved { unsavedContext.insert(sample) }
    }

    /// Each predicate selects what Swift selects on the objects: from the store, and with the unsaved
    /// samples beside the saved ones.
    func assertSelectWhatSwiftSelects(_ predicates: [(String, Predicate<Sample>)], _ note: String? = nil) async throws {
        for (label, predicate) in predicates {
            let trail = "\(flow.name): \(label)" + (note.map { ", \($0)" } ?? "")
            try await assertEqual(await flow.makeContext().fetchCount(FetchDescriptor(predicate: predicate)), try saved.filter(predicate.evaluate).count, trail)
            try await assertEqual(await unsavedContext.fetch(FetchDescriptor(predicate: predicate)).count, try (saved + unsaved).filter(predicate.evaluate).count,
                                  "\(trail), with unsaved objects")
        }
    }
}

extension BothBackendsTests {
    /// Until the save, an object marked deleted still refers to its partners, and they to it, on
    /// both backends: a one-to-one's side loaded while the object holding its key is to be
    /// deleted shows that object (PostgreSQL loads from the unsaved rows, where the row to delete
    /// gives up its unique values when another row takes one, that key among them, so the load
    /// once read nil there).
    func testAPartnerToBeDeletedIsStillShownUntilTheSave() async throws {
        try await onBothBackends(Seats.self) { flow in
            let setup = flow.makeContext()
            let seat = Seat(code: "c1", rank: 1, label: nil, serial: UUID(), aisle: 1, place: 1)
            let guest = Guest(name: "g1")
            guest.seat = seat
            setup.insert(guest)
            setup.insert(Guest(name: "g2"))
            setup.insert(Seat(code: "c2", rank: 2, label: nil, serial: UUID(), aisle: 1, place: 2))
            try await setup.save()

            let context = flow.makeContext()
            let seats = try await context.fetch(FetchDescriptor<Seat>(sortBy: [SortDescriptor(\.code)]))
            let guests = try await context.fetch(FetchDescriptor<Guest>(sortBy: [SortDescriptor(\.name)]))
            context.delete(guests[0])
            // Another guest takes a seat: a save would set the deleted guest's key aside first.
            guests[1].seat = seats[1]
            try await context.load(\.guest, of: [seats[0]])
            XCTAssertTrue(seats[0].guest === guests[0], "\(flow.name): \(seats[0].guest?.name ?? "nil")")
            try await context.save()
            XCTAssertNil(seats[0].guest, flow.name)
        }
    }
}

extension BothBackendsTests {
    /// A load amid unsaved changes that a save would refuse (two projects holding one code) shows
    /// the links as the objects hold them now, alike on both backends: PostgreSQL reads the
    /// store's links and corrects them in memory (it wrote the unsaved rows and threw what the
    /// save would); SQLite loads on access.
    func testALoadAmidUnsavedChangesASaveWouldRefuseShowsTheLinksAsHeldNow() async throws {
        try await onBothBackends(Catalog.self) { flow in
            let setup = flow.makeContext()
            let first = Department(title: "first"), second = Department(title: "second")
            let apollo = Project(code: "apollo"), gemini = Project(code: "gemini")
            let ann = Employee(name: "ann"), bob = Employee(name: "bob")
            ann.department = first
            bob.department = first
            ann.projects = [apollo]
            bob.projects = [apollo, gemini]
            setup.insert(ann)
            setup.insert(bob)
            setup.insert(second)
            try await setup.save()

            let context = flow.makeContext()
            let departments = try await context.fetch(FetchDescriptor<Department>(sortBy: [SortDescriptor(\.title)]))
            let projects = try await context.fetch(FetchDescriptor<Project>(sortBy: [SortDescriptor(\.code)]))
            let people = try await context.fetch(FetchDescriptor<Employee>(sortBy: [SortDescriptor(\.name)]))
            try await context.load(\.projects, of: [people[1]])
            projects[1].code = "apollo"
            people[1].department = departments[1]
            people[1].projects = [projects[1]]
            people[0].projects = []
            let cy = Employee(name: "cy")
            cy.department = departments[1]
            cy.projects = [projects[0]]
            context.insert(cy)
            func shown() async throws -> String {
                try await context.load(\.staff, of: departments)
                try await context.load(\.members, of: projects)
                return (departments.map { "\($0.title ?? "nil"): \($0.staff.map(\.name).sorted())" }
                    + projects.map { "\($0.code): \($0.members.map(\.name).sorted())" }).joined(separator: "; ")
            }
            let unsaved = try await shown()
            XCTAssertEqual(unsaved, #"first: ["ann"]; second: ["bob", "cy"]; apollo: ["cy"]; apollo: ["bob"]"#, flow.name)
            do {
                try await context.save()
                XCTFail("\(flow.name): two projects coded apollo were saved")
            } catch ModelContextError.uniqueViolation(entity: "Project", attribute: "code") {}
            let kept = try await shown()
            XCTAssertEqual(kept, unsaved, "\(flow.name): after the refused save")
            projects[1].code = "gemini"
            try await context.save()
            let saved = try await shown()
            XCTAssertEqual(saved, #"first: ["ann"]; second: ["bob", "cy"]; apollo: ["cy"]; gemini: ["bob"]"#, "\(flow.name): saved")
        }
    }
}
