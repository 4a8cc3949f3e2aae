import Foundation
@testable @_spi(Backend) import ModelGenRuntime
import ModelGenTestSupport
import XCTest

extension BothBackendsTests {
    /// A to-many list changed in place through its accessor (`department.staff.append(e)`, which
    /// goes through the generated `_modify` and keeps the list's array between changes) ends as
    /// the same change made on a copy and set back would leave it. A differential test on both
    /// backends: two identical graphs of Catalog objects in one context; each step does one random
    /// change (every kind of `Array` mutation on any of the four to-many relationships, links set
    /// from the other side, deletes, saves, rollbacks), in place on graph A and on graph B by get,
    /// change and a set through the runtime's general path (which compares nothing, and links and
    /// unlinks by sets of members). After every step each list of A shows what its mirror in B shows, in order, and
    /// what the list's own members are (the array handed out is never stale); a copy of a list
    /// taken before a change in place keeps its elements; after a save a new context reads the
    /// same links for both graphs.
    func testListsChangedInPlaceEndAsTheSameChangeSetWhole() async throws {
        try await onBothBackends(Catalog.self, seeds: 1...20) { seed, backend in
            var random = SeededRandom(seed: seed)
            let context = backend.makeContext()
            let graphs = [MirroredGraph(prefix: "a"), MirroredGraph(prefix: "b")]
            for graph in graphs { graph.insert(into: context) }
            try await context.save()
            var log: [String] = []
            for step in 0..<80 {
                let label = "\(backend.name), seed \(seed), step \(step): \(log.suffix(6).joined(separator: "; "))"
                for graph in graphs { try await graph.load(in: context) }
                let action = random.below(20)
                switch action {
                case 0..<12:
                    // The same change to the same list of both graphs: in place on A, on a copy set back on B.
                    let list = ListChoice(random: &random, graph: graphs[0])
                    guard let list else { continue }
                    let change = ArrayChange(random: &random, count: list.count(in: graphs[0]), candidates: graphs[0].candidates(for: list))
                    let held = random.below(3) == 0 ? (names: list.names(in: graphs[0]), copy: list.heldCopy(in: graphs[0])) : nil
                    list.changeInPlace(graphs[0], change)
                    list.changeCopyAndSet(graphs[1], change)
                    if let held {
                        XCTAssertEqual(held.copy(), held.names, "\(label): a copy of the list taken before a change in place keeps its elements")
                    }
                    log.append("\(list) \(change)")
                case 12..<14:
                    // A link set from the other side changes the list the accessor last handed out.
                    let employee = random.below(MirroredGraph.employeeCount), department = random.below(MirroredGraph.departmentCount + 1)
                    guard graphs[0].isAlive(employee: employee) else { continue }
                    for graph in graphs {
                        graph.employees[employee].department = department < MirroredGraph.departmentCount ? graph.departments[department] : nil
                    }
                    log.append("e\(employee).department = d\(department)")
                case 14:
                    let employee = random.below(MirroredGraph.employeeCount)
                    guard graphs[0].isAlive(employee: employee) else { continue }
                    for graph in graphs { graph.delete(employee: employee, in: context) }
                    log.append("delete e\(employee)")
                case 15, 16:
                    try await context.save()
                    for graph in graphs {
                        graph.gone.formUnion(graph.deletedSinceSave)
                        graph.deletedSinceSave = []
                    }
                    log.append("save")
                    try await assertStoredLinksAgree(backend, graphs, "\(label), after the save")
                case 17:
                    context.rollback()
                    for graph in graphs { graph.deletedSinceSave = [] }
                    log.append("rollback")
                default:
                    // Reads, which hand out the list kept: then a change in place must not change them.
                    for graph in graphs { _ = graph.departments.map(\.staff.count) }
                    log.append("read")
                }
                for graph in graphs { try await graph.load(in: context) }
                assertGraphsAgree(graphs[0], graphs[1], label)
                if testRun?.failureCount ?? 0 > 0 { return }
            }
            context.rollback()
        }
    }

