import Foundation
import ModelGenPostgres
import ModelGenRuntime
import ModelGenTestSupport
import PostgresNIO
import XCTest

/// A differential property test of two contexts on one store (sharing a container, or each with a
/// container of its own), on SQLite and on PostgreSQL from one test body: random fetches, changes
/// of attributes and keys, inserts, deletes of employees and of departments (whose staff the
/// delete rule `nullify` lets go) and saves, interleaved, beside a plain Swift model of what the
/// README promises. An object shows what its context read and changed since (a department its own
/// save deleted shows as nil); a save writes only what its context changed (never an older value
/// it read over a newer one the other context saved), and writes nothing when it is refused: with
/// `.deletedFromStore` when an object it changed lost its row to the other context, with
/// `.constraintViolation` when it sets a key to a department the other context deleted. After
/// every step each context's objects show the model's values; after every save the store holds
/// the model's rows.
final class TwoContextPropertyTests: XCTestCase {
    func testTwoContextsNeverLoseOrOverwriteEachOthersSavedChangesOnSQLite() async throws {
        var counts = TwoContextRun.Counts()
        for seed in UInt64(1)...150 {
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
        print("two contexts on SQLite: \(counts)")
        XCTAssertGreaterThan(counts.saves, 1_000)
        XCTAssertGreaterThan(counts.lostRows, 20)
        XCTAssertGreaterThan(counts.goneKeys, 10)
    }

    func testTwoContextsNeverLoseOrOverwriteEachOthersSavedChangesOnPostgreSQL() async throws {
        try await PostgresTestServer.withClient { client in
            let first = try await PostgresModelContainer(for: Catalog.self, client: client)
            // The other context shares the container, or has one of its own.
            let other = try await PostgresModelContainer(for: Catalog.self, client: client)
            var counts = TwoContextRun.Counts()
            for seed in UInt64(1)...60 {
                _ = try await client.query("DELETE FROM employee_projects").collect()
                _ = try await client.query("DELETE FROM employee").collect()
                _ = try await client.query("DELETE FROM department").collect()
                let run = TwoContextRun(seed: seed, steps: 60, open: { sharesContainer in
                    let second = sharesContainer ? first : other
                    return [{ PostgresModelContext(first) }, { PostgresModelContext(second) }]
                }, stored: { try await Self.stored(client) }, failed: { self.testRun?.failureCount ?? 0 > 0 })
                counts += try await run.run()
                if testRun?.failureCount ?? 0 > 0 { return }
            }
            print("two contexts on PostgreSQL: \(counts)")
            XCTAssertGreaterThan(counts.saves, 400)
            XCTAssertGreaterThan(counts.lostRows, 8)
            XCTAssertGreaterThan(counts.goneKeys, 4)
        }
    }

    /// The employees' rows in the file, read by SQL on a connection of its own.
    private static func stored(_ url: URL) throws -> [Int64: TwoContextRun.Row] {
        let database = try SQLiteDatabase(path: url.path, create: false)
        var rows: [Int64: TwoContextRun.Row] = [:]
        for row in try database.query("SELECT id, name, level, department_id FROM employee") {
            guard case let .text(name) = row[1] else { continue }
            rows[row[0].integer!] = .init(name: name, level: row[2].integer.map(Int.init), department: row[3].integer)
        }
        return rows
    }

    /// The employees' rows on the server, read by SQL.
    private static func stored(_ client: PostgresClient) async throws -> [Int64: TwoContextRun.Row] {
        var rows: [Int64: TwoContextRun.Row] = [:]
        for try await (id, name, level, department) in try await client.query("SELECT id, name, level, department_id FROM employee").decode((Int64, String, Int64?, Int64?).self) {
            rows[id] = .init(name: name, level: level.map(Int.init), department: department)
        }
        return rows
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

    enum Attribute: Hashable { case name, level }

    /// A saved employee the app holds: what it shows, the attributes the context set since it read
    /// or saved the object (a set is written, whatever its value), and the department it read or
    /// saved (a key is written when it differs).
    typealias Held = (object: Employee, shows: Row, changed: Set<Attribute>, savedDepartment: Int64?)

    /// One context and the model of what its objects show.
    final class Side {
        let context: any SeedFlowContext
        let departments: [Int64: Department]
        /// The saved employees the app holds, by row id.
        var objects: [Int64: Held] = [:]
        /// New employees not yet saved.
        var inserted: [(object: Employee, shows: Row)] = []
        /// Saved employees deleted and not yet saved.
        var deleted: Set<Int64> = []
        /// Departments deleted and not yet saved.
        var deletedDepartments: Set<Int64> = []

        init(_ context: any SeedFlowContext) async throws {
            self.context = context
            departments = Dictionary(uniqueKeysWithValues: try await context.fetch(FetchDescriptor<Department>()).map { ($0.persistentModelID.id!, $0) })
        }
    }

    let seed: UInt64
    let steps: Int
    /// Opens the store, empty, and gives a new context of each side: whether the second side's
    /// contexts share the first's container is drawn from the seed.
    let open: (_ sharesContainer: Bool) async throws -> [() -> any SeedFlowContext]
    /// The employees' rows the store holds, read without the runtime.
    let stored: () async throws -> [Int64: Row]
    /// Whether the test has failed (a run stops at its first failing step).
    let failed: () -> Bool

    /// What a run saw: saves that succeeded, and those refused for a lost row or for a key to a
    /// department the other context deleted.
    struct Counts {
        var saves = 0, lostRows = 0, goneKeys = 0

        static func += (counts: inout Counts, run: Counts) {
            counts.saves += run.saves
            counts.lostRows += run.lostRows
            counts.goneKeys += run.goneKeys
        }
    }

    /// Runs the steps; what they saw.
    func run() async throws -> Counts {
        var counts = Counts()
        var generator = SeededRandom(seed: seed)
        let levels = (0..<6).map { generator.below(2) == 0 ? nil : $0 }
        let contexts = try await open(generator.below(2) == 0)
        let setup = contexts[0]()
        for title in ["a", "b", "c"] { setup.insert(Department(title: title)) }
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
            switch generator.below(9) {
            case 0, 1:
                history.append("\(which) fetches")
                // A fetch of what the store holds: objects the context holds keep what they show.
                var descriptor = FetchDescriptor<Employee>()
                descriptor.includePendingChanges = false
                let fetched = try await side.context.fetch(descriptor)
                XCTAssertEqual(fetched.map { $0.persistentModelID.id! }, store.keys.sorted(), context)
                for object in fetched {
                    let id = object.persistentModelID.id!
                    if let held = side.objects[id] {
                        XCTAssertTrue(held.object === object, "\(context): one object per row")
                    } else {
                        side.objects[id] = (object, store[id]!, [], store[id]!.department)
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
            case 7 where generator.below(3) == 0:
                // A department no employee of this context is being moved to (deleting one that
                // an unsaved key names is a question of order this test leaves alone).
                let named = Set(side.objects.filter { !side.deleted.contains($0.key) && $0.value.shows.department != $0.value.savedDepartment }.compactMap(\.value.shows.department)
                                + side.inserted.compactMap(\.shows.department))
                let choices = side.departments.keys.filter { !side.deletedDepartments.contains($0) && !named.contains($0) }.sorted()
                guard !choices.isEmpty else { break }
                let department = choices[generator.below(choices.count)]
                side.context.delete(side.departments[department]!)
                side.deletedDepartments.insert(department)
                history.append("\(which) deletes department #\(department)")
            case 7, 8:
                history.append("\(which) saves")
                // A save: refused when an object it changed lost its row to the other context, or
                // when it sets a key to a department the other context deleted.
                func writes(_ held: Held) -> Bool { !held.changed.isEmpty || held.shows.department != held.savedDepartment }
                let lost = side.objects.filter { writes($0.value) && !side.deleted.contains($0.key) && store[$0.key] == nil }.keys.sorted()
                let dangling = side.objects.contains { !side.deleted.contains($0.key) && $0.value.shows.department != $0.value.savedDepartment
                    && $0.value.shows.department.map { !storedDepartments.contains($0) } == true }
                    || side.inserted.contains { $0.shows.department.map { !storedDepartments.contains($0) } == true }
                do {
                    try await side.context.save()
                    XCTAssertTrue(lost.isEmpty, "\(context): saved changes to Employee \(lost), whose rows the other context deleted")
                    XCTAssertFalse(dangling, "\(context): saved a key naming a department the other context deleted")
                    counts.saves += 1
                    for (id, held) in side.objects where writes(held) && !side.deleted.contains(id) && store[id] != nil {
                        if held.changed.contains(.name) { store[id]!.name = held.shows.name }
                        if held.changed.contains(.level) { store[id]!.level = held.shows.level }
                        if held.shows.department != held.savedDepartment { store[id]!.department = held.shows.department }
                        side.objects[id]!.changed = []
                        side.objects[id]!.savedDepartment = held.shows.department
                    }
                    for id in side.deleted {
                        store[id] = nil
                        side.objects[id] = nil
                    }
                    side.deleted = []
                    for (object, row) in side.inserted {
                        let id = try XCTUnwrap(object.persistentModelID.id, context)
                        store[id] = row
                        side.objects[id] = (object, row, [], row.department)
                    }
                    side.inserted = []
                    // The departments the save deleted: the store's keys naming them are nil, and
                    // so are the keys this context's objects show (none was being moved to one).
                    storedDepartments.subtract(side.deletedDepartments)
                    for (id, row) in store where row.department.map(side.deletedDepartments.contains) == true { store[id]!.department = nil }
                    for (id, held) in side.objects where held.shows.department.map(side.deletedDepartments.contains) == true {
                        side.objects[id]!.shows.department = nil
                        side.objects[id]!.savedDepartment = nil
                    }
                    side.deletedDepartments = []
                } catch let error as ModelContextError {
                    switch error {
                    case let .deletedFromStore(entity, id):
                        XCTAssertEqual(entity, "Employee", context)
                        XCTAssertTrue(lost.contains(id), "\(context): refused for Employee#\(id); lost: \(lost)")
                        counts.lostRows += 1
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
                }
                let held = try await stored()
                XCTAssertEqual(held, store, "\(context): the store after the save")
            default:
                break
            }
            // Employees the step registered in the context without a fetch (a department's
            // staff, loaded to keep inverses in step) were read from the store as it is now.
            for (id, row) in store where sides[which].objects[id] == nil {
                if let object: Employee = sides[which].context.registeredModel(for: PersistentIdentifier(entity: "Employee", id: id)) {
                    sides[which].objects[id] = (object, row, [], row.department)
                }
            }
            // Every object shows what its context read and changed.
            for current in sides {
                for (id, held) in current.objects where !current.deleted.contains(id) {
                    let shown = Row(name: held.object.name, level: held.object.level, department: held.object.department?.persistentModelID.id)
                    XCTAssertEqual(shown, held.shows, "\(context): Employee#\(id)")
                }
            }
            if failed() { break }
        }
        return counts
    }
}
