import Foundation
@_spi(Backend) import ModelGenRuntime
import XCTest

/// `#Predicate`s on the size of a to-many relationship (`$0.reports.isEmpty`, `$0.projects.count > 1`)
/// select what Swift selects, on both backends: random employees with random managers (a to-many
/// through the inverse's key on the same table) and random projects (a join table), saved, then
/// with unsaved changes the fetch must see (managers and projects moved, a new employee), then
/// saved again and read by a new context.
extension BothBackendsTests {
    func testPredicatesOnTheSizeOfAToManyRelationshipSelectWhatSwiftSelects() async throws {
        try await onBothBackends(Catalog.self, seeds: UInt64(1)...4) { seed, flow in
            var random = SeededRandom(seed: seed)
            let context = flow.makeContext()
            let projects = (0..<3).map { Project(code: "p\($0)") }
            var employees = (0..<12).map { Employee(name: "e\($0 * 5 % 12)") }
            /// The app's changes, each time: managers and projects chosen at random.
            func reassign(_ chosen: [Employee]) {
                for employee in chosen {
                    employee.manager = Bool.random(using: &random) ? nil : employees.randomElement(using: &random)
                    employee.projects = projects.filter { _ in Int.random(in: 0..<3, using: &random) == 0 }
                }
            }
            for employee in employees { context.insert(employee) }
            reassign(employees)
            try await context.save()
            try await assertSelected(employees, in: context, "\(flow.name) seed \(seed), saved")

            reassign(employees.filter { _ in Bool.random(using: &random) })
            let newcomer = Employee(name: "e99")
            context.insert(newcomer)
            employees.append(newcomer)
            reassign([newcomer])
            employees.randomElement(using: &random)!.manager = newcomer
            try await assertSelected(employees, in: context, "\(flow.name) seed \(seed), unsaved")
            try await context.save()
            try await assertSelected(employees, in: flow.makeContext(), "\(flow.name) seed \(seed), saved again, read by a new context")
        }
    }