    private func assertGraphsAgree(_ inPlace: MirroredGraph, _ setWhole: MirroredGraph, _ label: String) {
        for list in ListChoice.all(in: inPlace) {
            let shown = list.names(in: inPlace), mirrored = list.names(in: setWhole)
            XCTAssertEqual(shown, mirrored, "\(label): \(list) changed in place shows what the same change set whole shows")
            XCTAssertEqual(shown, list.memberNames(in: inPlace), "\(label): \(list) hands out its members as they are")
            XCTAssertEqual(mirrored, list.memberNames(in: setWhole), "\(label): \(list) (set whole) hands out its members as they are")
        }
        for (index, pair) in zip(inPlace.employees, setWhole.employees).enumerated() where inPlace.isAlive(employee: index) {
            XCTAssertEqual(pair.0.department.map(MirroredGraph.name), pair.1.department.map(MirroredGraph.name), "\(label): e\(index).department")
            XCTAssertEqual(pair.0.manager.map(MirroredGraph.name), pair.1.manager.map(MirroredGraph.name), "\(label): e\(index).manager")
        }
    }

    /// What a new context reads: for each graph, every link as (owner, member) names, the graph's
    /// prefix dropped; both graphs must read the same.
    private func assertStoredLinksAgree(_ backend: SeedFlowBackend, _ graphs: [MirroredGraph], _ label: String) async throws {
        let fresh = backend.makeContext()
        let employees = try await fresh.fetch(FetchDescriptor<Employee>())
        let departments = try await fresh.fetch(FetchDescriptor<Department>())
        try await fresh.load(\.projects, of: employees)
        try await fresh.load(\.department, of: employees)
        try await fresh.load(\.manager, of: employees)
        var links: [String: Set<String>] = [:]
        func unprefixed(_ name: String) -> String { String(name.dropFirst()) }
        for employee in employees {
            let graph = String(employee.name.prefix(1)), name = unprefixed(employee.name)
            for project in employee.projects { links[graph, default: []].insert("\(name) in \(unprefixed(project.code))") }
            if let department = employee.department { links[graph, default: []].insert("\(name) of \(unprefixed(department.title ?? "?"))") }
            if let manager = employee.manager { links[graph, default: []].insert("\(name) reports to \(unprefixed(manager.name))") }
        }
        XCTAssertEqual(departments.count, 2 * MirroredGraph.departmentCount, label)
        XCTAssertEqual(links["a"] ?? [], links["b"] ?? [], "\(label): the store holds the same links for both graphs")
    }
}

/// One of two identical graphs of Catalog objects (names prefixed to tell them apart).
private final class MirroredGraph {
    static let employeeCount = 10, departmentCount = 3, projectCount = 3
    let employees: [Employee]
    let departments: [Department]
    let projects: [Project]
    /// Employees deleted since the last save or rollback (a rollback brings them back).
    var deletedSinceSave: Set<Int> = []
    /// Employees whose deletion was saved.
    var gone: Set<Int> = []

    init(prefix: String) {
        employees = (0..<Self.employeeCount).map { Employee(name: "\(prefix)e\($0)") }
        departments = (0..<Self.departmentCount).map { Department(title: "\(prefix)d\($0)") }
        projects = (0..<Self.projectCount).map { Project(code: "\(prefix)p\($0)") }
    }

    static func name(_ object: any PersistentModel) -> String {
        switch object {
        case let employee as Employee: String(employee.name.dropFirst())
        case let department as Department: String(department.title?.dropFirst() ?? "?")
        case let project as Project: String(project.code.dropFirst())
        default: "?"
        }
    }

    func insert(into context: any SeedFlowContext) {
        employees.forEach(context.insert)
        departments.forEach(context.insert)
        projects.forEach(context.insert)
    }

    func isAlive(employee: Int) -> Bool { !deletedSinceSave.contains(employee) && !gone.contains(employee) }

    func delete(employee: Int, in context: any SeedFlowContext) {
        context.delete(employees[employee])
        deletedSinceSave.insert(employee)
    }

    /// The employees a list may take: the living ones.
    func candidates(for list: ListChoice) -> [Int] { (0..<Self.employeeCount).filter(isAlive) }

    /// Loads every relationship the steps change or read (PostgreSQL loads only on request).
    func load(in context: any SeedFlowContext) async throws {
        let living = employees.indices.filter(isAlive).map { employees[$0] }
        try await context.load(\.staff, of: departments)
        try await context.load(\.members, of: projects)
        try await context.load(\.projects, of: living)
        try await context.load(\.reports, of: living)
        try await context.load(\.department, of: living)
        try await context.load(\.manager, of: living)
    }
}

/// One to-many list of a graph: whose, and which relationship.
private enum ListChoice: CustomStringConvertible {
    case staff(department: Int)
    case members(project: Int)
    case projects(employee: Int)
    case reports(employee: Int)

