import Foundation
import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// A differential property test of the context: random sequences of what an app does to related
/// objects (insert, change attributes, set to-ones and to-manys from either side, delete, save,
/// saves that fail and are tried again, roll back, let objects go) run through the generated Catalog models on a real SQLite file and,
/// beside them, on a plain Swift model of what SwiftData promises. After every step the objects
/// show the model's current state (inverses included); after every save the file holds its saved
/// state, read back by SQL; and a fresh context reads the same.
final class ContextPropertyTests: XCTestCase {
    /// What the objects should show and the store hold, with objects named by test-local numbers.
    struct World: Equatable {
        struct Person: Equatable {
            var name: String
            var level: Int?
            var manager: Int?
            var department: Int?
            var projects: Set<Int> = []
        }
        var people: [Int: Person] = [:]
        var departments: [Int: String?] = [:]
        var projects: [Int: String] = [:]

        func reports(of manager: Int) -> Set<Int> { Set(people.filter { $0.value.manager == manager }.keys) }
        func staff(of department: Int) -> Set<Int> { Set(people.filter { $0.value.department == department }.keys) }
        func members(of project: Int) -> Set<Int> { Set(people.filter { $0.value.projects.contains(project) }.keys) }

        /// What deleting an object does (the schema's rules are nullify, and join rows go).
        mutating func deletePerson(_ number: Int) {
            people[number] = nil
            for key in people.keys where people[key]!.manager == number { people[key]!.manager = nil }
        }
        mutating func deleteDepartment(_ number: Int) {
            departments[number] = nil
            for key in people.keys where people[key]!.department == number { people[key]!.department = nil }
        }
        mutating func deleteProject(_ number: Int) {
            projects[number] = nil
            for key in people.keys { people[key]!.projects.remove(number) }
        }
    }

    /// The live objects of one context, by the same numbers.
    struct Objects {
        var people: [Int: Employee] = [:]
        var departments: [Int: Department] = [:]
        var projects: [Int: Project] = [:]

        func number(of object: AnyObject?) -> Int? {
            guard let object else { return nil }
            return people.first { $0.value === object }?.key ?? departments.first { $0.value === object }?.key ?? projects.first { $0.value === object }?.key
        }
        func numbers(of objects: [AnyObject]) -> Set<Int?> { Set(objects.map { number(of: $0) }) }
    }

    func testRandomWorkOnRelatedObjectsIsShownSavedAndReadBackExactly() async throws {
        for seed in UInt64(1)...400 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("modelgen-context-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let url = directory.appendingPathComponent("catalog.sqlite")
            let container = try ModelContainer(for: Catalog.self, configurations: ModelConfiguration(url: url))
            let run = ContextPropertyRun(seed: seed, steps: 80, checksEveryStep: true, context: ModelContext(container),
                                         freshContext: { ModelContext(container) }, stored: { try Self.stored(url, $0) },
                                         failed: { self.testRun?.failureCount ?? 0 > 0 })
            try await run.run()
            if testRun?.failureCount ?? 0 > 0 { return }
        }
    }

    /// What the file holds, read by SQL, in the world's terms (rows matched to numbers by id).
    private static func stored(_ url: URL, _ objects: Objects) throws -> World {
        let database = try SQLiteDatabase(path: url.path, create: false)
        func numbers<T: PersistentModel>(_ objects: [Int: T]) -> [Int64: Int] {
            Dictionary(objects.compactMap { entry in entry.value.persistentModelID.id.map { ($0, entry.key) } }, uniquingKeysWith: { first, _ in first })
        }
        let people = numbers(objects.people), departments = numbers(objects.departments), projects = numbers(objects.projects)
        var world = World()
        for row in try database.query("SELECT id, name, level, manager_id, department_id FROM employee") {
            guard let number = people[row[0].integer!] else { world.people[-Int(row[0].integer!)] = .init(name: "unknown row"); continue }
            world.people[number] = World.Person(name: text(row[1])!, level: row[2].integer.map(Int.init),
                                                manager: row[3].integer.map { people[$0] ?? -1 }, department: row[4].integer.map { departments[$0] ?? -1 })
        }
        for row in try database.query("SELECT id, title FROM department") {
            world.departments[departments[row[0].integer!] ?? -Int(row[0].integer!)] = text(row[1])
        }
        for row in try database.query("SELECT id, code FROM project") {
            world.projects[projects[row[0].integer!] ?? -Int(row[0].integer!)] = text(row[1])!
        }
        for row in try database.query("SELECT employee_id, project_id FROM employee_projects") {
            world.people[people[row[0].integer!] ?? 0, default: .init(name: "dangling")].projects.insert(projects[row[1].integer!] ?? -1)
        }
        return world
    }
}

