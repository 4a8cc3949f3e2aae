import Foundation
import ModelGenCore
import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// The Catalog schema as the generator resolves it, for what reads the schema itself (`--where`).
enum CatalogSchema {
    static let resolved: ModelSchema? = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Schemas/Catalog.yaml").path
        guard let bytes = FileManager.default.contents(atPath: path) else { return nil }
        return ModelGen.load(path: path, bytes: [UInt8](bytes)).0
    }()
}

/// What a check of random Catalog staff is given: the app's employees (which hold the relationships
/// the app made, in memory), its projects, the context to ask, the generator and a label.
struct RandomStaff {
    var employees: [Employee]
    var projects: [Project]
    var context: any SeedFlowContext
    var label: String
}

extension BothBackendsTests {
    /// Runs `check` for each seed on both backends, on random Catalog staff: employees with random
    /// managers (a to-many through the inverse's key on the same table), projects (a join table),
    /// departments and levels; saved, then with unsaved changes a fetch must see (some reassigned,
    /// a newcomer who manages someone), then saved again and read by a new context.
    func onRandomStaff(seeds: ClosedRange<UInt64>, _ check: (RandomStaff, inout SeededRandom) async throws -> Void) async throws {
        try await onBothBackends(Catalog.self, seeds: seeds) { seed, flow in
            var random = SeededRandom(seed: seed)
            let context = flow.makeContext()
            let projects = (0..<3).map { Project(code: "p\($0)") }
            let departments = [Department(title: "d0"), Department(title: nil), Department(title: ""), Department(title: "d%_\\0")]
            // Names with what `LIKE` and its escape mean (`%`, `_`, `\`), in upper case and beyond ASCII.
            var employees = (0..<14).map { Employee(name: ["e", "e_", "e%", "É", "e\\", "E"][$0 % 6] + "\($0 * 5 % 14)") }
            func reassign(_ chosen: [Employee]) {
                for employee in chosen {
                    employee.manager = Int.random(in: 0..<3, using: &random) == 0 ? nil : employees.randomElement(using: &random)
                    employee.projects = projects.filter { _ in Int.random(in: 0..<3, using: &random) == 0 }
                    employee.department = Bool.random(using: &random) ? nil : departments.randomElement(using: &random)
                    employee.level = Int.random(in: 0..<4, using: &random) == 0 ? nil : Int.random(in: 0...3, using: &random)
                }
            }
            for employee in employees { context.insert(employee) }
            for project in projects { context.insert(project) }
            for department in departments { context.insert(department) }
            reassign(employees)
            try await context.save()
            try await check(RandomStaff(employees: employees, projects: projects, context: context, label: "\(flow.name) seed \(seed), saved"), &random)

            reassign(employees.filter { _ in Int.random(in: 0..<3, using: &random) == 0 })
            let newcomer = Employee(name: "e99")
            context.insert(newcomer)
            employees.append(newcomer)
            reassign([newcomer])
            employees.randomElement(using: &random)!.manager = newcomer
            try await check(RandomStaff(employees: employees, projects: projects, context: context, label: "\(flow.name) seed \(seed), unsaved"), &random)
            try await context.save()
            try await check(RandomStaff(employees: employees, projects: projects, context: flow.makeContext(), label: "\(flow.name) seed \(seed), read by a new context"), &random)
        }
    }
}
