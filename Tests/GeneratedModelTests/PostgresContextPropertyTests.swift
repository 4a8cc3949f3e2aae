import Foundation
import ModelGenPostgres
import ModelGenRuntime
import PostgresNIO
import XCTest

/// `ContextPropertyTests` on PostgreSQL: the same random sequences of what an app does to related
/// objects, through the same generated Catalog models, on a `PostgresModelContext`, against the
/// same plain Swift model. Relationships load only when asked here: an operation loads what it
/// reads or replaces, and the check after a step (every other one, at random) loads every
/// relationship of every object, with changes unsaved (the case a load must merge: an employee
/// moved in memory is in its new department's staff, loaded afterwards). After every save the server holds the saved state,
/// read by SQL, and a fresh context reads the same.
final class PostgresContextPropertyTests: XCTestCase {
    typealias World = ContextPropertyTests.World
    typealias Objects = ContextPropertyTests.Objects

    func testRandomWorkOnRelatedObjectsIsShownSavedAndReadBackExactly() async throws {
        try await PostgresTestServer.withClient { client in
            let container = try await PostgresModelContainer(for: Catalog.self, client: client)
            for seed in UInt64(1)...40 {
                for table in ["employee_projects", "employee", "department", "project"] { _ = try await client.query(PostgresQuery(unsafeSQL: "DELETE FROM \(table)")).collect() }
                let run = ContextPropertyRun(seed: seed, steps: 60, checksEveryStep: false, context: PostgresModelContext(container),
                                             freshContext: { PostgresModelContext(container) }, stored: { try await Self.stored(client, $0) },
                                             failed: { self.testRun?.failureCount ?? 0 > 0 })
                try await run.run()
                if self.testRun?.failureCount ?? 0 > 0 { return }
            }
        }
    }

    /// What the server holds, read by SQL, in the world's terms (rows matched to numbers by id).
    private static func stored(_ client: PostgresClient, _ objects: Objects) async throws -> World {
        func numbers<T: PersistentModel>(_ objects: [Int: T]) -> [Int64: Int] {
            Dictionary(objects.compactMap { entry in entry.value.persistentModelID.id.map { ($0, entry.key) } }, uniquingKeysWith: { first, _ in first })
        }
        let people = numbers(objects.people), departments = numbers(objects.departments), projects = numbers(objects.projects)
        var world = World()
        for try await (id, name, level, manager, department) in try await client.query("SELECT id, name, level, manager_id, department_id FROM employee").decode((Int64, String, Int64?, Int64?, Int64?).self) {
            guard let number = people[id] else { world.people[-Int(id)] = .init(name: "unknown row"); continue }
            world.people[number] = World.Person(name: name, level: level.map(Int.init), manager: manager.map { people[$0] ?? -1 }, department: department.map { departments[$0] ?? -1 })
        }
        for try await (id, title) in try await client.query("SELECT id, title FROM department").decode((Int64, String?).self) {
            world.departments[departments[id] ?? -Int(id)] = title
        }
        for try await (id, code) in try await client.query("SELECT id, code FROM project").decode((Int64, String).self) {
            world.projects[projects[id] ?? -Int(id)] = code
        }
        for try await (employee, project) in try await client.query("SELECT employee_id, project_id FROM employee_projects").decode((Int64, Int64).self) {
            world.people[people[employee] ?? 0, default: .init(name: "dangling")].projects.insert(projects[project] ?? -1)
        }
        return world
    }
}