    init?(random: inout SeededRandom, graph: MirroredGraph) {
        switch random.below(4) {
        case 0: self = .staff(department: random.below(MirroredGraph.departmentCount))
        case 1: self = .members(project: random.below(MirroredGraph.projectCount))
        case 2:
            let employee = random.below(MirroredGraph.employeeCount)
            guard graph.isAlive(employee: employee) else { return nil }
            self = .projects(employee: employee)
        default:
            let employee = random.below(MirroredGraph.employeeCount)
            guard graph.isAlive(employee: employee) else { return nil }
            self = .reports(employee: employee)
        }
    }

    static func all(in graph: MirroredGraph) -> [ListChoice] {
        let living = (0..<MirroredGraph.employeeCount).filter(graph.isAlive)
        return (0..<MirroredGraph.departmentCount).map { .staff(department: $0) } + (0..<MirroredGraph.projectCount).map { .members(project: $0) }
            + living.map { .projects(employee: $0) } + living.map { .reports(employee: $0) }
    }

    var description: String {
        switch self {
        case let .staff(department): "d\(department).staff"
        case let .members(project): "p\(project).members"
        case let .projects(employee): "e\(employee).projects"
        case let .reports(employee): "e\(employee).reports"
        }
    }

    func members(in graph: MirroredGraph) -> [any PersistentModel] {
        switch self {
        case let .staff(department): graph.departments[department].staff
        case let .members(project): graph.projects[project].members
        case let .projects(employee): graph.employees[employee].projects
        case let .reports(employee): graph.employees[employee].reports
        }
    }

    func names(in graph: MirroredGraph) -> [String] { members(in: graph).map(MirroredGraph.name) }
    func count(in graph: MirroredGraph) -> Int { members(in: graph).count }

    /// The array the accessor hands out now, held: the names of its elements, read later.
    func heldCopy(in graph: MirroredGraph) -> () -> [String] {
        func hold<Target: PersistentModel>(_ copy: [Target]) -> () -> [String] { { copy.map(MirroredGraph.name) } }
        return switch self {
        case let .staff(department): hold(graph.departments[department].staff)
        case let .members(project): hold(graph.projects[project].members)
        case let .projects(employee): hold(graph.employees[employee].projects)
        case let .reports(employee): hold(graph.employees[employee].reports)
        }
    }

    /// The object whose list this is, and the list's relationship index.
    func owner(in graph: MirroredGraph) -> (object: any PersistentModel, index: Int) {
        let (owner, index): (any PersistentModel, Int) = switch self {
        case let .staff(department): (graph.departments[department], 0)
        case let .members(project): (graph.projects[project], 0)
        case let .projects(employee): (graph.employees[employee], 3)
        case let .reports(employee): (graph.employees[employee], 1)
        }
        precondition(owner.persistentBackingData.entity.relationships[index].isToMany, "relationship \(index) of \(owner.persistentBackingData.entity.name)")
        return (owner, index)
    }

    /// The members as the list itself holds them, not the array the accessor keeps.
    func memberNames(in graph: MirroredGraph) -> [String] {
        let (owner, index) = owner(in: graph)
        return owner.persistentBackingData.toManyObjects(index).map(MirroredGraph.name)
    }

    /// `change` made through the accessor's `_modify`.
    func changeInPlace(_ graph: MirroredGraph, _ change: ArrayChange) {
        let employees = graph.employees, projects = graph.projects
        switch self {
        case let .staff(department): change.apply(to: &graph.departments[department].staff, employees)
        case let .members(project): change.apply(to: &graph.projects[project].members, employees)
        case let .projects(employee): change.apply(to: &graph.employees[employee].projects, projects)
        case let .reports(employee): change.apply(to: &graph.employees[employee].reports, employees)
        }
    }

    /// `change` made on a copy of the list, which is then set as a whole: through the runtime's
    /// general path (`setToManyObjects`), which looks at every member, not through the accessor,
    /// whose setter takes the in-place paths too when the list it gets allows.
    func changeCopyAndSet(_ graph: MirroredGraph, _ change: ArrayChange) {
        let (owner, index) = owner(in: graph)
        func setWhole<Target: PersistentModel>(_ list: [Target], _ objects: [Target]) {
            var copy = list
            change.apply(to: &copy, objects)
            owner.persistentBackingData.setToManyObjects(index, copy.map { $0 }, target: Target.entity)
        }
        switch self {
        case let .staff(department): setWhole(graph.departments[department].staff, graph.employees)
        case let .members(project): setWhole(graph.projects[project].members, graph.employees)
        case let .projects(employee): setWhole(graph.employees[employee].projects, graph.projects)
        case let .reports(employee): setWhole(graph.employees[employee].reports, graph.employees)
        }
    }
}

