import Foundation
import ModelGenPostgres
@_spi(Backend) import ModelGenRuntime
import ModelGenTestSupport
import PostgresNIO
import XCTest

/// A differential property test of two contexts on one store (sharing a container, or each with a
/// container of its own), on SQLite and on PostgreSQL from one test body: random fetches, changes
/// of attributes, keys and many-to-many links, inserts, deletes of employees (one by one, and by
/// predicate at once), of departments (whose staff the delete rule `nullify` lets go) and of
/// projects (whose links go with them) and saves, interleaved, beside a plain Swift model of what the README promises. An object shows
/// what its context read and changed since (an object its own save deleted is gone from what it
/// shows); a save writes only what its context changed (never an older value it read over a newer
/// one the other context saved; only the links it added or removed), and writes nothing when it is
/// refused: with `.deletedFromStore` when an object it changed, or one it linked to, lost its row
/// to the other context, with `.constraintViolation` when it sets a key to a department the other
/// context deleted, with `.uniqueViolation` when two projects would share a code once it is done
/// (whatever the order of its writes: two projects swapping codes save). After every step each context's objects show the model's values; after every
/// save the store holds the model's rows and links.
final class TwoContextPropertyTests: XCTestCase {
    func testTwoContextsNeverLoseOrOverwriteEachOthersSavedChangesOnSQLite() async throws {
        var counts = TwoContextRun.Counts()
        for seed in UInt64(1)...250 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("modelgen-two-contexts-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let url = directory.appendingPathComponent("catalog.sqlite")
            let run = TwoContextRun(seed: seed, steps: 60, open: { sharesContainer in
                let first = try ModelContainer(for: Catalog.self, configurations: ModelConfiguration(url: url))
                // The other context shares the container, or opens the file on a connection of its own.
                let second = sharesContainer ? first : try ModelContainer(for: Catalog.self, configurations: ModelConfiguration(url: url))
                return [{ ModelContext(first) }, { ModelContext(second) }]
            }, stored: { try Self.stored(url) }, failed: { self.testRun?.failureCount ?? 0 > 0 })
            counts += try await run.run()
            if testRun?.failureCount ?? 0 > 0 { return }
        }
        counts.assertExceeds(.init(saves: 1_000, lostRows: 20, lostLinks: 5, goneKeys: 5, duplicates: 20), on: "SQLite")
    }

    func testTwoContextsNeverLoseOrOverwriteEachOthersSavedChangesOnPostgreSQL() async throws {
        try await PostgresTestServer.withClient { client in
            let first = try await PostgresModelContainer(for: Catalog.self, client: client)
            // The other context shares the container, or has one of its own.
            let other = try await PostgresModelContainer(for: Catalog.self, client: client)
            var counts = TwoContextRun.Counts()
            for seed in UInt64(1)...100 {
                for table in ["employee_projects", "employee", "department", "project"] { _ = try await client.query(PostgresQuery(unsafeSQL: "DELETE FROM \(table)")).collect() }
                let run = TwoContextRun(seed: seed, steps: 60, open: { sharesContainer in
                    let second = sharesContainer ? first : other
                    return [{ PostgresModelContext(first) }, { PostgresModelContext(second) }]
                }, stored: { try await Self.stored(client) }, failed: { self.testRun?.failureCount ?? 0 > 0 })
                counts += try await run.run()
                if testRun?.failureCount ?? 0 > 0 { return }
            }
            counts.assertExceeds(.init(saves: 400, lostRows: 8, lostLinks: 2, goneKeys: 1, duplicates: 10), on: "PostgreSQL")
        }
    }

    /// The employees' rows and links in the file, read by SQL on a connection of its own.
    private static func stored(_ url: URL) throws -> TwoContextRun.Store {
        let database = try SQLiteDatabase(path: url.path, create: false)
        var store = TwoContextRun.Store()
        for row in try database.query("SELECT id, name, level, department_id FROM employee") {
            guard case let .text(name) = row[1] else { continue }
            store.rows[row[0].integer!] = .init(name: name, level: row[2].integer.map(Int.init), department: row[3].integer)
        }
        for row in try database.query("SELECT employee_id, project_id FROM employee_projects") {
            store.links.insert(.init(employee: row[0].integer!, project: row[1].integer!))
        }
        for row in try database.query("SELECT id, code FROM project") {
            guard case let .text(code) = row[1] else { continue }
            store.projects[row[0].integer!] = code
        }
        return store
    }

