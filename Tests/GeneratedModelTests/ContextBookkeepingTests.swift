import CSQLite
import Foundation
@testable import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// What a save writes and what a context keeps, on real SQLite files: join rows written once per
/// changed pair from either side, updates of the changed columns only, objects found by
/// identifier, and an identity map that does not keep objects the app has let go of.
final class ContextBookkeepingTests: XCTestCase {
    private func container() throws -> ModelContainer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("modelgen-bookkeeping-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        return try ModelContainer(for: Catalog.self, configurations: ModelConfiguration(url: directory.appendingPathComponent("catalog.sqlite")))
    }

    private func pairs(_ container: ModelContainer) throws -> [String] {
        let context = ModelContext(container)
        return try context.fetch(FetchDescriptor<Employee>(sortBy: [SortDescriptor(\.name)])).flatMap { employee in
            employee.projects.map { "\(employee.name)-\($0.code)" }.sorted()
        }
    }

    /// Another connection (another process, an extension) holding the store's write lock past the
    /// wait: a save, a delete and deleting all data throw `storeBusy`, write nothing, and succeed
    /// once it lets go.
    func testASaveOrDeleteWhileAnotherConnectionWritesSaysTryAgain() throws {
        let container = try container()
        let context = container.mainContext
        context.insert(Employee(name: "ann"))
        try context.save()
        let other = try SQLiteDatabase(path: try XCTUnwrap(container.configuration.url).path)
        try other.execute("BEGIN IMMEDIATE")
        context.insert(Employee(name: "bob"))
        let busy = ModelContextError.storeBusy(seconds: Int(SQLiteDatabase.busyTimeoutMilliseconds / 1_000))
        XCTAssertThrowsError(try context.save()) { XCTAssertEqual($0 as? ModelContextError, busy) }
        XCTAssertThrowsError(try context.delete(model: Employee.self)) { XCTAssertEqual($0 as? ModelContextError, busy) }
        XCTAssertThrowsError(try container.deleteAllDataThrowing()) { XCTAssertEqual($0 as? ModelContextError, busy) }
        XCTAssertTrue(busy.description.hasSuffix("nothing was written; try again"), busy.description)
        try other.execute("COMMIT")
        XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<Employee>()), 1, "nothing was written")
        try context.save()
        XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<Employee>()), 2)
        XCTAssertEqual(try context.delete(model: Employee.self).totalDeleted, 2)
    }

    func testManyToManyChangesFromEitherSideAreWrittenOncePerPair() throws {
        let container = try container()
        let context = container.mainContext
        let ann = Employee(name: "ann"), bob = Employee(name: "bob")
        let apollo = Project(code: "apollo"), gemini = Project(code: "gemini")
        ann.projects = [apollo, gemini]
        bob.projects = [apollo]
        context.insert(ann)
        context.insert(bob)
        let before = container.statementsExecuted
        try context.save()
        XCTAssertEqual(container.statementsExecuted - before, 2 + 4 + 3 + 2 + 2 + 1,
                       "begin/commit, 4 rows, 3 join rows (not 6: both sides changed), 2 largest-id queries, the largest ids' table made if missing and raised, the join table's key order (once per context)")
        XCTAssertEqual(try pairs(container), ["ann-apollo", "ann-gemini", "bob-apollo"])

        gemini.members.append(bob)                 // from the other side
        apollo.members.removeAll { $0 === ann }
        try context.save()
        XCTAssertEqual(try pairs(container), ["ann-gemini", "bob-apollo", "bob-gemini"])

        let other = ModelContext(container)
        let loadedBob = try XCTUnwrap(try other.fetch(FetchDescriptor<Employee>(predicate: #Predicate { $0.name == "bob" })).first)
        loadedBob.projects = loadedBob.projects.filter { $0.code != "apollo" }
        try other.save()
        XCTAssertEqual(try pairs(container), ["ann-gemini", "bob-gemini"], "a loaded relationship's removal deletes just that row")
    }

    /// Changes to an object whose row another context deleted have nowhere to go: the save throws,
    /// naming the object, and writes nothing (not even the other changes it holds).
    func testChangesToAnObjectDeletedElsewhereAreRefusedNotLost() throws {
        let container = try container()
        let setup = ModelContext(container)
        setup.insert(Employee(name: "ann"))
        setup.insert(Employee(name: "bob"))
        try setup.save()
        let context = ModelContext(container)
        let staff = try context.fetch(FetchDescriptor<Employee>(sortBy: [SortDescriptor(\.name)]))
        let other = ModelContext(container)
        try other.delete(model: Employee.self, where: #Predicate { $0.name == "ann" })
        staff[0].level = 3
        staff[1].level = 4
        let annID = try XCTUnwrap(staff[0].persistentModelID.id)
        XCTAssertThrowsError(try context.save()) { error in
            XCTAssertEqual(error as? ModelContextError, .deletedFromStore(entity: "Employee", id: annID))
        }
        XCTAssertTrue(context.hasChanges, "the changes are still the context's, to roll back or redo")
        XCTAssertEqual(try ModelContext(container).fetch(FetchDescriptor<Employee>()).map(\.level), [nil], "bob's change was not written either")
    }

    func testAnUpdateWritesOnlyTheColumnsThatChanged() throws {
        let container = try container()
        let first = container.mainContext
        let ann = Employee(name: "ann", level: 1)
        first.insert(ann)
        try first.save()
        let second = ModelContext(container)
        let copy = try XCTUnwrap(try second.fetch(FetchDescriptor<Employee>()).first)
        copy.level = 5
        try second.save()
        ann.name = "Ann"                          // this context never saw level 5
        try first.save()
        let check = try XCTUnwrap(try ModelContext(container).fetch(FetchDescriptor<Employee>()).first)
        XCTAssertEqual(check.name, "Ann")
        XCTAssertEqual(check.level, 5, "saving the name did not write back the stale level")
    }

    func testObjectsAreFoundByIdentifier() throws {
        let container = try container()
        let context = container.mainContext
        let ann = Employee(name: "ann")
        context.insert(ann)
        let temporary = ann.persistentModelID
        XCTAssertTrue(context.registeredModel(for: temporary) as Employee? === ann, "an inserted object by its temporary identifier")
        try context.save()
        let identifier = ann.persistentModelID
        XCTAssertTrue(context.registeredModel(for: identifier) as Employee? === ann)
        XCTAssertTrue(try context.model(for: identifier) === ann)
        let other = ModelContext(container)
        XCTAssertNil(other.registeredModel(for: identifier) as Employee?, "not loaded in this context yet")
        let loaded = try XCTUnwrap(try other.model(for: identifier) as? Employee)
        XCTAssertEqual(loaded.name, "ann")
        XCTAssertTrue(other.registeredModel(for: identifier) as Employee? === loaded)
        XCTAssertNil(try other.model(for: PersistentIdentifier(entity: "Employee", id: 999)), "no such row")
        let bob = Employee(name: "bob")
        bob.manager = ann
        context.insert(bob)
        try context.save()
        let bobID = bob.persistentModelID
        XCTAssertEqual(try other.fetch(FetchDescriptor<Employee>(predicate: #Predicate { $0.persistentModelID == bobID })).map(\.name), ["bob"])
        XCTAssertEqual(try other.fetch(FetchDescriptor<Employee>(predicate: #Predicate { $0.manager?.persistentModelID == identifier })).map(\.name), ["bob"],
                       "an identifier through a relationship")
        XCTAssertEqual(try other.fetchCount(FetchDescriptor<Employee>(predicate: #Predicate { $0.persistentModelID != bobID })), 1)
    }

    func testTheIdentityMapKeepsOnlyWhatTheAppHolds() throws {
        let container = try container()
        let context = container.mainContext
        for index in 0..<50 { context.insert(Employee(name: "e\(index)")) }
        try context.save()
        let reader = ModelContext(container)
        weak var dropped: Employee?
        var kept: Employee?
        do {
            let all = try reader.fetch(FetchDescriptor<Employee>(sortBy: [SortDescriptor(\.name)]))
            dropped = all[1]
            kept = all[0]
            all[2].name = "changed"                 // unsaved: the context keeps it
        }
        XCTAssertNil(dropped, "an unchanged object the app let go of is not kept by the context")
        let again = try reader.fetch(FetchDescriptor<Employee>(sortBy: [SortDescriptor(\.name)]))
        XCTAssertEqual(again.first?.name, "changed", "a fetch sorts by the unsaved value")
        XCTAssertTrue(again[1] === kept, "one object per row while held")
        try reader.save()
        XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<Employee>(predicate: #Predicate { $0.name == "changed" })), 1)
    }

    func testALookupFindsUnsavedObjectsByTheirValuesNow() throws {
        let container = try container()
        let context = container.mainContext
        func levels(_ level: Int?) throws -> [String] {
            try context.fetch(FetchDescriptor<Employee>(predicate: #Predicate { $0.level == level })).map(\.name)
        }
        let saved = Employee(name: "saved", level: 1)
        context.insert(saved)
        try context.save()
        let new = Employee(name: "new", level: 1)
        context.insert(new)
        XCTAssertEqual(try levels(1), ["saved", "new"], "saved rows in id order, then new objects")
        new.level = 2                               // after the first lookup: the lookup follows
        saved.level = 3
        XCTAssertEqual(try levels(1), [])
        XCTAssertEqual(try levels(2), ["new"])
        XCTAssertEqual(try levels(3), ["saved"])
        let later = Employee(name: "later", level: 2)
        context.insert(later)
        XCTAssertEqual(try levels(2), ["new", "later"], "new objects in the order they were inserted")
        context.delete(new)
        XCTAssertEqual(try levels(2), ["later"], "an inserted object deleted before saving is gone")
        context.delete(saved)
        XCTAssertEqual(try levels(3), [], "a deleted object is left out before the save")
        try context.save()
        later.level = nil
        XCTAssertEqual(try levels(nil), ["later"], "nil matches nil, as in Swift")
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Employee>(predicate: #Predicate { $0.level == 2 })), 0)
    }

    func testAPageAndACountSeeUnsavedChanges() throws {
        let container = try container()
        let context = container.mainContext
        let first = Employee(name: "first", level: 1), second = Employee(name: "second", level: 1), third = Employee(name: "third", level: 1)
        [first, second, third].forEach(context.insert)
        try context.save()
        first.level = 5                             // unsaved: it leaves the first page of level 1
        var page = FetchDescriptor<Employee>(predicate: #Predicate { $0.level == 1 })
        page.fetchLimit = 2
        XCTAssertEqual(try context.fetch(page).map(\.name), ["second", "third"])
        context.insert(Employee(name: "fourth", level: 1))
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Employee>(predicate: #Predicate { $0.level == 1 })), 3)
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Employee>()), 4)
        var stored = FetchDescriptor<Employee>(predicate: #Predicate { $0.level == 1 })
        stored.includePendingChanges = false
        XCTAssertEqual(try context.fetchCount(stored), 3, "the store still holds first at level 1")
        XCTAssertEqual(try context.fetch(stored).map(\.name), ["first", "second", "third"])
    }

    func testAContainerAndItsMainContextAreFreedWhenTheAppLetsGo() throws {
        weak var released: ModelContainer?
        var context: ModelContext? = try {
            let container = try self.container()
            released = container
            return container.mainContext             // the app keeps only the context
        }()
        XCTAssertNil(released, "the main context does not keep its container")
        context?.insert(Employee(name: "kept"))
        try context?.save()
        XCTAssertEqual(try context?.fetchCount(FetchDescriptor<Employee>()), 1, "it works on with the store")
        let again = try XCTUnwrap(context?.container)
        XCTAssertTrue(again.mainContext === context, "asked for its container, it gives one whose main context it is")
        XCTAssertEqual(try ModelContext(again).fetchCount(FetchDescriptor<Employee>()), 1)
        context = nil
        do {
            let container = try self.container()
            released = container
            container.mainContext.insert(Employee(name: "saved"))
            try container.mainContext.save()
            XCTAssertTrue(container.mainContext.container === container)
        }
        XCTAssertNil(released, "a container whose main context was used is freed, and its store closed")
    }

    /// What an object whose context was freed still does: its values, its loaded relationships
    /// and their inverses in memory. (Loading a relationship then stops the program, saying to
    /// keep the context: an empty answer would be a wrong one.)
    func testObjectsThatOutliveTheirContextKeepWhatTheyHold() throws {
        let container = try container()
        var context: ModelContext? = ModelContext(container)
        let saved = Employee(name: "saved")
        saved.department = Department(title: "d")
        context?.insert(saved)
        try context?.save()
        let department = try XCTUnwrap(try context?.fetch(FetchDescriptor<Department>()).first)
        XCTAssertEqual(department.staff.map(\.name), ["saved"])
        let unsaved = Employee(name: "unsaved")
        context?.insert(unsaved)
        XCTAssertTrue(saved.modelContext === context && unsaved.modelContext === context)
        weak let released = context
        context = nil
        XCTAssertNil(released, "objects do not keep their context alive")
        XCTAssertNil(saved.modelContext)
        XCTAssertNil(unsaved.modelContext)
        XCTAssertNil(department.modelContext)
        XCTAssertTrue(saved.department === department)
        saved.name = "changed"
        saved.department = nil
        XCTAssertEqual(saved.name, "changed")
        XCTAssertEqual(department.staff.map(\.name), [], "inverses are kept in memory without a context")
        let reader = ModelContext(container)
        XCTAssertEqual(try reader.fetch(FetchDescriptor<Employee>()).map { "\($0.name):\($0.department?.title ?? "-")" }, ["saved:d"],
                       "changes made after the context went are saved nowhere")
    }

    /// A store holding Employee#1 of Department#1, saved by the container's main context.
    private func containerWithOneEmployee() throws -> ModelContainer {
        let container = try container()
        let employee = Employee(name: "e")
        employee.department = Department(title: "d")
        container.mainContext.insert(employee)
        try container.mainContext.save()
        return container
    }

    /// Loading a relationship of an object whose context was freed stops the program and says what
    /// to do (an empty answer would be a wrong one).
    func testLoadingAfterTheContextWentStopsAndSaysWhy() throws {
        try assertStopsTheProgram(saying: "Employee.department of Employee#1 was not loaded, and the context that loaded the object is gone") {
            let container = try containerWithOneEmployee()
            // Fetched through a context the app does not keep: it is freed after the fetch.
            let fetched = try XCTUnwrap(try ModelContext(container).fetch(FetchDescriptor<Employee>()).first)
            _ = fetched.department
        }
    }

    /// A lazy load the store fails stops the program with the error, as a fault Core Data cannot
    /// fulfil does (it read as an empty relationship).
    func testALoadTheStoreFailsStopsWithTheError() throws {
        try assertStopsTheProgram(saying: "loading Employee.department of Employee#1 failed") {
            let container = try containerWithOneEmployee()
            let context = ModelContext(container)
            let fetched = try XCTUnwrap(try context.fetch(FetchDescriptor<Employee>()).first)
            try container.database.execute("PRAGMA foreign_keys = OFF; DROP TABLE department")
            _ = fetched.department
        }
    }

    /// A new object whose context went before saving it belongs to none: it joins the context it
    /// is inserted into, or that of an object it is related to.
    func testANewObjectWhoseContextIsGoneJoinsAnother() throws {
        let container = try container()
        let inserted = Employee(name: "inserted"), related = Employee(name: "related")
        var dropped: ModelContext? = ModelContext(container)
        dropped?.insert(inserted)
        dropped?.insert(related)
        dropped = nil
        XCTAssertNil(inserted.modelContext)
        let context = container.mainContext
        context.insert(inserted)
        let department = Department(title: "d")
        context.insert(department)
        related.department = department
        XCTAssertTrue(inserted.modelContext === context && related.modelContext === context)
        try context.save()
        let reader = ModelContext(container)
        XCTAssertEqual(try reader.fetch(FetchDescriptor<Employee>(sortBy: [SortDescriptor(\.name)])).map { "\($0.name):\($0.department?.title ?? "-")" },
                       ["inserted:-", "related:d"])
    }

    /// Relating objects of two contexts stops the program, as in SwiftData: a save of one context
    /// cannot write a key the other has not assigned, and each context would hold the other's
    /// object. So do inserting a new object of one context into another, and deleting an object
    /// through a context it is not in (the delete was ignored).
    func testRelatingObjectsOfTwoContextsStopsAndSaysWhy() throws {
        try assertStopsTheProgram(saying: "Employee.department relates objects of two contexts") {
            let container = try container()
            let department = Department(title: "d")
            let theirs = ModelContext(container)
            theirs.insert(department)
            let mine = ModelContext(container)
            let employee = Employee(name: "e")
            mine.insert(employee)
            employee.department = department
        }
        try assertStopsTheProgram(saying: "Department.staff relates objects of two contexts") {
            let container = try container()
            let department = Department(title: "d")
            container.mainContext.insert(department)
            try container.mainContext.save()
            let employee = Employee(name: "e")
            let other = ModelContext(container)
            other.insert(employee)
            department.staff = [employee]
        }
        try assertStopsTheProgram(saying: "Employee.department relates objects of two contexts (Employee#new and Department#1)") {
            let container = try container()
            container.mainContext.insert(Department(title: "d"))
            try container.mainContext.save()
            // Fetched through a context the app does not keep: it is freed after the fetch.
            let department = try XCTUnwrap(try ModelContext(container).fetch(FetchDescriptor<Department>()).first)
            let employee = Employee(name: "e")
            container.mainContext.insert(employee)
            employee.department = department
        }
        try assertStopsTheProgram(saying: "Employee#1 is an object of another context: delete it through its own context") {
            let container = try containerWithOneEmployee()
            let other = ModelContext(container)
            let employee = try XCTUnwrap(try other.fetch(FetchDescriptor<Employee>()).first)
            container.mainContext.delete(employee)
        }
        try assertStopsTheProgram(saying: "Department#new is an object of another context: insert it into one context only") {
            let container = try container()
            let employee = Employee(name: "e")
            employee.department = Department(title: "d")
            let theirs = ModelContext(container), mine = ModelContext(container)
            theirs.insert(employee)
            mine.insert(try XCTUnwrap(employee.department))
        }
    }

    func testPrefetchingLoadsARelationshipOfEveryObjectInOneQuery() throws {
        let container = try container()
        let context = container.mainContext
        let departments = (0..<3).map { Department(title: "d\($0)") }
        let projects = (0..<4).map { Project(code: "p\($0)") }
        for index in 0..<12 {
            let employee = Employee(name: "e\(index)")
            employee.department = index % 4 == 3 ? nil : departments[index % 3]
            employee.projects = [projects[index % 4], projects[(index + 1) % 4]]
            context.insert(employee)
        }
        try context.save()

        func describe(_ employees: [Employee]) -> [String] {
            employees.map { "\($0.name):\($0.department?.title ?? "-"):\($0.projects.map(\.code).sorted())" }
        }
        let lazy = ModelContext(container)
        let expected = describe(try lazy.fetch(FetchDescriptor<Employee>(sortBy: [SortDescriptor(\.name)])))

        let eager = ModelContext(container)
        var descriptor = FetchDescriptor<Employee>(sortBy: [SortDescriptor(\.name)])
        descriptor.relationshipKeyPathsForPrefetching = [\.department, \.projects]
        let before = container.statementsExecuted
        let employees = try eager.fetch(descriptor)
        let afterFetch = container.statementsExecuted
        XCTAssertEqual(describe(employees), expected, "prefetched relationships hold what lazy loads find")
        XCTAssertEqual(afterFetch - before, 1 + 1 + 2, "the fetch, departments by key, project pairs and projects")
        XCTAssertEqual(container.statementsExecuted, afterFetch, "reading them afterwards runs no query")

        var byDepartment = FetchDescriptor<Department>(sortBy: [SortDescriptor(\.title)])
        byDepartment.relationshipKeyPathsForPrefetching = [\.staff]
        let staff = try ModelContext(container).fetch(byDepartment).map { $0.staff.map(\.name) }
        XCTAssertEqual(staff.map { $0.sorted() }, [["e0", "e6", "e9"], ["e1", "e10", "e4"], ["e2", "e5", "e8"]], "to-many through the inverse's key")
    }

    /// Rows another program wrote with ids anywhere in `Int64` (its ends, 0, negative ones) work
    /// like any others: random stores of such departments and employees, then rounds that insert
    /// employees into them (new ids must not collide, nor overflow past the largest id), move
    /// them, delete departments (their staff lose them) and employees one by one and in bulk,
    /// checked against a model after every save and read back by a new context.
    func testRowsWithIDsAnywhereInInt64WorkLikeAnyOthers() throws {
        let special: [Int64] = [.min, .min + 1, -2, -1, 0, 1, 2, .max - 2, .max - 1, .max]
        for seed in UInt64(1)...30 {
            var random = SeededRandom(seed: seed)
            let container = try container()
            let raw = try SQLiteDatabase(path: try XCTUnwrap(container.configuration.url).path)
            var model: [String: String?] = [:]          // employee name: department title
            var departments: Set<String> = []
            for id in special.shuffled(using: &random).prefix(Int.random(in: 1...4, using: &random)) {
                try raw.run("INSERT INTO department (id, title) VALUES (?, ?)", [.integer(id), .text("d\(id)")])
                departments.insert("d\(id)")
            }
            for id in special.shuffled(using: &random).prefix(Int.random(in: 1...5, using: &random)) {
                let title = departments.randomElement(using: &random)!
                try raw.run("INSERT INTO employee (id, name, department_id) VALUES (?, ?, (SELECT id FROM department WHERE title = ?))", [.integer(id), .text("e\(id)"), .text(title)])
                model["e\(id)"] = title
            }
            var next = 0
            for round in 0..<6 {
                let context = ModelContext(container)
                let byTitle = Dictionary(uniqueKeysWithValues: try context.fetch(FetchDescriptor<Department>()).map { ($0.title!, $0) })
                let employees = try context.fetch(FetchDescriptor<Employee>())
                var log: [String] = []
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    next += 1
                    let title = byTitle.keys.sorted().randomElement(using: &random)
                    let employee = Employee(name: "n\(next)")
                    employee.department = title.map { byTitle[$0]! }
                    context.insert(employee)
                    model[employee.name] = .some(title)
                    log.append("insert n\(next) in \(title ?? "none")")
                }
                if let moved = employees.randomElement(using: &random), let title = byTitle.keys.sorted().randomElement(using: &random) {
                    moved.department = byTitle[title]!
                    model[moved.name] = title
                    log.append("move \(moved.name) to \(title)")
                }
                if let gone = employees.randomElement(using: &random), Bool.random(using: &random), model[gone.name] != nil {
                    context.delete(gone)
                    model[gone.name] = nil
                    log.append("delete \(gone.name)")
                }
                if byTitle.count > 1, Int.random(in: 0..<3, using: &random) == 0, let title = byTitle.keys.sorted().randomElement(using: &random) {
                    context.delete(byTitle[title]!)
                    departments.remove(title)
                    for (name, department) in model where department == title { model[name] = .some(nil) }
                    log.append("delete \(title)")
                }
                let trail = "seed \(seed), round \(round): \(log.joined(separator: "; "))"
                try context.save()
                if Int.random(in: 0..<4, using: &random) == 0 {
                    let doomed = model.filter { $0.value == nil }.keys
                    try context.delete(model: Employee.self, where: #Predicate { $0.department == nil })
                    for name in doomed { model[name] = nil }
                }
                let reader = ModelContext(container)
                let stored = try reader.fetch(FetchDescriptor<Employee>())
                XCTAssertEqual(Set(stored.map(\.persistentModelID)).count, stored.count, trail)
                XCTAssertEqual(Dictionary(uniqueKeysWithValues: stored.map { ($0.name, $0.department?.title) }), model, trail)
                XCTAssertEqual(Set(try reader.fetch(FetchDescriptor<Department>()).compactMap(\.title)), departments, trail)
                if testRun?.failureCount ?? 0 > 0 { return }
            }
        }
    }

    /// A text or `Data` value longer than the store takes is refused, naming its attribute, whether
    /// its object is new or changed, and the save writes nothing; the connection's length limit is
    /// lowered to 1,000 bytes here, to stand for SQLite's billion.
    func testAValueLongerThanTheStoreTakesIsRefusedNamingItsAttribute() throws {
        let container = try container()
        sqlite3_limit(container.database.handle, SQLITE_LIMIT_LENGTH, 1_000)
        let context = container.mainContext
        var random = SeededRandom(seed: 11)
        let kept = Sample.random(&random)
        (kept.text, kept.bytes, kept.note, kept.link) = ("kept", Data(count: 10), nil, URL(string: "https://example.com")!)
        context.insert(kept)
        try context.save()
        let reason = "the value is longer than the store takes (1000 bytes); keep it in a file and store the file's name"

        let new = Sample.random(&random)
        (new.text, new.bytes, new.note, new.link) = ("new", Data(repeating: 7, count: 1_001), nil, URL(string: "https://example.com")!)
        context.insert(new)
        XCTAssertThrowsError(try context.save()) { error in
            XCTAssertEqual(error as? ModelContextError, .unstorableValue(entity: "Sample", attribute: "bytes", reason: reason))
        }
        context.delete(new)
        kept.text = String(repeating: "é", count: 501)  // 1,002 bytes of UTF-8
        XCTAssertThrowsError(try context.save()) { error in
            XCTAssertEqual(error as? ModelContextError, .unstorableValue(entity: "Sample", attribute: "text", reason: reason))
        }
        XCTAssertEqual(try ModelContext(container).fetch(FetchDescriptor<Sample>()).map(\.text), ["kept"])
    }
}