    /// Fetches by each predicate and compares the names with those Swift selects on the counts the
    /// app made (`employees` hold their managers and projects in memory; reports are the inverse).
    private func assertSelected(_ employees: [Employee], in context: some SeedFlowContext, _ label: String) async throws {
        let reports = Dictionary(grouping: employees.compactMap(\.manager), by: ObjectIdentifier.init).mapValues(\.count)
        let counts = Dictionary(uniqueKeysWithValues: employees.map { ($0.name, (reports: reports[ObjectIdentifier($0)] ?? 0, projects: $0.projects.count)) })
        let cases: [(String, Predicate<Employee>, (_ reports: Int, _ projects: Int) -> Bool)] = [
            ("reports.isEmpty", #Predicate { $0.reports.isEmpty }, { reports, _ in reports == 0 }),
            ("!reports.isEmpty", #Predicate { !$0.reports.isEmpty }, { reports, _ in reports != 0 }),
            ("reports.count > 1", #Predicate { $0.reports.count > 1 }, { reports, _ in reports > 1 }),
            ("projects.count == 2", #Predicate { $0.projects.count == 2 }, { _, projects in projects == 2 }),
            ("projects.isEmpty && reports.count >= 1", #Predicate { $0.projects.isEmpty && $0.reports.count >= 1 }, { reports, projects in projects == 0 && reports >= 1 }),
            ("projects.count > reports.count", #Predicate { $0.projects.count > $0.reports.count }, { reports, projects in projects > reports }),
        ]
        for (name, predicate, swift) in cases {
            let fetched = try await context.fetch(FetchDescriptor<Employee>(predicate: predicate, sortBy: [SortDescriptor(\.name)])).map(\.name)
            let expected = counts.filter { swift($0.value.reports, $0.value.projects) }.keys.sorted()
            XCTAssertEqual(fetched, expected, "\(label): \(name)")
            try await assertEqual(await context.fetchCount(FetchDescriptor<Employee>(predicate: predicate)), expected.count, "\(label): count of \(name)")
            if !context.hasChanges {
                // A delete selects its objects by the same SQL (a dry run: the store stays as it is).
                let preview = try await context.delete(model: Employee.self, where: predicate, dryRun: true)
                XCTAssertEqual(preview.deletedCount(of: "Employee"), expected.count, "\(label): dry-run delete of \(name)")
            }
        }
    }
}

/// `#Predicate`s that test the objects of a to-many relationship (`contains(where:)`, `allSatisfy`),
/// nested and reading the enclosing object, select what Swift's own
/// evaluation of the same predicate selects on the app's objects, on both backends: random
/// managers, projects, departments and levels, saved, then changed and unsaved, then read anew.
extension BothBackendsTests {
    func testPredicatesOnTheObjectsOfAToManyRelationshipSelectWhatSwiftSelects() async throws {
        try await onBothBackends(Catalog.self, seeds: UInt64(1)...4) { seed, flow in
            var random = SeededRandom(seed: seed)
            let context = flow.makeContext()
            let projects = (0..<3).map { Project(code: "p\($0)") }
            let departments = [Department(title: "d0"), Department(title: nil)]
            var employees = (0..<12).map { Employee(name: "e\($0 * 5 % 12)") }
            func reassign(_ chosen: [Employee]) {
                for employee in chosen {
                    employee.manager = Bool.random(using: &random) ? nil : employees.randomElement(using: &random)
                    employee.projects = projects.filter { _ in Int.random(in: 0..<3, using: &random) == 0 }
                    employee.department = Bool.random(using: &random) ? nil : departments.randomElement(using: &random)
                    employee.level = Int.random(in: 0..<4, using: &random) == 0 ? nil : Int.random(in: 1...3, using: &random)
                }
            }
            for employee in employees { context.insert(employee) }
            for project in projects { context.insert(project) }
            reassign(employees)
            try await context.save()
            let first = projects[1]
            try await assertSelectedAsSwiftDoes(employees, in: context, first, "\(flow.name) seed \(seed), saved")

            reassign(employees.filter { _ in Bool.random(using: &random) })
            let newcomer = Employee(name: "e99")
            context.insert(newcomer)
            employees.append(newcomer)
            reassign([newcomer])
            employees.randomElement(using: &random)!.manager = newcomer
            try await assertSelectedAsSwiftDoes(employees, in: context, first, "\(flow.name) seed \(seed), unsaved")
            try await context.save()
            try await assertSelectedAsSwiftDoes(employees, in: flow.makeContext(), first, "\(flow.name) seed \(seed), saved again, read by a new context")
        }
    }

    /// Fetches by each predicate and compares the names with those the predicate selects when
    /// Swift evaluates it on `employees` (which hold the relationships the app made, in memory).
    private func assertSelectedAsSwiftDoes(_ employees: [Employee], in context: some SeedFlowContext, _ project: Project, _ label: String) async throws {
        let sharesAProjectWithAPeer = #Predicate<Employee> { boss in
            boss.projects.contains { project in project.members.contains { member in member.level == boss.level && member.name != boss.name } }
        }
        let projectID = project.persistentModelID
        // Identifiers of two employees and of a project (whose row id an employee may have too).
        let someIDs = [employees[0].persistentModelID, employees[3].persistentModelID, projectID]
        let cases: [(String, Predicate<Employee>)] = [
            ("projects.contains { code == p1 }", #Predicate { $0.projects.contains { $0.code == "p1" } }),
            ("!projects.contains { code == p0 }", #Predicate { !$0.projects.contains { $0.code == "p0" } }),
            ("reports.contains { name starts with e1 }", #Predicate { $0.reports.contains { $0.name.starts(with: "e1") } }),
            ("reports.allSatisfy { level != nil }", #Predicate { $0.reports.allSatisfy { $0.level != nil } }),
            ("reports.allSatisfy { level > 1 }", #Predicate { $0.reports.allSatisfy { $0.level ?? 0 > 1 } }),
            ("reports.contains { department?.title == d0 }", #Predicate { $0.reports.contains { $0.department?.title == "d0" } }),
            ("reports.contains { projects.contains { code == p2 } }", #Predicate { $0.reports.contains { $0.projects.contains { $0.code == "p2" } } }),
            ("projects.contains { members.count > 3 }", #Predicate { $0.projects.contains { $0.members.count > 3 } }),
            ("reports.contains { level > boss.level }", #Predicate<Employee> { boss in boss.reports.contains { $0.level ?? 0 > boss.level ?? 0 } }),
            ("projects.contains { members.contains { a peer at boss.level } }", sharesAProjectWithAPeer),
            ("projects.contains { persistentModelID == p1's }", #Predicate { $0.projects.contains { $0.persistentModelID == projectID } }),
            ("someIDs.contains(persistentModelID)", #Predicate { someIDs.contains($0.persistentModelID) }),
            ("persistentModelID == a project's", #Predicate { $0.persistentModelID == projectID }),
            ("persistentModelID != a project's", #Predicate { $0.persistentModelID != projectID }),
            ("manager?.persistentModelID == a project's", #Predicate { $0.manager?.persistentModelID == projectID }),
            ("reports.count >= 1 && reports.contains { level == nil }", #Predicate { $0.reports.count >= 1 && $0.reports.contains { $0.level == nil } }),
        ]
        for (name, predicate) in cases {
            let fetched = try await context.fetch(FetchDescriptor<Employee>(predicate: predicate, sortBy: [SortDescriptor(\.name)])).map(\.name)
            let expected = try employees.filter { try predicate.evaluate($0) }.map(\.name).sorted()
            XCTAssertEqual(fetched, expected, "\(label): \(name)")
            try await assertEqual(await context.fetchCount(FetchDescriptor<Employee>(predicate: predicate)), expected.count, "\(label): count of \(name)")
            if !context.hasChanges {
                // A delete selects its objects by the same SQL (a dry run: the store stays as it is).
                let preview = try await context.delete(model: Employee.self, where: predicate, dryRun: true)
                XCTAssertEqual(preview.deletedCount(of: "Employee"), expected.count, "\(label): dry-run delete of \(name)")
            }
        }
    }
}