    /// The employees' rows and links on the server, read by SQL.
    private static func stored(_ client: PostgresClient) async throws -> TwoContextRun.Store {
        var store = TwoContextRun.Store()
        for try await (id, name, level, department) in try await client.query("SELECT id, name, level, department_id FROM employee").decode((Int64, String, Int64?, Int64?).self) {
            store.rows[id] = .init(name: name, level: level.map(Int.init), department: department)
        }
        for try await (employee, project) in try await client.query("SELECT employee_id, project_id FROM employee_projects").decode((Int64, Int64).self) {
            store.links.insert(.init(employee: employee, project: project))
        }
        for try await (id, code) in try await client.query("SELECT id, code FROM project").decode((Int64, String).self) {
            store.projects[id] = code
        }
        return store
    }
}

/// One run of the two-context property: `steps` operations drawn from `seed`, each by one of two
/// contexts on one store, checked against the model after every step and the store after every save.
struct TwoContextRun {
    /// An employee's row: what the test changes.
    struct Row: Equatable, CustomStringConvertible {
        var name: String
        var level: Int?
        var department: Int64?

        var description: String { "\(name)/\(level.map(String.init) ?? "nil")/\(department.map(String.init) ?? "nil")" }
    }

    /// A row of the join table of `Employee.projects` and `Project.members`.
    struct Link: Hashable, CustomStringConvertible {
        var employee: Int64
        var project: Int64

        var description: String { "\(employee)-\(project)" }
    }

    /// What the store holds of employees, and the projects' codes (unique).
    struct Store: Equatable {
        var rows: [Int64: Row] = [:]
        var links: Set<Link> = []
        var projects: [Int64: String] = [:]

        func projects(of employee: Int64) -> Set<Int64> { Set(links.filter { $0.employee == employee }.map(\.project)) }
    }

    enum Attribute: Hashable { case name, level }

    /// A saved employee the app holds.
    struct Held {
        let object: Employee
        /// What it shows.
        var shows: Row
        /// The attributes the context set since it read or saved the object (a set is written,
        /// whatever its value).
        var changed: Set<Attribute> = []
        /// The department it read or saved (a key is written when it differs).
        var savedDepartment: Int64?
        /// Its projects, once its context loaded them (nil before), and those it loaded or saved:
        /// a save writes the difference.
        var projects: Set<Int64>?
        var savedProjects: Set<Int64> = []

        init(_ object: Employee, _ row: Row) {
            self.object = object
            shows = row
            savedDepartment = row.department
        }

        /// Whether a save writes it.
        var writes: Bool { changesRow || !removedProjects.isEmpty }
        /// Whether a save writes its row or adds a link to it (removing a link from an object
        /// whose row is gone loses nothing: the link went with it).
        var changesRow: Bool { !changed.isEmpty || shows.department != savedDepartment || !addedProjects.isEmpty }
        var addedProjects: Set<Int64> { projects.map { $0.subtracting(savedProjects) } ?? [] }
        var removedProjects: Set<Int64> { projects.map { savedProjects.subtracting($0) } ?? [] }
    }

    /// One context and the model of what its objects show.
    final class Side {
        let context: any SeedFlowContext
        let departments: [Int64: Department]
        var projects: [Int64: Project]
        /// The code each saved project shows, and whether the context set it since it read or saved it.
        var codes: [Int64: (shows: String, changed: Bool)]
        /// New projects not yet saved, and projects whose deletion this context saved.
        var insertedProjects: [(object: Project, code: String)] = []
        var goneProjects: Set<Int64> = []
        /// The employees whose saved projects held each of `goneProjects` when it went.
        var formerMembers: [Int64: Set<Int64>] = [:]
        /// The saved employees the app holds, by row id.
        var objects: [Int64: Held] = [:]
        /// New employees not yet saved.
        var inserted: [(object: Employee, shows: Row)] = []
        /// Saved employees, departments and projects deleted and not yet saved.
        var deleted: Set<Int64> = []
        var deletedDepartments: Set<Int64> = []
        var deletedProjects: Set<Int64> = []