/// One run of the context property: `steps` operations drawn from `seed`, done on the objects of
/// `context` and on the world model, then checked. Relationships an operation reads or replaces
/// are loaded first, and so is every relationship before a check (`SeedFlowContext.load`: nothing
/// to do on SQLite, which loads on access).
struct ContextPropertyRun {
    typealias World = ContextPropertyTests.World
    typealias Objects = ContextPropertyTests.Objects

    let seed: UInt64
    let steps: Int
    /// True: the objects are checked after every step. False: after half the steps, at random, so
    /// that relationships a context loads only when asked stay unloaded into the next steps, whose
    /// changes to their other sides the loads must then bring in.
    let checksEveryStep: Bool
    let context: any SeedFlowContext
    /// A new context over the same store, to read back what was saved.
    let freshContext: () -> any SeedFlowContext
    /// What the store holds, read without the runtime, numbered as `objects` number them.
    let stored: (Objects) async throws -> World
    /// Whether the test has failed (a run stops at its first failing step).
    let failed: () -> Bool

    func run() async throws {
        var random = SeededRandom(seed: seed)
        var current = World(), saved = World()
        var objects = Objects()
        var unsaved: Set<Int> = []
        var next = 0
        var log: [String] = []

        func pick<T>(_ dictionary: [Int: T]) -> Int? { dictionary.keys.sorted().randomElement(using: &random) }
        // People get their ids in the order of their numbers, but a new one deleted and inserted
        // again goes after those inserted before that: its place in that order.
        var places: [Int: Int] = [:]
        func inIDOrder(_ people: [Int]) -> [Int] { people.sorted { (places[$0] ?? $0) < (places[$1] ?? $1) } }

        for _ in 0..<steps {
            let operation = Int.random(in: 0..<21, using: &random)
            switch operation {
            case 0, 1:
                next += 1
                let person = World.Person(name: "p\(next)", level: Bool.random(using: &random) ? Int.random(in: -3...3, using: &random) : nil)
                let employee = Employee(name: person.name, level: person.level)
                current.people[next] = person
                objects.people[next] = employee
                unsaved.insert(next)
                // Related before or after the insert, as an app may.
                if Bool.random(using: &random), let department = pick(objects.departments) {
                    employee.department = objects.departments[department]
                    current.people[next]!.department = department
                }
                context.insert(employee)
                log.append("insert person \(next)")
            case 2:
                next += 1
                let title = "d\(next)"
                let department = Department(title: title)
                current.departments[next] = title
                objects.departments[next] = department
                unsaved.insert(next)
                context.insert(department)
                log.append("insert department \(next)")
            case 3:
                next += 1
                let project = Project(code: "c\(next)")
                current.projects[next] = "c\(next)"
                objects.projects[next] = project
                unsaved.insert(next)
                context.insert(project)
                log.append("insert project \(next)")
            case 4:
                // Edit attributes of a person, a department or a project: a save then updates rows
                // of several tables whose changed columns have the same places.
                let kind = Int.random(in: 0..<3, using: &random)
                if kind == 1, let department = pick(objects.departments) {
                    objects.departments[department]!.title! += "'"
                    current.departments[department]!! += "'"
                    log.append("edit department \(department)")
                } else if kind == 2, let project = pick(objects.projects) {
                    objects.projects[project]!.code += "'"
                    current.projects[project]! += "'"
                    log.append("edit project \(project)")
                } else {
                    guard let person = pick(objects.people) else { continue }
                    let level: Int? = Bool.random(using: &random) ? Int.random(in: -3...3, using: &random) : nil
                    objects.people[person]!.level = level
                    objects.people[person]!.name += "'"
                    current.people[person]!.level = level
                    current.people[person]!.name += "'"
                    log.append("edit \(person)")
                }
            case 5:
                guard let person = pick(objects.people) else { continue }
                let manager = Bool.random(using: &random) ? pick(objects.people).flatMap { $0 == person ? nil : $0 } : nil
                objects.people[person]!.manager = manager.map { objects.people[$0]! }
                current.people[person]!.manager = manager
                log.append("\(person).manager = \(manager.map(String.init) ?? "nil")")
            case 6:
                guard let person = pick(objects.people) else { continue }
                let department = Bool.random(using: &random) ? pick(objects.departments) : nil
                objects.people[person]!.department = department.map { objects.departments[$0]! }
                current.people[person]!.department = department
                log.append("\(person).department = \(department.map(String.init) ?? "nil")")
            case 7:
                // The to-many side of a to-one: the employee leaves its old department.
                guard let person = pick(objects.people), let department = pick(objects.departments) else { continue }
                // An object already in a to-many relationship appended again, or appended twice at
                // once, stays there once (the list's setter links only the objects after its members).
                try await context.load(\.staff, of: [objects.departments[department]!])
                let joining = [person] + (0..<Int.random(in: 0...2, using: &random)).compactMap { _ in pick(objects.people) }
                objects.departments[department]!.staff.append(contentsOf: joining.map { objects.people[$0]! })
                for joiner in joining { current.people[joiner]!.department = department }
                log.append("\(department).staff.append(contentsOf: \(joining))")
            case 8:
                guard let manager = pick(objects.people), let person = pick(objects.people), person != manager else { continue }
                try await context.load(\.reports, of: [objects.people[manager]!])
                objects.people[manager]!.reports.removeAll { $0 === objects.people[person]! }
                if current.people[person]!.manager == manager { current.people[person]!.manager = nil }
                log.append("\(manager).reports.remove(\(person))")
            case 9:
                guard let person = pick(objects.people) else { continue }
                try await context.load(\.projects, of: [objects.people[person]!])
                let chosen = Set(objects.projects.keys.filter { _ in Bool.random(using: &random) })
                var listed = chosen.sorted()
                if let again = listed.randomElement(using: &random), Bool.random(using: &random) {
                    listed.insert(again, at: Int.random(in: 0...listed.count, using: &random))   // held once
                }
                objects.people[person]!.projects = listed.map { objects.projects[$0]! }
                current.people[person]!.projects = chosen
                log.append("\(person).projects = \(chosen.sorted())")
            case 10:
                guard let project = pick(objects.projects), let person = pick(objects.people) else { continue }
                try await context.load(\.members, of: [objects.projects[project]!])
                if current.people[person]!.projects.contains(project), Bool.random(using: &random) {
                    objects.projects[project]!.members.removeAll { $0 === objects.people[person]! }
                    current.people[person]!.projects.remove(project)
                    log.append("\(project).members.remove(\(person))")
                } else {
                    objects.projects[project]!.members.append(objects.people[person]!)
                    current.people[person]!.projects.insert(project)
                    log.append("\(project).members.append(\(person))")
                }
            case 11:
                // Delete one object and save: the deletion plan runs with the other changes.
                let kind = min(Int.random(in: 0..<4, using: &random), 2)
                let gone: PersistentIdentifier
                let before = current
                // Inserted again after the save (an undo): what it was, with the links it shows.
                var undo: (() -> Void)?
                if kind == 0, let person = pick(objects.people) {
                    let object = objects.people[person]!
                    undo = {
                        context.insert(object)
                        objects.people[person] = object
                        next += 1
                        places[person] = next
                        unsaved.insert(person)
                    }
                    gone = objects.people[person]!.persistentModelID
                    context.delete(objects.people[person]!)
                    current.deletePerson(person)
                    objects.people[person] = nil
                    log.append("delete person \(person), save")
                } else if kind == 1, let department = pick(objects.departments) {
                    let object = objects.departments[department]!
                    undo = {
                        context.insert(object)
                        objects.departments[department] = object
                        unsaved.insert(department)
                    }
                    gone = objects.departments[department]!.persistentModelID
                    context.delete(objects.departments[department]!)
                    current.deleteDepartment(department)
                    objects.departments[department] = nil
                    log.append("delete department \(department), save")
                } else if let project = pick(objects.projects) {
                    let object = objects.projects[project]!
                    undo = {
                        context.insert(object)
                        objects.projects[project] = object
                        unsaved.insert(project)
                    }
                    gone = objects.projects[project]!.persistentModelID
                    context.delete(objects.projects[project]!)
                    current.deleteProject(project)
                    objects.projects[project] = nil
                    log.append("delete project \(project), save")
                } else {
                    continue
                }
                try await context.save()
                saved = current
                unsaved = []
                // Its identifier no longer finds it (nor, if it was never saved, anything).
                let found = try await context.model(for: gone)
                XCTAssertNil(found, "model(for:) of a deleted object (seed \(seed): \(log.suffix(12).joined(separator: "; ")))")
                // Where every relationship is loaded (what an object shows is all it has), insert
                // it again now and then: it comes back as a new object with the links it had.
                if checksEveryStep, let undo, Bool.random(using: &random) {
                    undo()
                    current = before
                    log.append("insert it again")
                }
            case 16:
                // A bulk delete runs at once on the stored rows (their stored level decides);
                // unsaved changes of the other objects are kept.
                let level = Int.random(in: -3...3, using: &random)
                let doomed = saved.people.filter { $0.value.level == level }.keys.sorted()
                let gone = doomed.compactMap { objects.people[$0]?.persistentModelID }
                // A dry run reports exactly what the delete then does, and changes nothing.
                let preview = try await context.delete(model: Employee.self, where: #Predicate { $0.level == level }, dryRun: true)
                try await assertEqual(await stored(objects), saved, "a dry run changes nothing (seed \(seed), level \(level))")
                let report = try await context.delete(model: Employee.self, where: #Predicate { $0.level == level }, dryRun: false)
                XCTAssertEqual(report.deletedCount(of: "Employee"), doomed.count, "deleted (seed \(seed), level \(level))")
                XCTAssertEqual(preview.deleted.map { "\($0.entity) \($0.count)" }, report.deleted.map { "\($0.entity) \($0.count)" }, "dry run (seed \(seed))")
                XCTAssertEqual(preview.nullifiedByRelationship.map { "\($0.relationship) \($0.count)" },
                               report.nullifiedByRelationship.map { "\($0.relationship) \($0.count)" }, "dry run (seed \(seed))")
                XCTAssertEqual([preview.nullified, preview.joinRowsRemoved], [report.nullified, report.joinRowsRemoved], "dry run (seed \(seed))")
                XCTAssertTrue(preview.isDryRun && !report.isDryRun, "seed \(seed)")
                for identifier in gone {
                    let found = try await context.model(for: identifier)
                    XCTAssertNil(found, "model(for:) of \(identifier), deleted in bulk (seed \(seed))")
                }
                for person in doomed {
                    saved.deletePerson(person)
                    current.deletePerson(person)
                    objects.people[person] = nil
                }
                log.append("delete people whose stored level is \(level): \(doomed)")
            case 17, 18:
                // A fetch sees the unsaved changes (SwiftData's includePendingChanges): by a level
                // now, sorted by name with a page of them; or in id order (the order the numbers
                // were given), by the level itself or by the manager's, with a limit.
                let level: Int? = Bool.random(using: &random) ? Int.random(in: -3...3, using: &random) : nil
                let kind = min(Int.random(in: 0..<4, using: &random), 2)
                var descriptor: FetchDescriptor<Employee>
                var matching: [Int]
                switch kind {
                case 0:
                    descriptor = FetchDescriptor(predicate: #Predicate { $0.level == level }, sortBy: [SortDescriptor(\.name)])
                    matching = current.people.filter { $0.value.level == level }.sorted { $0.value.name < $1.value.name }.map(\.key)
                case 1:
                    descriptor = FetchDescriptor(predicate: #Predicate { $0.level == level })
                    matching = inIDOrder(current.people.filter { $0.value.level == level }.map(\.key))
                default:
                    descriptor = FetchDescriptor(predicate: #Predicate { $0.manager?.level == level })
                    matching = inIDOrder(current.people.filter { $0.value.manager.flatMap { current.people[$0]!.level } == level }.map(\.key))
                }
                var expected = matching
                if Bool.random(using: &random) {
                    let offset = kind == 0 ? Int.random(in: 0...3, using: &random) : 0, limit = Int.random(in: 1...4, using: &random)
                    if offset > 0 { descriptor.fetchOffset = offset }
                    descriptor.fetchLimit = limit
                    expected = Array(matching.dropFirst(offset).prefix(limit))
                }
                // Prefetching changes what is loaded, never what matches (nor, checked below, what the
                // relationships show: unsaved changes to them stay).
                let prefetched: [PartialKeyPath<Employee>] = [\.projects, \.department, \.reports, \.manager].filter { _ in Bool.random(using: &random) }
                descriptor.relationshipKeyPathsForPrefetching = prefetched
                let found = try await context.fetch(descriptor)
                let fetched = found.map { objects.number(of: $0) }
                log.append("fetch \(kind) level \(level.map(String.init) ?? "nil") prefetching \(prefetched.count)")
                let trail = "seed \(seed): \(log.suffix(12).joined(separator: "; "))"
                XCTAssertEqual(fetched, expected.map(Optional.some), "fetch (\(trail))")
                // The other ways to ask the same: identifiers, batches, and each object by its identifier.
                try await assertEqual(await context.fetchIdentifiers(descriptor), found.map(\.persistentModelID), "fetchIdentifiers (\(trail))")
                let batched = try await context.enumerated(descriptor, batchSize: Int.random(in: 1...3, using: &random))
                XCTAssertEqual(batched.map { objects.number(of: $0) }, fetched, "enumerate (\(trail))")
                for object in found {
                    let model = try await context.model(for: object.persistentModelID)
                    XCTAssertTrue(model === object, "model(for:) (\(trail))")
                    XCTAssertTrue((context.registeredModel(for: object.persistentModelID) as Employee?) === object, "registeredModel(for:) (\(trail))")
                }
                descriptor.fetchLimit = nil
                descriptor.fetchOffset = nil
                try await assertEqual(await context.fetchCount(descriptor), matching.count, "fetchCount (seed \(seed))")
            case 20:
                // A save that fails (two projects with one code) writes nothing and keeps every
                // unsaved change: the code given back, a later save writes them all.
                guard let project = pick(objects.projects), let other = pick(objects.projects), project != other else { continue }
                let code = objects.projects[project]!.code
                objects.projects[project]!.code = objects.projects[other]!.code
                let trail = "seed \(seed): " + (log.suffix(12) + ["save with project \(project) holding \(other)'s code"]).joined(separator: "; ")
                do {
                    try await context.save()
                    XCTFail("two projects with one code were saved (\(trail))")
                } catch {
                    XCTAssertEqual(error as? ModelContextError, .uniqueViolation(entity: "Project", attribute: "code"), trail)
                }
                try await assertEqual(await stored(objects), saved, "a failed save writes nothing (\(trail))")
                objects.projects[project]!.code = code
                log.append("failed save (project \(project) held \(other)'s code), code given back")
            case 12, 13:
                try await context.save()
                saved = current
                unsaved = []
                log.append("save")
            case 14:
                context.rollback()
                current = saved
                for number in unsaved {
                    objects.people[number] = nil
                    objects.departments[number] = nil
                    objects.projects[number] = nil
                }
                // Objects deleted before the rollback come back: they are fetched again.
                unsaved = []
                objects = try await reload(context, keeping: objects)
                log.append("rollback")
            case 19:
                // Delete an object and insert it again, as an app's undo does: nothing changes
                // (a new object is inserted anew, its partners' relationships holding it again; a
                // saved one's deletion is taken back).
                let kind = Int.random(in: 0..<3, using: &random)
                if kind == 0, let person = pick(objects.people) {
                    context.delete(objects.people[person]!)
                    context.insert(objects.people[person]!)
                    if unsaved.contains(person) {
                        next += 1
                        places[person] = next
                    }
                    log.append("delete person \(person), insert it again")
                } else if kind == 1, let department = pick(objects.departments) {
                    context.delete(objects.departments[department]!)
                    context.insert(objects.departments[department]!)
                    log.append("delete department \(department), insert it again")
                } else if let project = pick(objects.projects) {
                    context.delete(objects.projects[project]!)
                    context.insert(objects.projects[project]!)
                    log.append("delete project \(project), insert it again")
                }
            default:
                // Let go of every object and fetch them again: the context keeps those with
                // unsaved changes (the same objects come back) and the unsaved changes of the
                // others' relationships (new objects show them).
                objects = Objects()
                objects = try await reload(context, keeping: objects)
                log.append("let go and fetch again")
            }
            let trail = "seed \(seed): " + log.suffix(12).joined(separator: "; ")
            if checksEveryStep || Bool.random(using: &random) {
                try await loadEverything(context, objects)
                XCTAssertEqual(shown(objects, current, trail), current, "objects show what the app did (\(trail))")
            }
            if log.last?.hasSuffix("save") == true || operation == 16 {
                try await assertEqual(await stored(objects), saved, "the store holds what was saved (\(trail))")
                let fresh = freshContext()
                let freshObjects = try await reload(fresh, keeping: Objects())
                try await loadEverything(fresh, freshObjects)
                XCTAssertEqual(shown(freshObjects, saved, trail), saved, "a fresh context reads what was saved (\(trail))")
            }
            if failed() { return }
        }
        // What the run left unsaved goes by the app's choice, not with the context.
        context.rollback()
    }

    /// Every relationship of every object held, loaded (those loaded already stay as they are).
    private func loadEverything(_ context: any SeedFlowContext, _ objects: Objects) async throws {
        let people = Array(objects.people.values)
        for keyPath: PartialKeyPath<Employee> in [\.manager, \.reports, \.department, \.projects] { try await context.load(keyPath, of: people) }
        try await context.load(\.staff, of: Array(objects.departments.values))
        try await context.load(\.members, of: Array(objects.projects.values))
    }

    /// Fetches every object and numbers it: the ones the app still holds (`kept`) by their number,
    /// the others by the number in their name, code or title (before any `'` an edit added).
    private func reload(_ context: any SeedFlowContext, keeping kept: Objects) async throws -> Objects {
        var objects = Objects()
        for employee in try await context.fetch(FetchDescriptor<Employee>()) {
            objects.people[kept.number(of: employee) ?? Int(employee.name.dropFirst().prefix { $0 != "'" })!] = employee
        }
        for project in try await context.fetch(FetchDescriptor<Project>()) {
            objects.projects[kept.number(of: project) ?? Int(project.code.dropFirst().prefix { $0 != "'" })!] = project
        }
        for department in try await context.fetch(FetchDescriptor<Department>()) {
            objects.departments[kept.number(of: department) ?? Int(department.title!.dropFirst().prefix { $0 != "'" })!] = department
        }
        return objects
    }

    /// What the objects show, in the world's terms; each inverse is checked against `world`.
    private func shown(_ objects: Objects, _ world: World, _ trail: String) -> World {
        /// A to-many relationship holds each object once (the store keeps one link).
        func assertEachOnce(_ list: [AnyObject], _ what: String) {
            XCTAssertEqual(Set(list.map(ObjectIdentifier.init)).count, list.count, "\(what) holds an object twice (\(trail))")
        }
        var shown = World()
        for (number, employee) in objects.people {
            assertEachOnce(employee.projects, "projects of \(number)")
            assertEachOnce(employee.reports, "reports of \(number)")
            shown.people[number] = World.Person(name: employee.name, level: employee.level, manager: objects.number(of: employee.manager),
                                                department: objects.number(of: employee.department),
                                                projects: Set(employee.projects.compactMap { objects.number(of: $0) }))
            XCTAssertEqual(objects.numbers(of: employee.reports), Set(world.reports(of: number).map(Optional.some)), "reports of \(number) (\(trail))")
        }
        for (number, department) in objects.departments {
            shown.departments[number] = department.title
            assertEachOnce(department.staff, "staff of department \(number)")
            XCTAssertEqual(objects.numbers(of: department.staff), Set(world.staff(of: number).map(Optional.some)), "staff of department \(number) (\(trail))")
        }
        for (number, project) in objects.projects {
            shown.projects[number] = project.code
            assertEachOnce(project.members, "members of project \(number)")
            XCTAssertEqual(objects.numbers(of: project.members), Set(world.members(of: number).map(Optional.some)), "members of project \(number) (\(trail))")
        }
        return shown
    }
}

private func text(_ value: SQLiteValue) -> String? {
    if case let .text(text) = value { return text }
    return nil
}
