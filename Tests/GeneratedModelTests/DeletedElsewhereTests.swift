import Foundation
@_spi(Backend) import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// Saves that meet objects another context deleted, on both backends. A context reads employees,
/// departments and projects with their relationships; another deletes some of them and saves;
/// the first then changes values, to-one relationships (from either side), memberships of the
/// many-to-many (from either side), inserts a new employee and deletes objects of its own, at
/// random. A save whose changes (net of changes undone, and but for those of objects it deletes)
/// write to a deleted object's row, or a key or a membership naming a deleted object, must be
/// refused in the schema's words — `.deletedFromStore` naming such an object, or a relationship
/// that "refers to an object whose row is gone" — never with the database's own message, and
/// change nothing; any other save must succeed, writing what was asked, removing what it
/// deletes, and bringing no deleted row back. (It found that on SQLite a deleted row's id went
/// to the next new row, so a key naming the deleted row named the new one:
/// `testAnIdentifierIsNeverGivenToAnotherObject` guards that alone.)
extension BothBackendsTests {
    func testSavesMeetingObjectsDeletedElsewhereAreRefusedInTheSchemasWordsOrSucceed() async throws {
        var outcomes: [String: Int] = [:]
        try await onBothBackends(Catalog.self, seeds: UInt64(1)...150) { seed, flow in
            let refused = try await meetObjectsDeletedElsewhere(seed: seed, on: flow)
            outcomes["\(flow.name) \(refused ? "refused" : "saved")", default: 0] += 1
        }
        // Both outcomes are common, on both backends (about half each).
        for outcome in ["SQLite refused", "SQLite saved", "PostgreSQL refused", "PostgreSQL saved"] {
            XCTAssertGreaterThan(outcomes[outcome] ?? 0, 40, "\(outcomes)")
        }
    }