        init(_ context: any SeedFlowContext) async throws {
            self.context = context
            departments = Dictionary(uniqueKeysWithValues: try await context.fetch(FetchDescriptor<Department>()).map { ($0.persistentModelID.id!, $0) })
            projects = Dictionary(uniqueKeysWithValues: try await context.fetch(FetchDescriptor<Project>()).map { ($0.persistentModelID.id!, $0) })
            codes = projects.mapValues { ($0.code, false) }
        }
    }

    let seed: UInt64
    let steps: Int
    /// Opens the store, empty, and gives a new context of each side: whether the second side's
    /// contexts share the first's container is drawn from the seed.
    let open: (_ sharesContainer: Bool) async throws -> [() -> any SeedFlowContext]
    /// What the store holds, read without the runtime.
    let stored: () async throws -> Store
    /// Whether the test has failed (a run stops at its first failing step).
    let failed: () -> Bool

    /// What a run saw: saves that succeeded, and those refused for a lost employee row, for a
    /// project the other context deleted (linked or renamed), for a key to a department it
    /// deleted, or for a duplicate code.
    struct Counts {
        var saves = 0, lostRows = 0, lostLinks = 0, goneKeys = 0, duplicates = 0

        /// Every outcome was seen more often than `floor` says: the runs reach each kind of refusal.
        func assertExceeds(_ floor: Counts, on backend: String, file: StaticString = #filePath, line: UInt = #line) {
            print("two contexts on \(backend): \(self)")
            for (seen, least, name) in [(saves, floor.saves, "saves"), (lostRows, floor.lostRows, "lost rows"), (lostLinks, floor.lostLinks, "lost projects"),
                                        (goneKeys, floor.goneKeys, "gone keys"), (duplicates, floor.duplicates, "duplicates")] {
                XCTAssertGreaterThan(seen, least, "\(backend): \(name)", file: file, line: line)
            }
        }

        static func += (counts: inout Counts, run: Counts) {
            counts.saves += run.saves
            counts.lostRows += run.lostRows
            counts.lostLinks += run.lostLinks
            counts.goneKeys += run.goneKeys
            counts.duplicates += run.duplicates
        }
    }

    /// Codes projects are given now and then (else a new one): few, so that they collide.
    private static let codes = ["p", "q", "r", "s", "t"]

    /// The index of `Employee.projects` among the entity's relationships.
    private static let projectsIndex = Employee.entity.relationshipIndex(named: "projects")!