/// One mutation of an array, with its arguments drawn: positions within the list, objects by
/// their number in the graph (members or not, some twice).
private enum ArrayChange: CustomStringConvertible {
    case append(Int)
    case appendContents([Int])
    case insert(Int, at: Int)
    case remove(at: Int)
    case removeAll(keepingEvery: Int)
    case replace(at: Int, with: Int)
    /// Two changes in one access: the list given back has more elements, not after the same ones.
    case replaceThenAppend(at: Int, with: Int, then: Int)
    case swapAt(Int, Int)
    case reverse
    /// Two changes in one access: the list given back is shorter, not in the members' order.
    case reverseThenRemoveLast
    case removeLast
    case removeEverything
    case sortByName
    case nothing

    init(random: inout SeededRandom, count: Int, candidates: [Int]) {
        func object() -> Int { candidates.isEmpty ? 0 : candidates[random.below(candidates.count)] }
        let position = count == 0 ? nil : random.below(count)
        switch (random.below(12), position) {
        case (0, _), (1, _), (2, _): self = .append(object())
        case (3, _): self = .appendContents((0..<random.below(4)).map { _ in object() })
        case (4, _): self = .insert(object(), at: random.below(count + 1))
        case (5, let position?): self = .remove(at: position)
        case (6, _): self = .removeAll(keepingEvery: 1 + random.below(3))
        case (7, let position?): self = random.below(2) == 0 ? .replace(at: position, with: object()) : .replaceThenAppend(at: position, with: object(), then: object())
        case (8, let position?): self = .swapAt(position, random.below(count))
        case (9, _): self = random.below(2) == 0 ? .reverse : .reverseThenRemoveLast
        case (10, _) where count > 0: self = random.below(3) == 0 ? .removeEverything : .removeLast
        case (11, _): self = random.below(2) == 0 ? .sortByName : .nothing
        default: self = .append(object())
        }
    }

    var description: String {
        switch self {
        case let .append(object): "append(\(object))"
        case let .appendContents(objects): "append(contentsOf: \(objects))"
        case let .insert(object, position): "insert(\(object), at: \(position))"
        case let .remove(position): "remove(at: \(position))"
        case let .removeAll(every): "removeAll(keeping every \(every))"
        case let .replace(position, object): "[\(position)] = \(object)"
        case let .replaceThenAppend(position, object, appended): "[\(position)] = \(object), append(\(appended))"
        case let .swapAt(one, other): "swapAt(\(one), \(other))"
        case .reverse: "reverse()"
        case .reverseThenRemoveLast: "reverse(), removeLast()"
        case .removeLast: "removeLast()"
        case .removeEverything: "removeAll()"
        case .sortByName: "sort(by name)"
        case .nothing: "append(contentsOf: [])"
        }
    }

    /// Makes the change to `list`, the objects named by their number in `objects`.
    func apply<Target: PersistentModel>(to list: inout [Target], _ objects: [Target]) {
        switch self {
        case let .append(object): list.append(objects[object % objects.count])
        case let .appendContents(numbers): list.append(contentsOf: numbers.map { objects[$0 % objects.count] })
        case let .insert(object, position): list.insert(objects[object % objects.count], at: min(position, list.count))
        case let .remove(position): if position < list.count { list.remove(at: position) }
        case let .removeAll(every):
            var position = 0
            list.removeAll { _ in defer { position += 1 }; return position % every != 0 }
        case let .replace(position, object): if position < list.count { list[position] = objects[object % objects.count] }
        case let .replaceThenAppend(position, object, appended):
            if position < list.count { list[position] = objects[object % objects.count] }
            list.append(objects[appended % objects.count])
        case let .swapAt(one, other): if one < list.count, other < list.count { list.swapAt(one, other) }
        case .reverse: list.reverse()
        case .reverseThenRemoveLast:
            list.reverse()
            if !list.isEmpty { list.removeLast() }
        case .removeLast: if !list.isEmpty { list.removeLast() }
        case .removeEverything: list.removeAll()
        case .sortByName: list.sort { MirroredGraph.name($0) < MirroredGraph.name($1) }
        case .nothing: list.append(contentsOf: [])
        }
    }
}
