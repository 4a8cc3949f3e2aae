import Foundation
import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// A differential property test of two contexts on one SQLite file (sharing a container, or each
/// with its own connection): random fetches, changes of attributes and keys, inserts, deletes and
/// saves, interleaved, beside a plain Swift model of what the README promises. An object shows
/// what its context read and changed since; a save writes only what its context changed (never an
/// older value it read over a newer one the other context saved), and refuses with
/// `.deletedFromStore`, writing nothing, when an object it changed lost its row to the other
/// context. After every step each context's objects show the model's values; after every save
/// the file holds the model's rows.
final class TwoContextPropertyTests: XCTestCase {
    /// An employee's row: what the test changes.
    struct Row: Equatable, CustomStringConvertible {
        var name: String
        var level: Int?
        var department: Int64?

        var description: String { "\(name)/\(level.map(String.init) ?? "nil")/\(department.map(String.init) ?? "nil")" }
    }

    enum Attribute: Hashable { case name, level }

    /// One context and the model of what its objects show.
    final class Side {
        let context: ModelContext
        let departments: [Int64: Department]
        /// The saved employees the app holds, by row id: what each shows, the attributes the
        /// context set since it read or saved the object (a set is written, whatever its value),
        /// and the department it read or saved (a key is written when it differs).
        var objects: [Int64: (object: Employee, shows: Row, changed: Set<Attribute>, savedDepartment: Int64?)] = [:]
        /// New employees not yet saved.
        var inserted: [(object: Employee, shows: Row)] = []
        /// Saved employees deleted and not yet saved.
        var deleted: Set<Int64> = []

        init(_ context: ModelContext) throws {
            self.context = context
            departments = Dictionary(uniqueKeysWithValues: try context.fetch(FetchDescriptor<Department>()).map { ($0.persistentModelID.id!, $0) })
        }
    }

    func testTwoContextsNeverLoseOrOverwriteEachOthersSavedChanges() throws {
        var saves = 0, refusals = 0
        for seed in UInt64(1)...150 {
            var generator = SeededRandom(seed: seed)
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let url = directory.appendingPathComponent("catalog.sqlite")
            let first = try ModelContainer(for: Catalog.self, configurations: ModelConfiguration(url: url))
            let setup = ModelContext(first)
            for title in ["a", "b", "c"] { setup.insert(Department(title: title)) }
            for index in 0..<6 { setup.insert(Employee(name: "e\(index)", level: generator.below(2) == 0 ? nil : index)) }
            try setup.save()
            // The other context shares the container, or opens the file on a connection of its own.
            let second = generator.below(2) == 0 ? first : try ModelContainer(for: Catalog.self, configurations: ModelConfiguration(url: url))
            var sides = [try Side(ModelContext(first)), try Side(ModelContext(second))]
            var store = try Self.stored(url)
            var counter = 0
            /// What the contexts did, for the messages of failures.
            var history: [String] = []

            for step in 0..<60 {
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
                    let fetched = try side.context.fetch(descriptor)
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
                case 4 where !live.isEmpty:
                    let id = live[generator.below(live.count)]
                    let department = generator.below(4) == 0 ? nil : Array(side.departments.keys.sorted())[generator.below(3)]
                    history.append("\(which) sets #\(id).department = \(department.map(String.init) ?? "nil")")
                    side.objects[id]!.object.department = department.map { side.departments[$0]! }
                    side.objects[id]!.shows.department = department
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
                    history.append("\(which) saves")
                    // A save: refused when an object it changed lost its row to the other context.
                    func writes(_ held: (object: Employee, shows: Row, changed: Set<Attribute>, savedDepartment: Int64?)) -> Bool {
                        !held.changed.isEmpty || held.shows.department != held.savedDepartment
                    }
                    let lost = side.objects.filter { writes($0.value) && !side.deleted.contains($0.key) && store[$0.key] == nil }.keys.sorted()
                    do {
                        try side.context.save()
                        XCTAssertTrue(lost.isEmpty, "\(context): saved changes to Employee \(lost), whose rows the other context deleted")
                        saves += 1
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
                    } catch let error as ModelContextError {
                        guard case let .deletedFromStore(entity, id) = error else {
                            XCTFail("\(context): \(error)")
                            return
                        }
                        XCTAssertEqual(entity, "Employee", context)
                        XCTAssertTrue(lost.contains(id), "\(context): refused for Employee#\(id); lost: \(lost)")
                        refusals += 1
                        // The app starts the unit of work again in a new context.
                        side.context.rollback()
                        sides[which] = try Side(ModelContext(which == 0 ? first : second))
                    }
                    XCTAssertEqual(try Self.stored(url), store, "\(context): the file after the save")
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
                if testRun?.failureCount ?? 0 > 0 { return }
            }
        }
        XCTAssertGreaterThan(saves, 1_000)
        XCTAssertGreaterThan(refusals, 20)
    }

    /// The employees' rows in the file, read by SQL on a connection of its own.
    private static func stored(_ url: URL) throws -> [Int64: Row] {
        let database = try SQLiteDatabase(path: url.path, create: false)
        var rows: [Int64: Row] = [:]
        for row in try database.query("SELECT id, name, level, department_id FROM employee") {
            guard case let .text(name) = row[1] else { continue }
            rows[row[0].integer!] = Row(name: name, level: row[2].integer.map(Int.init), department: row[3].integer)
        }
        return rows
    }

    private func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("modelgen-two-contexts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }
}