    /// Rows the save's own deletions cascade away may name rows deleted elsewhere: both backends
    /// check keys at the commit, when such rows are gone, and save. A book gains a reader another
    /// context deleted, then its author is deleted (cascading to the book): saved, nothing left of
    /// either. A book moved to an author deleted elsewhere is not reached by its first author's
    /// cascade any more (delete rules follow the relationships as changed), so it would survive
    /// naming a row that is gone: refused in the schema's words, on both, changing nothing.
    func testRowsTheSavesCascadeRemovesMayNameObjectsDeletedElsewhere() async throws {
        try await onBothBackends(Lending.self) { flow in
            let setup = flow.makeContext()
            let (ann, bob) = (Author(name: "Ann"), Author(name: "Bob"))
            let (novel, poems) = (Book(title: "Novel"), Book(title: "Poems"))
            novel.author = ann
            poems.author = ann
            for object in [ann, bob] { setup.insert(object) }
            setup.insert(Reader(name: "Rita"))
            try await setup.save()

            let first = flow.makeContext()
            let books = try await first.fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]))
            let readers = try await first.fetch(FetchDescriptor<Reader>())
            let authors = try await first.fetch(FetchDescriptor<Author>(predicate: #Predicate { $0.name == "Bob" }))
            let (rita, bobHere) = (try XCTUnwrap(readers.first), try XCTUnwrap(authors.first))
            try await first.load(\.author, of: books)
            try await first.load(\.readers, of: books)
            let second = flow.makeContext()
            for reader in try await second.fetch(FetchDescriptor<Reader>()) { second.delete(reader) }
            for author in try await second.fetch(FetchDescriptor<Author>(predicate: #Predicate { $0.name == "Bob" })) { second.delete(author) }
            try await second.save()

            // The book that moves to Bob survives Ann's deletion, naming Bob's row: refused.
            books[1].author = bobHere
            books[0].readers.append(rita)
            first.delete(books[0].author!)
            do {
                try await first.save()
                XCTFail("\(flow.name): saved a book naming an author deleted elsewhere")
            } catch let error as ModelContextError {
                guard case let .constraintViolation(message) = error, message.hasPrefix("Book.author refers to an object whose row is gone") else {
                    return XCTFail("\(flow.name): not in the schema's words: \(error)")
                }
            }
            let reader = flow.makeContext()
            try await assertEqual(await reader.fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)])).map(\.title), ["Novel", "Poems"], "\(flow.name): nothing changed")
            try await assertEqual(await reader.fetchCount(FetchDescriptor<Author>()), 1, "\(flow.name): nothing changed")

            // Both books stay Ann's, one gains the reader deleted elsewhere: her cascade takes both.
            books[1].author = books[0].author
            try await first.save()
            let after = flow.makeContext()
            try await assertEqual(await after.fetchCount(FetchDescriptor<Book>()) + after.fetchCount(FetchDescriptor<Author>()), 0, "\(flow.name): Ann and her books are gone")
        }
    }

    /// An object whose deletion the context saved is one whose row is gone, like one deleted
    /// elsewhere: relating it again without inserting it — to an employee that was linked to it
    /// before, or to another; through a many-to-many or a to-one — makes the save refuse in the
    /// schema's words and change nothing, never report a save that wrote nothing of it. (A delete
    /// once left such an object among the saved members of the lists that held it, so linking it
    /// again looked like no change.) Random links, deletions and relinks, on both backends.
    func testRelatingAnObjectWhoseDeletionWasSavedIsRefusedNotDropped() async throws {
        try await onBothBackends(Catalog.self, seeds: UInt64(1)...40) { seed, flow in
            var random = SeededRandom(seed: seed)
            let context = flow.makeContext()
            let people = (0..<4).map { Employee(name: "e\($0)", level: nil) }
            let projects = (0..<4).map { Project(code: "p\($0)") }
            let departments = (0..<2).map { Department(title: "d\($0)") }
            for person in people {
                context.insert(person)
                person.projects = projects.filter { _ in random.below(2) == 0 }
                person.department = random.below(2) == 0 ? departments[random.below(2)] : nil
            }
            for object in projects { context.insert(object) }
            for object in departments { context.insert(object) }
            try await context.save()
            let goneProject = projects[random.below(projects.count)]
            let goneDepartment = departments[random.below(departments.count)]
            context.delete(goneProject)
            context.delete(goneDepartment)
            try await context.save()
            let person = people[random.below(people.count)]
            let label = "\(flow.name), seed \(seed)"
            let expected: String
            if random.below(2) == 0 {
                person.projects.append(goneProject)
                expected = "Project"
            } else {
                person.department = goneDepartment
                expected = "Employee.department"
            }
            /// The projects and departments stored, read by a new context.
            func storedCount() async throws -> Int {
                let reader = flow.makeContext()
                return try await reader.fetchCount(FetchDescriptor<Project>()) + reader.fetchCount(FetchDescriptor<Department>())
            }
            let before = try await storedCount()
            do {
                try await context.save()
                XCTFail("\(label): saved a link to an object whose deletion was saved")
            } catch let error as ModelContextError {
                switch error {
                case let .deletedFromStore(entity, id):
                    XCTAssertEqual(expected, entity, label)
                    XCTAssertEqual(id, goneProject.persistentModelID.id, label)
                case let .constraintViolation(message):
                    XCTAssertTrue(message.hasPrefix("\(expected) refers to an object whose row is gone"), "\(label): \(message)")
                default:
                    XCTFail("\(label): \(error)")
                }
            }
            try await assertEqual(await storedCount(), before, "\(label): nothing written")
        }
    }

    /// An identifier names one object for good: once its object is deleted — by a save, by
    /// `delete(model:where:)`, by `deleteAllData()` — no new object takes its id (SQLite alone would
    /// give a new row one past the largest id left), so `model(for:)` of a kept identifier finds
    /// nothing, and a context still holding the deleted object cannot write to another's row.
    func testAnIdentifierIsNeverGivenToAnotherObject() async throws {
        try await onBothBackends(Zoo.self) { flow in
            let context = flow.makeContext()
            for name in ["Lion", "Okapi", "Zebra"] { context.insert(Animal(name: name)) }
            try await context.save()
            var largest = try await context.fetch(FetchDescriptor<Animal>()).compactMap(\.persistentModelID.id).max()!
            /// Deletes the newest animal in one of the three ways, then saves a new one: its id is
            /// past every id given before, and the deleted one's identifier finds nothing.
            func deleteTheNewestAndInsert(_ way: String) async throws {
                let newest = try await context.fetch(FetchDescriptor<Animal>(sortBy: [SortDescriptor(\.name)])).max { $0.persistentModelID.id! < $1.persistentModelID.id! }!
                let gone = newest.persistentModelID
                XCTAssertEqual(gone.id, largest, "\(flow.name), \(way)")
                switch way {
                case "save":
                    context.delete(newest)
                    try await context.save()
                case "delete(model:where:)":
                    let name = newest.name
                    try await context.delete(model: Animal.self, where: #Predicate { $0.name == name }, dryRun: false)
                default:
                    try await flow.deleteAllData()
                }
                let animal = Animal(name: "New after \(way)")
                context.insert(animal)
                try await context.save()
                XCTAssertGreaterThan(animal.persistentModelID.id!, largest, "\(flow.name), \(way): the new animal took an id given before")
                largest = animal.persistentModelID.id!
                try await assertEqual(await flow.makeContext().model(for: gone) == nil, true, "\(flow.name), \(way): the deleted animal's identifier finds an object")
            }
            for way in ["save", "delete(model:where:)", "save", "deleteAllData()", "save"] { try await deleteTheNewestAndInsert(way) }
        }
    }

    /// What the store holds, by names: each employee's level, manager, department and projects,
    /// each department's title, each project's code.
    private func storedCatalog(_ flow: SeedFlowBackend) async throws -> [String] {
        let reader = flow.makeContext()
        let employees = try await reader.fetch(FetchDescriptor<Employee>(sortBy: [SortDescriptor(\.name)]))
        try await reader.load(\.manager, of: employees)
        try await reader.load(\.department, of: employees)
        try await reader.load(\.projects, of: employees)
        let departments = try await reader.fetch(FetchDescriptor<Department>())
        let projects = try await reader.fetch(FetchDescriptor<Project>(sortBy: [SortDescriptor(\.code)]))
        return withExtendedLifetime(reader) {
            employees.map { employee in
                "\(employee.name) \(employee.level.map(String.init) ?? "-") m=\(employee.manager?.name ?? "-") d=\(employee.department?.title ?? "-") p=\(employee.projects.map(\.code).sorted())"
            } + departments.map { "department \($0.title ?? "-")" }.sorted() + projects.map { "project \($0.code)" }
        }
    }

    /// One round; returns whether the save was refused.
    private func meetObjectsDeletedElsewhere(seed: UInt64, on flow: SeedFlowBackend) async throws -> Bool {
        var random = SeededRandom(seed: seed)
        func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

        // Five employees, two departments, three projects, linked at random.
        let setup = flow.makeContext()
        let staff = (0..<5).map { (index: Int) in Employee(name: "e\(index)", level: index) }
        let departments = (0..<2).map { Department(title: "d\($0)") }
        let projects = (0..<3).map { Project(code: "x\($0)") }
        for employee in staff {
            if chance(50) { employee.manager = staff.randomElement(using: &random) }
            if chance(60) { employee.department = departments.randomElement(using: &random) }
            employee.projects = projects.filter { _ in chance(40) }
            setup.insert(employee)
        }
        departments.forEach(setup.insert)
        projects.forEach(setup.insert)
        try await setup.save()

        // The first context reads everything, every relationship loaded (SQLite loads on access).
        let first = flow.makeContext()
        let employees = try await first.fetch(FetchDescriptor<Employee>(sortBy: [SortDescriptor(\.name)]))
        let heldDepartments = try await first.fetch(FetchDescriptor<Department>(sortBy: [SortDescriptor(\.title)]))
        let heldProjects = try await first.fetch(FetchDescriptor<Project>(sortBy: [SortDescriptor(\.code)]))
        try await first.load(\.manager, of: employees)
        try await first.load(\.reports, of: employees)
        try await first.load(\.department, of: employees)
        try await first.load(\.projects, of: employees)
        try await first.load(\.staff, of: heldDepartments)
        try await first.load(\.members, of: heldProjects)
        for employee in employees { _ = (employee.manager, employee.reports, employee.department, employee.projects) }
        for department in heldDepartments { _ = department.staff }
        for project in heldProjects { _ = project.members }

        // The second deletes some of them (every rule is nullify: nothing else goes).
        let second = flow.makeContext()
        let all: [any PersistentModel] = try await second.fetch(FetchDescriptor<Employee>()) + second.fetch(FetchDescriptor<Department>())
            + second.fetch(FetchDescriptor<Project>())
        var doomed = all.filter { _ in chance(25) }
        if doomed.isEmpty { doomed = [all.randomElement(using: &random)!] }
        for object in doomed { second.delete(object) }
        try await second.save()
        let deleted = Set(doomed.map(\.persistentModelID))
        let before = try await storedCatalog(flow)

        // The first context's changes, from either side of each relationship.
        var log: [String] = ["deleted \(doomed.map { "\(type(of: $0).entity.name)#\($0.persistentModelID.id!)" })"]
        let held = employees.map { (level: $0.level, manager: $0.manager, department: $0.department, projects: $0.projects) }
        let titles = heldDepartments.map(\.title)
        var inserted: Employee?
        /// The objects changed so far, which a deletion prefers (their changes become moot).
        var touched: [any PersistentModel] = []
        /// Logs a change and the objects it changed.
        func did(_ change: String, _ objects: any PersistentModel...) {
            log.append(change)
            touched += objects
        }
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let employee = employees.randomElement(using: &random)!
            let other = employees.randomElement(using: &random)!
            let department = heldDepartments.randomElement(using: &random)!
            let project = heldProjects.randomElement(using: &random)!
            switch Int.random(in: 0..<10, using: &random) {
            case 0:
                employee.level = (employee.level ?? 0) + 10
                did("\(employee.name).level", employee)
            case 1:
                department.title = (department.title ?? "") + "'"
                did("\(department.title!) title", department)
            case 2 where employee.manager !== other:
                employee.manager = other
                did("\(employee.name).manager = \(other.name)", employee, other)
            case 3 where !other.reports.contains { $0 === employee }:
                other.reports.append(employee)
                did("\(other.name).reports += \(employee.name)", employee, other)
            case 4 where employee.department !== department:
                employee.department = department
                did("\(employee.name).department = \(department.title!)", employee, department)
            case 5 where !department.staff.contains { $0 === employee }:
                department.staff.append(employee)
                did("\(department.title!).staff += \(employee.name)", employee, department)
            case 6 where !employee.projects.contains { $0 === project }:
                employee.projects.append(project)
                did("\(employee.name).projects += \(project.code)", employee, project)
            case 7 where !project.members.contains { $0 === employee }:
                project.members.append(employee)
                did("\(project.code).members += \(employee.name)", employee, project)
            case 8 where inserted == nil:
                let new = Employee(name: "n", level: 0)
                new.manager = other
                new.department = department
                new.projects = [project]
                first.insert(new)
                inserted = new
                log.append("new n: manager \(other.name), \(department.title!), \(project.code)")
            case 9:
                // The first context deletes one of its objects that the store still holds.
                let candidates: [any PersistentModel] = touched.shuffled(using: &random) + [employee, department, project]
                guard let doomedHere = candidates.first(where: { !deleted.contains($0.persistentModelID) }) else { continue }
                first.delete(doomedHere)
                log.append("delete \(type(of: doomedHere).entity.name)#\(doomedHere.persistentModelID.id!)")
            default:
                // A membership or a manager let go: the row it names may be gone; nothing to refuse.
                if let gone = employee.projects.first {
                    employee.projects.removeAll { $0 === gone }
                    did("\(employee.name).projects -= \(gone.code)", employee)
                } else {
                    employee.manager = nil
                    did("\(employee.name).manager = nil", employee)
                }
            }
        }
        // What the save writes, net of changes undone: the deleted objects it writes to or names.
        // The changes of an object the save deletes are moot, a link it gained to an object
        // deleted elsewhere too: both backends check keys at the commit, when the deletion has
        // removed the link.
        var met: Set<PersistentIdentifier> = []
        func meets(_ objects: (any PersistentModel)?...) {
            for case let object? in objects where deleted.contains(object.persistentModelID) { met.insert(object.persistentModelID) }
        }
        let deletedHere = Set(first.deletedModelsArray.map(\.persistentModelID))
        for (employee, was) in zip(employees, held) {
            let goes = deletedHere.contains(employee.persistentModelID)
            if !goes, employee.level != was.level { meets(employee) }
            if !goes, employee.manager !== was.manager { meets(employee, employee.manager) }
            if !goes, employee.department !== was.department { meets(employee, employee.department) }
            for project in employee.projects where !was.projects.contains(where: { $0 === project }) {
                if !(goes || deletedHere.contains(project.persistentModelID)) { meets(employee, project) }
            }
        }
        for (department, title) in zip(heldDepartments, titles) where department.title != title && !deletedHere.contains(department.persistentModelID) { meets(department) }
        if let inserted { meets(inserted.manager, inserted.department, inserted.projects.first) }
        let trail = "\(flow.name), seed \(seed): \(log.joined(separator: "; "))"
        defer { withExtendedLifetime((setup, first, second, staff, departments, projects, employees, heldDepartments, heldProjects, all)) {} }
        do {
            try await first.save()
            let after = try await storedCatalog(flow)
            XCTAssertTrue(met.isEmpty, "\(trail): saved, though it met \(met) BEFORE \(before) AFTER \(after)")
            for object in doomed {
                let row = (object as? Employee).map { $0.name + " " } ?? (object as? Project).map { "project \($0.code)" } ?? "department \((object as! Department).title ?? "-")"
                XCTAssertFalse(after.contains { $0.hasPrefix(row) }, "\(trail): \(row) is back:\n\(after)")
            }
            if let inserted { XCTAssertTrue(after.contains { $0.hasPrefix("n ") }, "\(trail): the new employee \(inserted.name) is not saved") }
            for object in [employees as [any PersistentModel], heldDepartments, heldProjects].joined() where deletedHere.contains(object.persistentModelID) {
                try await assertEqual(await flow.makeContext().model(for: object.persistentModelID) == nil, true, "\(trail): \(object.persistentModelID) was deleted")
            }
            return false
        } catch let error as ModelContextError {
            XCTAssertFalse(met.isEmpty, "\(trail): refused, though it met no deleted object: \(error)")
            switch error {
            case let .deletedFromStore(entity, id):
                XCTAssertTrue(met.contains(PersistentIdentifier(entity: entity, id: id)), "\(trail): names \(entity)#\(id), not one it met: \(met)")
            case let .constraintViolation(message):
                XCTAssertTrue(["Employee.manager", "Employee.department"].contains { message.hasPrefix("\($0) refers to an object whose row is gone") },
                              "\(trail): not in the schema's words: \(error)")
            default:
                XCTFail("\(trail): \(error)")
            }
            try await assertEqual(await storedCatalog(flow), before, "\(trail): a refused save changed the store")
        } catch {
            XCTFail("\(trail): not a ModelContextError: \(error)")
        }
        return true
    }
}
