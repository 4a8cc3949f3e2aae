import Foundation
@_spi(Backend) import ModelGenRuntime
import XCTest

/// `#Predicate`s on the size of a to-many relationship (`$0.reports.isEmpty`, `$0.projects.count > 1`)
/// select what Swift selects, on both backends, on random staff (`onRandomStaff`): saved, with
/// unsaved changes, and read by a new context.
extension BothBackendsTests {
    func testPredicatesOnTheSizeOfAToManyRelationshipSelectWhatSwiftSelects() async throws {
        try await onRandomStaff(seeds: UInt64(1)...4) { staff, _ in
            try await assertSelected(staff.employees, in: staff.context, staff.label)
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
/// nested and reading the enclosing object, select what Swift's own evaluation of the same
/// predicate selects on the app's objects, on both backends, on random staff (`onRandomStaff`).
extension BothBackendsTests {
    func testPredicatesOnTheObjectsOfAToManyRelationshipSelectWhatSwiftSelects() async throws {
        try await onRandomStaff(seeds: UInt64(1)...4) { staff, _ in
            try await assertSelectedAsSwiftDoes(staff.employees, in: staff.context, staff.projects[1], staff.label)
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
        // More than a statement's parameters could hold, bound as one list.
        let manyIDs = (0..<40_000).map { PersistentIdentifier(entity: "Employee", id: Int64(1_000_000 + $0)) } + someIDs
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
            ("manyIDs.contains(persistentModelID)", #Predicate { manyIDs.contains($0.persistentModelID) }),
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