    /// Runs the steps; what they saw.
    func run() async throws -> Counts {
        var counts = Counts()
        var generator = SeededRandom(seed: seed)
        let levels = (0..<6).map { generator.below(2) == 0 ? nil : $0 }
        let contexts = try await open(generator.below(2) == 0)
        let setup = contexts[0]()
        for title in ["a", "b", "c"] { setup.insert(Department(title: title)) }
        for code in ["p", "q", "r"] { setup.insert(Project(code: code)) }
        for (index, level) in levels.enumerated() { setup.insert(Employee(name: "e\(index)", level: level)) }
        try await setup.save()
        var sides = [try await Side(contexts[0]()), try await Side(contexts[1]())]
        var store = try await stored()
        /// The departments whose rows the store holds.
        var storedDepartments = Set(sides[0].departments.keys)
        var counter = 0
        /// What the contexts did, for the messages of failures.
        var history: [String] = []

        for step in 0..<steps {
            let which = generator.below(2)
            let side = sides[which]
            var context: String { "seed \(seed), step \(step), context \(which) after \(history.joined(separator: "; "))" }
            let live = side.objects.keys.filter { !side.deleted.contains($0) }.sorted()
            switch generator.below(14) {
            case 0, 1:
                history.append("\(which) fetches")
                // A fetch of what the store holds: objects the context holds keep what they show.
                var descriptor = FetchDescriptor<Employee>()
                descriptor.includePendingChanges = false
                let fetched = try await side.context.fetch(descriptor)
                XCTAssertEqual(fetched.map { $0.persistentModelID.id! }, store.rows.keys.sorted(), context)
                for object in fetched {
                    let id = object.persistentModelID.id!
                    if let held = side.objects[id] {
                        XCTAssertTrue(held.object === object, "\(context): one object per row")
                    } else {
                        side.objects[id] = Held(object, store.rows[id]!)
                    }
                }
                // Their projects, loaded while the context has no changes: what the store holds
                // (a list loaded before, by the runtime on its own, shows what it read then).
                if !side.context.hasChanges {
                    try await side.context.load(\Employee.projects, of: fetched)
                    for object in fetched where side.objects[object.persistentModelID.id!]!.projects == nil {
                        let id = object.persistentModelID.id!
                        let projects = Set(object.projects.map { $0.persistentModelID.id! })
                        side.objects[id]!.projects = projects
                        side.objects[id]!.savedProjects = projects
                    }
                }
            case 2 where !live.isEmpty:
                let id = live[generator.below(live.count)]
                counter += 1
                history.append("\(which) sets #\(id).name = n\(counter)")
                side.objects[id]!.object.name = "n\(counter)"
                side.objects[id]!.shows.name = "n\(counter)"
                side.objects[id]!.changed.insert(.name)
            case 3 where !live.isEmpty:
                let id = live[generator.below(live.count)]
                let level = generator.below(3) == 0 ? nil : generator.below(100)
                history.append("\(which) sets #\(id).level = \(level.map(String.init) ?? "nil")")
                side.objects[id]!.object.level = level
                side.objects[id]!.shows.level = level
                side.objects[id]!.changed.insert(.level)
            case 4 where !live.isEmpty || !side.inserted.isEmpty:
                // A key of a saved or a new employee: nil, or a department this context has not deleted.
                let choices = side.departments.keys.filter { !side.deletedDepartments.contains($0) }.sorted()
                let department = choices.isEmpty || generator.below(4) == 0 ? nil : choices[generator.below(choices.count)]
                let pick = generator.below(live.count + side.inserted.count)
                if pick < live.count {
                    let id = live[pick]
                    history.append("\(which) sets #\(id).department = \(department.map(String.init) ?? "nil")")
                    side.objects[id]!.object.department = department.map { side.departments[$0]! }
                    side.objects[id]!.shows.department = department
                } else {
                    let new = pick - live.count
                    history.append("\(which) sets new \(side.inserted[new].shows.name).department = \(department.map(String.init) ?? "nil")")
                    side.inserted[new].object.department = department.map { side.departments[$0]! }
                    side.inserted[new].shows.department = department
                }
            case 5:
                counter += 1
                let row = Row(name: "new\(counter)", level: generator.below(2) == 0 ? nil : counter, department: nil)
                let object = Employee(name: row.name, level: row.level)
                side.context.insert(object)
                side.inserted.append((object, row))
                history.append("\(which) inserts \(row)")
            case 6 where !live.isEmpty:
                let id = live[generator.below(live.count)]
                side.context.delete(side.objects[id]!.object)
                side.deleted.insert(id)
                history.append("\(which) deletes #\(id)")
            case 7, 8:
                // A link added or removed: a project this context has not deleted, in or out of
                // the loaded projects of a saved employee; now and then one whose deletion it saved
                // (which it must refuse to link, not drop), mostly to an employee it was linked to.
                var loaded = live.filter { side.objects[$0]!.projects != nil }
                let gone = side.goneProjects.sorted()
                let choices = !gone.isEmpty && generator.below(2) == 0 ? gone : side.projects.keys.filter { !side.deletedProjects.contains($0) }.sorted()
                guard !loaded.isEmpty, !choices.isEmpty else { break }
                let project = choices[generator.below(choices.count)]
                let formerMembers = loaded.filter { side.formerMembers[project, default: []].contains($0) }
                if !formerMembers.isEmpty, generator.below(4) != 0 { loaded = formerMembers }
                let id = loaded[generator.below(loaded.count)]
                var projects = side.objects[id]!.projects!
                if projects.remove(project) == nil { projects.insert(project) }
                history.append("\(which) sets #\(id).projects = \(projects.sorted())")
                // In the order the list shows them, the one added last.
                let object = side.objects[id]!.object
                object.projects = object.projects.filter { projects.contains($0.persistentModelID.id!) }
                    + (projects.contains(project) && !object.projects.contains { $0.persistentModelID.id == project } ? [side.projects[project]!] : [])
                side.objects[id]!.projects = projects
            case 9 where generator.below(2) == 0:
                // A department or a project no object of this context is being moved or linked to
                // (deleting one that an unsaved change names is a question of order this test leaves alone).
                let unsaved = side.objects.filter { !side.deleted.contains($0.key) }.values
                if generator.below(2) == 0 {
                    let named = Set(unsaved.filter { $0.shows.department != $0.savedDepartment }.compactMap(\.shows.department) + side.inserted.compactMap(\.shows.department))
                    let choices = side.departments.keys.filter { !side.deletedDepartments.contains($0) && !named.contains($0) }.sorted()
                    guard !choices.isEmpty else { break }
                    let department = choices[generator.below(choices.count)]
                    side.context.delete(side.departments[department]!)
                    side.deletedDepartments.insert(department)
                    history.append("\(which) deletes department #\(department)")
                } else {
                    let named = Set(unsaved.flatMap(\.addedProjects))
                    let choices = side.projects.keys.filter { !side.deletedProjects.contains($0) && !side.goneProjects.contains($0) && !named.contains($0) }.sorted()
                    guard !choices.isEmpty else { break }
                    let project = choices[generator.below(choices.count)]
                    side.context.delete(side.projects[project]!)
                    side.deletedProjects.insert(project)
                    history.append("\(which) deletes project #\(project)")
                }
            case 9, 10:
                history.append("\(which) saves")
                // A save: refused when an object it changed, or one it links to, lost its row to the
                // other context, or when it sets a key to a department the other context deleted.
                let written = side.objects.filter { $0.value.writes && !side.deleted.contains($0.key) }
                // A link the other context added or removed since this one loaded the employee's
                // projects, which this one now shows otherwise: the project's members, loaded by
                // this context later (to keep the inverse in step), may have seen it, and a change
                // through them is written too. Either outcome is the app's: the store as the other
                // context left it, or as this context shows it.
                var unsettled: Set<Link> = []
                for (id, held) in side.objects where !side.deleted.contains(id) {
                    guard let projects = held.projects else { continue }
                    for project in store.projects(of: id).union(held.savedProjects).union(projects) {
                        let stored = store.links.contains(Link(employee: id, project: project))
                        if stored != held.savedProjects.contains(project), stored != projects.contains(project) {
                            unsettled.insert(Link(employee: id, project: project))
                        }
                    }
                }
                let lost = Set(written.filter { $0.value.changesRow && store.rows[$0.key] == nil }.keys)
                let lostProjects = Set(written.values.flatMap(\.addedProjects).filter { store.projects[$0] == nil })
                // Projects renamed: refused when the row is gone, or when two projects would
                // share a code once the save is done (whatever order it writes them in).
                let renamed = side.codes.filter { $0.value.changed && !side.deletedProjects.contains($0.key) }
                let lostProjectRows = Set(renamed.keys.filter { store.projects[$0] == nil })
                var codes = store.projects
                for (id, code) in renamed where codes[id] != nil { codes[id] = code.shows }
                for id in side.deletedProjects { codes[id] = nil }
                let finalCodes = Array(codes.values) + side.insertedProjects.map(\.code)
                let duplicate = Set(finalCodes).count < finalCodes.count
                let dangling = written.values.contains { $0.shows.department != $0.savedDepartment && $0.shows.department.map { !storedDepartments.contains($0) } == true }
                    || side.inserted.contains { $0.shows.department.map { !storedDepartments.contains($0) } == true }
                do {
                    try await side.context.save()
                    XCTAssertTrue(lost.isEmpty, "\(context): saved changes to Employee \(lost.sorted()), whose rows the other context deleted")
                    XCTAssertTrue(lostProjects.isEmpty, "\(context): saved links to Project \(lostProjects.sorted()), whose rows the other context deleted")
                    XCTAssertFalse(dangling, "\(context): saved a key naming a department the other context deleted")
                    XCTAssertTrue(lostProjectRows.isEmpty, "\(context): saved codes of Project \(lostProjectRows.sorted()), whose rows the other context deleted")
                    XCTAssertFalse(duplicate, "\(context): saved two projects with one code: \(finalCodes.sorted())")
                    counts.saves += 1
                    for (id, held) in written {
                        if held.changed.contains(.name) { store.rows[id]!.name = held.shows.name }
                        if held.changed.contains(.level) { store.rows[id]!.level = held.shows.level }
                        if held.shows.department != held.savedDepartment { store.rows[id]!.department = held.shows.department }
                        for project in held.addedProjects { store.links.insert(Link(employee: id, project: project)) }
                        for project in held.removedProjects { store.links.remove(Link(employee: id, project: project)) }
                        side.objects[id]!.changed = []
                        side.objects[id]!.savedDepartment = held.shows.department
                        side.objects[id]!.savedProjects = held.projects ?? []
                    }
                    for id in side.deleted {
                        store.rows[id] = nil
                        store.links = store.links.filter { $0.employee != id }
                        side.objects[id] = nil
                    }
                    side.deleted = []
                    for (object, row) in side.inserted {
                        let id = try XCTUnwrap(object.persistentModelID.id, context)
                        store.rows[id] = row
                        side.objects[id] = Held(object, row)
                    }
                    side.inserted = []
                    // The departments and projects the save deleted: the store's keys naming them
                    // are nil and their links gone, and so are those this context's objects show
                    // (none was being moved or linked to one).
                    storedDepartments.subtract(side.deletedDepartments)
                    for (id, row) in store.rows where row.department.map(side.deletedDepartments.contains) == true { store.rows[id]!.department = nil }
                    store.projects = codes
                    for (id, _) in renamed { side.codes[id]!.changed = false }
                    for (object, code) in side.insertedProjects {
                        let id = try XCTUnwrap(object.persistentModelID.id, context)
                        store.projects[id] = code
                        side.projects[id] = object
                        side.codes[id] = (code, false)
                    }
                    side.insertedProjects = []
                    side.goneProjects.formUnion(side.deletedProjects)
                    for project in side.deletedProjects {
                        side.formerMembers[project] = Set(side.objects.filter { $0.value.savedProjects.contains(project) }.keys)
                    }
                    for id in side.deletedProjects { side.codes[id] = nil }
                    store.links = store.links.filter { !side.deletedProjects.contains($0.project) }
                    for (id, held) in side.objects {
                        if held.shows.department.map(side.deletedDepartments.contains) == true {
                            side.objects[id]!.shows.department = nil
                            side.objects[id]!.savedDepartment = nil
                        }
                        side.objects[id]!.projects?.subtract(side.deletedProjects)
                        side.objects[id]!.savedProjects.subtract(side.deletedProjects)
                    }
                    side.deletedDepartments = []
                    side.deletedProjects = []
                } catch let error as ModelContextError {
                    switch error {
                    case let .deletedFromStore(entity, id) where entity == "Employee":
                        XCTAssertTrue(lost.contains(id), "\(context): refused for Employee#\(id); lost: \(lost.sorted())")
                        counts.lostRows += 1
                    case let .deletedFromStore(entity, id):
                        XCTAssertEqual(entity, "Project", context)
                        XCTAssertTrue(lostProjects.union(lostProjectRows).contains(id),
                                      "\(context): refused for \(entity)#\(id); lost projects: \(lostProjects.union(lostProjectRows).sorted())")
                        counts.lostLinks += 1
                    case let .uniqueViolation(entity, attribute):
                        XCTAssertEqual("\(entity).\(attribute)", "Project.code", context)
                        XCTAssertTrue(duplicate, "\(context): refused as a duplicate code: \(finalCodes.sorted())")
                        counts.duplicates += 1
                    case let .constraintViolation(message):
                        XCTAssertTrue(dangling, "\(context): refused: \(message)")
                        XCTAssertTrue(message.hasPrefix("Employee.department refers to an object whose row is gone"), "\(context): \(message)")
                        counts.goneKeys += 1
                    default:
                        XCTFail("\(context): \(error)")
                        return counts
                    }
                    // The app starts the unit of work again in a new context.
                    side.context.rollback()
                    sides[which] = try await Side(contexts[which]())
                    unsettled = []
                }
                let held = try await stored()
                XCTAssertEqual(held.rows, store.rows, "\(context): the store's rows after the save")
                XCTAssertEqual(held.projects, store.projects, "\(context): the store's projects after the save")
                func sorted(_ links: Set<Link>) -> [Link] { links.subtracting(unsettled).sorted { ($0.employee, $0.project) < ($1.employee, $1.project) } }
                XCTAssertEqual(sorted(held.links), sorted(store.links), "\(context): the store's links after the save")
                store.links = store.links.subtracting(unsettled).union(held.links.intersection(unsettled))
            case 11:
                // A delete by predicate, of the rows the store holds, at once (a dry run changes
                // nothing): the objects whose rows it removed leave the context, with their unsaved
                // changes; the others keep theirs.
                let threshold = generator.below(4) == 0 ? nil : generator.below(100)
                let dryRun = generator.below(3) == 0
                let predicate = threshold.map { threshold in #Predicate<Employee> { ($0.level ?? -1) >= threshold } } ?? #Predicate<Employee> { $0.level == nil }
                let removed = Set(store.rows.filter { id, row in threshold.map { (row.level ?? -1) >= $0 } ?? (row.level == nil) }.keys)
                history.append("\(which) deletes employees \(threshold.map { "with level >= \($0)" } ?? "without level")\(dryRun ? " (dry run)" : "")")
                let report = try await side.context.delete(model: Employee.self, where: predicate, dryRun: dryRun)
                XCTAssertEqual(report.deletedCount(of: "Employee"), removed.count, "\(context): employees deleted")
                XCTAssertEqual(report.totalDeleted, removed.count, "\(context): rows deleted")
                XCTAssertEqual(report.nullified, 0, "\(context): keys nullified")
                guard !dryRun else { break }
                for id in removed {
                    store.rows[id] = nil
                    side.objects[id] = nil
                    side.deleted.remove(id)
                }
                store.links = store.links.filter { !removed.contains($0.employee) }
            case 12:
                // A project's code (unique) set, from a few: two contexts may give it to two projects.
                let choices = side.projects.keys.filter { !side.deletedProjects.contains($0) && !side.goneProjects.contains($0) }.sorted()
                guard !choices.isEmpty else { break }
                let project = choices[generator.below(choices.count)]
                counter += 1
                let code = generator.below(3) == 0 ? Self.codes[generator.below(Self.codes.count)] : "c\(counter)"
                history.append("\(which) sets project #\(project).code = \(code)")
                side.projects[project]!.code = code
                side.codes[project] = (code, true)
            case 13:
                counter += 1
                let code = generator.below(3) == 0 ? Self.codes[generator.below(Self.codes.count)] : "c\(counter)"

                let project = Project(code: code)
                side.context.insert(project)
                side.insertedProjects.append((project, code))
                history.append("\(which) inserts project \(code)")
            default:
                break
            }
            // Employees the step registered in the context without a fetch (a department's
            // staff, loaded to keep inverses in step) were read from the store as it is now.
            for (id, row) in store.rows where sides[which].objects[id] == nil {
                if let object: Employee = sides[which].context.registeredModel(for: PersistentIdentifier(entity: "Employee", id: id)) {
                    sides[which].objects[id] = Held(object, row)
                }
            }
            // Every object shows what its context read and changed.
            for current in sides {
                for (id, held) in current.objects where !current.deleted.contains(id) {
                    let shown = Row(name: held.object.name, level: held.object.level, department: held.object.department?.persistentModelID.id)
                    XCTAssertEqual(shown, held.shows, "\(context): Employee#\(id)")
                    guard let projects = held.projects else { continue }
                    guard case .toMany = held.object.persistentBackingData.relationship(Self.projectsIndex) else {
                        XCTFail("\(context): Employee#\(id).projects was loaded and is not now")
                        continue
                    }
                    XCTAssertEqual(Set(held.object.projects.map { $0.persistentModelID.id! }), projects, "\(context): Employee#\(id).projects")
                }
                for (id, code) in current.codes where !current.deletedProjects.contains(id) {
                    XCTAssertEqual(current.projects[id]!.code, code.shows, "\(context): Project#\(id).code")
                }
            }
            if failed() { break }
        }
        return counts
    }
}
