import Foundation
import ModelGenCore
@_spi(Backend) import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// Random predicates over Catalog employees, built at run time from Foundation's own
/// `PredicateExpressions` (the types `#Predicate` expands to): comparisons of text, optional
/// integers and values through optional to-one relationships, text tests, membership in captured
/// lists and ranges, sizes of to-many relationships, `contains(where:)` and `allSatisfy` nested
/// over reports and projects (whose tests may read an enclosing employee), text tests through
/// optional chaining (`manager?.name.contains(…)`, `department?.title?.isEmpty`: a `Bool?` taken by
/// `??` or compared with `true`, `false` or nil), to-many relationships of an object a to-one
/// reaches (`manager?.reports.count ?? 0`, `manager?.projects.count == nil`,
/// `department?.staff.contains { … } == true`), a title given in place of a missing one that no
/// PostgreSQL text holds (`(department?.title ?? "d\0") < "d"`), under `&&`, `||` and `!`.
/// Each must select, on both backends, what Foundation's evaluation of the same predicate selects
/// on the app's objects, in the order Foundation's `SortDescriptor`s give (random ones, through
/// to-one relationships too, ties in id order), with a random offset and limit, on random staff
/// (`onRandomStaff`): saved, with unsaved changes, and read by a new context; and, with no unsaved
/// changes, a dry-run `delete(model:where:)` by it must count the objects it selects; and on
/// SQLite the same test written as `modelgen delete --where` text (`EmployeeTest.whereText`) must
/// select the same objects from the store.
extension BothBackendsTests {
    func testRandomPredicatesSelectWhatSwiftSelects() async throws {
        try await onRandomStaff(seeds: UInt64(1)...3) { staff, random in
            try await assertRandomPredicatesAgree(staff.employees, in: staff.context, &random, staff.label)
        }
    }

    private func assertRandomPredicatesAgree(_ employees: [Employee], in context: some SeedFlowContext, _ random: inout SeededRandom, _ label: String) async throws {
        let sorts: [(String, SortDescriptor<Employee>)] = [
            ("name", SortDescriptor(\.name)), ("name reversed", SortDescriptor(\.name, order: .reverse)),
            ("level", SortDescriptor(\.level)), ("level reversed", SortDescriptor(\.level, order: .reverse)),
            ("manager?.name", SortDescriptor(\.manager?.name)), ("manager?.level reversed", SortDescriptor(\.manager?.level, order: .reverse)),
            ("department?.title", SortDescriptor(\.department?.title)), ("department?.title reversed", SortDescriptor(\.department?.title, order: .reverse)),
        ]
        for _ in 0..<40 {
            let test = EmployeeTest.random(&random, depth: 0, outer: 0)
            let predicate = Predicate<Employee> { test.expression($0, outer: []) }
            let order = (0..<Int.random(in: 0...3, using: &random)).map { _ in sorts.randomElement(using: &random)! }
            var descriptor = FetchDescriptor(predicate: predicate, sortBy: order.map(\.1))
            // Swift's order: by each descriptor in turn, then as the objects were inserted (their ids' order).
            let matching = try employees.enumerated().filter { try predicate.evaluate($0.element) }.sorted { a, b in
                for (_, sort) in order {
                    switch sort.compare(a.element, b.element) {
                    case .orderedAscending: return true
                    case .orderedDescending: return false
                    case .orderedSame: continue
                    }
                }
                return a.offset < b.offset
            }.map(\.element.name)
            var expected = matching
            if Bool.random(using: &random) {
                let (offset, limit) = (Int.random(in: 0...3, using: &random), Int.random(in: 0...5, using: &random))
                (descriptor.fetchOffset, descriptor.fetchLimit) = (offset, limit)
                expected = Array(matching.dropFirst(offset).prefix(limit))
            }
            let label = "\(label): \(test), sorted by \(order.map(\.0)), offset \(descriptor.fetchOffset.map(String.init) ?? "none"), limit \(descriptor.fetchLimit.map(String.init) ?? "none")"
            try await assertEqual(await context.fetch(descriptor).map(\.name), expected, label)
            try await assertEqual(await context.fetchCount(descriptor), expected.count, "\(label), count")
            try await assertEqual(await context.fetchCount(FetchDescriptor(predicate: predicate)), matching.count, "\(label), count of all")
            if !context.hasChanges {
                // A delete selects its objects by the same condition (a dry run: nothing changes).
                let preview = try await context.delete(model: Employee.self, where: predicate, dryRun: true)
                XCTAssertEqual(preview.deletedCount(of: "Employee"), matching.count, "\(label), dry-run delete")
                if let sqlite = context as? ModelContext, let text = test.whereText {
                    let ids = try employees.filter { try predicate.evaluate($0) }.compactMap(\.persistentModelID.id).sorted()
                    try assertWhereSelects(text, ids, in: sqlite, label)
                }
            }
            if testRun?.failureCount ?? 0 > 0 { return }
        }
    }
}

/// `text`, as `modelgen delete --where` reads it, selects the employees `ids` from the store of `context`.
private func assertWhereSelects(_ text: String, _ ids: [Int64], in context: ModelContext, _ label: String) throws {
    let schema = try XCTUnwrap(CatalogSchema.resolved)
    let entity = try XCTUnwrap(schema.entity(named: "Employee"))
    let condition: QueryCondition
    switch WhereClauseTranslator.translate(text, entity: entity, schema: schema) {
    case let .success(translated): condition = translated
    case let .failure(failure): return XCTFail("\(label): --where '\(text)' does not translate: \(failure)")
    }
    var renderer = PredicateSQLRenderer(dialect: .sqlite, table: entity.tableName)
    let sql = "SELECT id FROM \(entity.tableName) WHERE \(renderer.condition(condition)) ORDER BY id"
    let database = try SQLiteDatabase(path: try XCTUnwrap(context.container.configuration.url).path)
    let selected = try database.query(sql, renderer.bindings).compactMap { $0[0].integer }
    XCTAssertEqual(selected, ids, "\(label): --where '\(text)' selects other employees than its #Predicate")
}

typealias BoolExpression = any StandardPredicateExpression<Bool>
typealias OptionalBoolExpression = any StandardPredicateExpression<Bool?>

/// A test of a text: what optional chaining applies to a text that may be missing.
enum TextTest: CustomStringConvertible {
    case contains(String), startsWith(String), isEmpty

    static func random(_ random: inout SeededRandom) -> TextTest {
        let parts = ["", "d", "e1", "0", "%", "_", "\\", "d%_", "É"]
        switch Int.random(in: 0..<3, using: &random) {
        case 0: return .contains(parts.randomElement(using: &random)!)
        case 1: return .startsWith(parts.randomElement(using: &random)!)
        default: return .isEmpty
        }
    }

    func expression<Text: StandardPredicateExpression<String>>(_ text: Text) -> BoolExpression {
        switch self {
        case let .contains(part): PredicateExpressions.build_contains(text, PredicateExpressions.build_Arg(part))
        case let .startsWith(prefix): PredicateExpressions.build_starts(text, with: PredicateExpressions.build_Arg(prefix))
        case .isEmpty: PredicateExpressions.build_KeyPath(root: text, keyPath: \.isEmpty)
        }
    }

    /// The test of the text at `keyPath` in `--where`'s language.
    func whereText(_ keyPath: String) -> String {
        switch self {
        case let .contains(part): "\(keyPath).contains(\(part.debugDescription))"
        case let .startsWith(prefix): "\(keyPath).hasPrefix(\(prefix.debugDescription))"
        case .isEmpty: "\(keyPath) == \"\""
        }
    }

    var description: String {
        switch self {
        case let .contains(part): "contains(\(part.debugDescription))"
        case let .startsWith(prefix): "starts(with: \(prefix.debugDescription))"
        case .isEmpty: "isEmpty"
        }
    }
}

/// How a `Bool?` becomes a test: `?? fallback`, `== value`, `!= value`.
enum OptionalBoolUse: CustomStringConvertible {
    case coalesce(Bool), equal(Bool?), notEqual(Bool?)

    static func random(_ random: inout SeededRandom) -> OptionalBoolUse {
        let value = [true, false, nil].randomElement(using: &random)!
        switch Int.random(in: 0..<3, using: &random) {
        case 0: return .coalesce(value ?? false)
        case 1: return .equal(value)
        default: return .notEqual(value)
        }
    }

    func expression(_ optional: OptionalBoolExpression) -> BoolExpression {
        func build<Optional: StandardPredicateExpression<Bool?>>(_ optional: Optional) -> BoolExpression {
            switch self {
            case let .coalesce(fallback): PredicateExpressions.build_NilCoalesce(lhs: optional, rhs: PredicateExpressions.build_Arg(fallback))
            case let .equal(value): PredicateExpressions.build_Equal(lhs: optional, rhs: PredicateExpressions.build_Arg(value))
            case let .notEqual(value): PredicateExpressions.build_NotEqual(lhs: optional, rhs: PredicateExpressions.build_Arg(value))
            }
        }
        return build(optional)
    }

    /// The use of a `Bool?` that is nil where `exists` is false and `test` where it is true, in
    /// `--where`'s language (which has no `??`: the nil case is written out).
    func whereText(exists: String, test: String) -> String {
        switch self {
        case .coalesce(true), .notEqual(false?): "(!(\(exists)) || \(test))"
        case .coalesce(false), .equal(true?): "(\(exists) && \(test))"
        case .equal(false?): "(\(exists) && !(\(test)))"
        case .notEqual(true?): "(!(\(exists)) || !(\(test)))"
        case .equal(nil): "!(\(exists))"
        case .notEqual(nil): exists
        }
    }

    var description: String {
        switch self {
        case let .coalesce(fallback): "?? \(fallback)"
        case let .equal(value): "== \(value.map(String.init) ?? "nil")"
        case let .notEqual(value): "!= \(value.map(String.init) ?? "nil")"
        }
    }
}

/// A random test of an employee, as a tree, so the same expression can be built again for each
/// variable it is given (a `contains(where:)` builds its test inside a closure).
indirect enum EmployeeTest: CustomStringConvertible {
    case and(EmployeeTest, EmployeeTest), or(EmployeeTest, EmployeeTest), not(EmployeeTest)
    case nameEquals(String), nameBefore(String), nameContains(String), nameStartsWith(String), nameIn([String])
    case levelEquals(Int?), levelAtLeast(Int), levelIn(ClosedRange<Int>)
    /// `level == the level of the n-th enclosing employee` (0: the outermost).
    case levelEqualsOuter(Int)
    case managerNameEquals(String?), departmentTitleEquals(String?)
    /// `(department?.title ?? fallback) < text`, or `== text` (`equal`): fallbacks no PostgreSQL text holds among them.
    case departmentTitleOrElse(fallback: String, equal: Bool, String)
    /// `manager?.name.<test> <use>` and `department?.title?.<test> <use>`.
    case managerName(TextTest, OptionalBoolUse), departmentTitle(TextTest, OptionalBoolUse)
    /// `(manager?.reports.count ?? fallback) > count`, `manager?.projects.count == count`.
    case managerReportsMoreThan(Int, fallback: Int), managerProjectsCountEquals(Int?)
    /// `manager?.reports.contains { … } <use>`, `department?.staff.allSatisfy { … } <use>`.
    case managerReports(all: Bool, EmployeeTest, OptionalBoolUse), departmentStaff(all: Bool, EmployeeTest, OptionalBoolUse)
    case reportsMoreThan(Int), reportsEmpty
    case reports(all: Bool, EmployeeTest)
    case projects(all: Bool, ProjectTest)

    static func random(_ random: inout SeededRandom, depth: Int, outer: Int) -> EmployeeTest {
        // Names near the staff's (`e0`, `e_5`, `É1`, `e\6`, `e99`: equal to one; `e1`, `e10`, `É6`:
        // beside them), and what LIKE treats specially.
        let names = ["e1", "e10", "e5", "", "e99", "f", "e_1", "e%", "E", "É6", "e\\", "e0", "e_5", "É1", "e\\6"]
        if depth < 3, Int.random(in: 0..<(depth + 2), using: &random) == 0 {
            switch Int.random(in: 0..<8, using: &random) {
            case 0: return .and(Self.random(&random, depth: depth + 1, outer: outer), Self.random(&random, depth: depth + 1, outer: outer))
            case 1: return .or(Self.random(&random, depth: depth + 1, outer: outer), Self.random(&random, depth: depth + 1, outer: outer))
            case 2: return .not(Self.random(&random, depth: depth + 1, outer: outer))
            case 3, 4: return .reports(all: Bool.random(using: &random), Self.random(&random, depth: depth + 1, outer: outer + 1))
            case 5: return .managerReports(all: Bool.random(using: &random), Self.random(&random, depth: depth + 1, outer: outer + 1), .random(&random))
            case 6: return .departmentStaff(all: Bool.random(using: &random), Self.random(&random, depth: depth + 1, outer: outer + 1), .random(&random))
            default: return .projects(all: Bool.random(using: &random), ProjectTest.random(&random, depth: depth + 1, outer: outer + 1))
            }
        }
        let level: Int? = Int.random(in: 0..<4, using: &random) == 0 ? nil : Int.random(in: 0...3, using: &random)
        let low = Int.random(in: 0...3, using: &random)
        switch Int.random(in: 0..<(outer > 0 ? 19 : 18), using: &random) {
        case 0: return .nameEquals(names.randomElement(using: &random)!)
        case 1: return .nameBefore(names.randomElement(using: &random)!)
        case 2: return .nameContains(["1", "", "e", "9", "_", "%", "\\", "É"].randomElement(using: &random)!)
        case 3: return .nameStartsWith(names.randomElement(using: &random)!)
        case 4: return .nameIn((0..<Int.random(in: 0...3, using: &random)).map { _ in names.randomElement(using: &random)! })
        case 5: return .levelEquals(level)
        case 6: return .levelAtLeast(Int.random(in: -2...3, using: &random))
        case 7: return .levelIn(low...Int.random(in: low...3, using: &random))
        case 8: return .managerNameEquals(Bool.random(using: &random) ? nil : names.randomElement(using: &random)!)
        case 9: return .departmentTitleEquals([nil, "d0", "", "d%_\\0"].randomElement(using: &random)!)
        case 10: return .reportsMoreThan(Int.random(in: 0...2, using: &random))
        case 11: return .reportsEmpty
        case 12: return .not(.levelEquals(level))
        case 13: return .managerName(.random(&random), .random(&random))
        case 14: return .departmentTitle(.random(&random), .random(&random))
        case 15: return .managerReportsMoreThan(Int.random(in: 0...2, using: &random), fallback: Int.random(in: -1...1, using: &random))
        case 16: return .managerProjectsCountEquals(Int.random(in: 0..<4, using: &random) == 0 ? nil : Int.random(in: 0...2, using: &random))
        case 17: return .departmentTitleOrElse(fallback: ["", "d0", "d\0", "\0", "é\0"].randomElement(using: &random)!, equal: Bool.random(using: &random),
                                               ["d0", "", "d", "d\0", "\0", "e"].randomElement(using: &random)!)
        default: return .levelEqualsOuter(Int.random(in: 0..<outer, using: &random))
        }
    }

    /// The test of the employee `employee`, inside tests of the employees `outer` (outermost first).
    func expression(_ employee: PredicateExpressions.Variable<Employee>, outer: [PredicateExpressions.Variable<Employee>]) -> BoolExpression {
        let name = PredicateExpressions.build_KeyPath(root: employee, keyPath: \.name)
        let level = PredicateExpressions.build_KeyPath(root: employee, keyPath: \.level)
        let levelOrZero = PredicateExpressions.build_NilCoalesce(lhs: level, rhs: PredicateExpressions.build_Arg(0))
        let reports = PredicateExpressions.build_KeyPath(root: employee, keyPath: \.reports)
        let departmentTitle = PredicateExpressions.build_flatMap(PredicateExpressions.build_KeyPath(root: employee, keyPath: \.department)) {
            PredicateExpressions.build_KeyPath(root: $0, keyPath: \.title)
        }
        switch self {
        case let .and(lhs, rhs): return conjunction(lhs.expression(employee, outer: outer), rhs.expression(employee, outer: outer))
        case let .or(lhs, rhs): return disjunction(lhs.expression(employee, outer: outer), rhs.expression(employee, outer: outer))
        case let .not(test): return negation(test.expression(employee, outer: outer))
        case let .nameEquals(text): return PredicateExpressions.build_Equal(lhs: name, rhs: PredicateExpressions.build_Arg(text))
        case let .nameBefore(text): return PredicateExpressions.build_Comparison(lhs: name, rhs: PredicateExpressions.build_Arg(text), op: .lessThan)
        case let .nameContains(text): return PredicateExpressions.build_contains(name, PredicateExpressions.build_Arg(text))
        case let .nameStartsWith(text): return PredicateExpressions.build_starts(name, with: PredicateExpressions.build_Arg(text))
        case let .nameIn(texts): return PredicateExpressions.build_contains(PredicateExpressions.build_Arg(texts), name)
        case let .levelEquals(value): return PredicateExpressions.build_Equal(lhs: level, rhs: PredicateExpressions.build_Arg(value))
        case let .levelAtLeast(value) where value < 0:
            // `-2` in a `#Predicate` is the negation of 2.
            return PredicateExpressions.build_Comparison(lhs: levelOrZero, rhs: PredicateExpressions.build_UnaryMinus(PredicateExpressions.build_Arg(-value)), op: .greaterThanOrEqual)
        case let .levelAtLeast(value): return PredicateExpressions.build_Comparison(lhs: levelOrZero, rhs: PredicateExpressions.build_Arg(value), op: .greaterThanOrEqual)
        case let .levelIn(range): return PredicateExpressions.build_contains(PredicateExpressions.build_Arg(range), levelOrZero)
        case let .levelEqualsOuter(index):
            return PredicateExpressions.build_Equal(lhs: level, rhs: PredicateExpressions.build_KeyPath(root: outer[index], keyPath: \.level))
        case let .managerNameEquals(text):
            let managerName = PredicateExpressions.build_flatMap(PredicateExpressions.build_KeyPath(root: employee, keyPath: \.manager)) {
                PredicateExpressions.build_KeyPath(root: $0, keyPath: \.name)
            }
            return PredicateExpressions.build_Equal(lhs: managerName, rhs: PredicateExpressions.build_Arg(text))
        case let .departmentTitleEquals(text):
            return PredicateExpressions.build_Equal(lhs: departmentTitle, rhs: PredicateExpressions.build_Arg(text))
        case let .departmentTitleOrElse(fallback, equal, text):
            let title = PredicateExpressions.build_NilCoalesce(lhs: departmentTitle, rhs: PredicateExpressions.build_Arg(fallback))
            if equal { return PredicateExpressions.build_Equal(lhs: title, rhs: PredicateExpressions.build_Arg(text)) }
            return PredicateExpressions.build_Comparison(lhs: title, rhs: PredicateExpressions.build_Arg(text), op: .lessThan)
        case let .reportsMoreThan(count):
            let size = PredicateExpressions.build_KeyPath(root: reports, keyPath: \.count)
            return PredicateExpressions.build_Comparison(lhs: size, rhs: PredicateExpressions.build_Arg(count), op: .greaterThan)
        case .reportsEmpty:
            return PredicateExpressions.build_KeyPath(root: reports, keyPath: \.isEmpty)
        case let .managerName(test, use):
            return use.expression(chained(PredicateExpressions.build_KeyPath(root: employee, keyPath: \.manager)) { (manager: PredicateExpressions.Variable<Employee>) in
                test.expression(PredicateExpressions.build_KeyPath(root: manager, keyPath: \.name))
            })
        case let .departmentTitle(test, use):
            return use.expression(chained(PredicateExpressions.build_KeyPath(root: employee, keyPath: \.department)) { (department: PredicateExpressions.Variable<Department>) in
                chained(PredicateExpressions.build_KeyPath(root: department, keyPath: \.title)) { (title: PredicateExpressions.Variable<String>) in test.expression(title) }
            })
        case let .managerReportsMoreThan(count, fallback):
            let size = PredicateExpressions.build_flatMap(PredicateExpressions.build_KeyPath(root: employee, keyPath: \.manager)) {
                PredicateExpressions.build_KeyPath(root: PredicateExpressions.build_KeyPath(root: $0, keyPath: \.reports), keyPath: \.count)
            }
            return PredicateExpressions.build_Comparison(lhs: PredicateExpressions.build_NilCoalesce(lhs: size, rhs: PredicateExpressions.build_Arg(fallback)),
                                                         rhs: PredicateExpressions.build_Arg(count), op: .greaterThan)
        case let .managerProjectsCountEquals(count):
            let size = PredicateExpressions.build_flatMap(PredicateExpressions.build_KeyPath(root: employee, keyPath: \.manager)) {
                PredicateExpressions.build_KeyPath(root: PredicateExpressions.build_KeyPath(root: $0, keyPath: \.projects), keyPath: \.count)
            }
            return PredicateExpressions.build_Equal(lhs: size, rhs: PredicateExpressions.build_Arg(count))
        case let .managerReports(all, test, use):
            return use.expression(chained(PredicateExpressions.build_KeyPath(root: employee, keyPath: \.manager)) { (manager: PredicateExpressions.Variable<Employee>) in
                objectsTest(PredicateExpressions.build_KeyPath(root: manager, keyPath: \.reports), all: all) { test.expression($0, outer: outer + [employee]) }
            })
        case let .departmentStaff(all, test, use):
            return use.expression(chained(PredicateExpressions.build_KeyPath(root: employee, keyPath: \.department)) { (department: PredicateExpressions.Variable<Department>) in
                objectsTest(PredicateExpressions.build_KeyPath(root: department, keyPath: \.staff), all: all) { test.expression($0, outer: outer + [employee]) }
            })
        case let .reports(all, test):
            return objectsTest(reports, all: all) { test.expression($0, outer: outer + [employee]) }
        case let .projects(all, test):
            return objectsTest(PredicateExpressions.build_KeyPath(root: employee, keyPath: \.projects), all: all) { test.expression($0, outer: outer + [employee]) }
        }
    }

    /// The test in `modelgen delete --where`'s language, key paths read from the employee tested
    /// (inside braces, the innermost object); nil where it has no form there (a comparison with an
    /// enclosing employee's level).
    var whereText: String? {
        func both(_ lhs: EmployeeTest, _ rhs: EmployeeTest, _ op: String) -> String? {
            guard let lhs = lhs.whereText, let rhs = rhs.whereText else { return nil }
            return "(\(lhs) \(op) \(rhs))"
        }
        /// `level ?? 0` in `range`: `--where` has no `??`, so a missing level is written out.
        func levelOrZero(in range: ClosedRange<Int>) -> String {
            let present = "(level >= \(range.lowerBound) && level <= \(range.upperBound))"
            return range.contains(0) ? "(level == nil || \(present))" : present
        }
        func objects(_ keyPath: String, all: Bool, _ test: String?) -> String? {
            test.map { "\(keyPath).\(all ? "allSatisfy" : "contains") { \($0) }" }
        }
        switch self {
        case let .and(lhs, rhs): return both(lhs, rhs, "&&")
        case let .or(lhs, rhs): return both(lhs, rhs, "||")
        case let .not(test): return test.whereText.map { "!(\($0))" }
        case let .nameEquals(text): return "name == \(text.debugDescription)"
        case let .nameBefore(text): return "name < \(text.debugDescription)"
        case let .nameContains(text): return "name.contains(\(text.debugDescription))"
        case let .nameStartsWith(text): return "name.hasPrefix(\(text.debugDescription))"
        case let .nameIn(texts) where texts.isEmpty: return "(name == \"\" && name != \"\")"
        case let .nameIn(texts): return "[\(texts.map(\.debugDescription).joined(separator: ", "))].contains(name)"
        case let .levelEquals(value): return "level == \(value.map(String.init) ?? "nil")"
        case let .levelAtLeast(value): return levelOrZero(in: value...Int.max)
        case let .levelIn(range): return levelOrZero(in: range)
        case .levelEqualsOuter, .departmentTitleOrElse: return nil
        case let .managerNameEquals(text): return "manager.name == \(text?.debugDescription ?? "nil")"
        case let .departmentTitleEquals(text): return "$0.department?.title == \(text?.debugDescription ?? "nil")"
        case let .reportsMoreThan(count): return "reports.count > \(count)"
        case .reportsEmpty: return "reports.isEmpty"
        case let .managerName(test, use): return use.whereText(exists: "manager != nil", test: test.whereText("manager.name"))
        case let .departmentTitle(test, use): return use.whereText(exists: "department.title != nil", test: test.whereText("$0.department?.title"))
        case let .managerReportsMoreThan(count, fallback):
            // `manager.reports.count` is false where there is no manager (documented), whatever the count.
            let present = "manager.reports.count > \(count)"
            return fallback > count ? "(manager == nil || \(present))" : present
        case let .managerProjectsCountEquals(count): return count.map { "manager.projects.count == \($0)" } ?? "manager == nil"
        case let .managerReports(all, test, use):
            return objects("manager.reports", all: all, test.whereText).map { use.whereText(exists: "manager != nil", test: $0) }
        case let .departmentStaff(all, test, use):
            return objects("department.staff", all: all, test.whereText).map { use.whereText(exists: "department != nil", test: $0) }
        case let .reports(all, test): return objects("reports", all: all, test.whereText)
        case let .projects(all, test): return objects("projects", all: all, test.whereText)
        }
    }

    var description: String {
        switch self {
        case let .and(lhs, rhs): "(\(lhs) && \(rhs))"
        case let .or(lhs, rhs): "(\(lhs) || \(rhs))"
        case let .not(test): "!\(test)"
        case let .nameEquals(text): "name == \(text.debugDescription)"
        case let .nameBefore(text): "name < \(text.debugDescription)"
        case let .nameContains(text): "name.contains(\(text.debugDescription))"
        case let .nameStartsWith(text): "name.starts(with: \(text.debugDescription))"
        case let .nameIn(texts): "\(texts).contains(name)"
        case let .levelEquals(value): "level == \(value.map(String.init) ?? "nil")"
        case let .levelAtLeast(value): "(level ?? 0) >= \(value)"
        case let .levelIn(range): "(\(range)).contains(level ?? 0)"
        case let .levelEqualsOuter(index): "level == outer[\(index)].level"
        case let .managerNameEquals(text): "manager?.name == \(text?.debugDescription ?? "nil")"
        case let .departmentTitleEquals(text): "department?.title == \(text?.debugDescription ?? "nil")"
        case let .departmentTitleOrElse(fallback, equal, text): "(department?.title ?? \(fallback.debugDescription)) \(equal ? "==" : "<") \(text.debugDescription)"
        case let .reportsMoreThan(count): "reports.count > \(count)"
        case .reportsEmpty: "reports.isEmpty"
        case let .managerName(test, use): "manager?.name.\(test) \(use)"
        case let .departmentTitle(test, use): "department?.title?.\(test) \(use)"
        case let .managerReportsMoreThan(count, fallback): "(manager?.reports.count ?? \(fallback)) > \(count)"
        case let .managerProjectsCountEquals(count): "manager?.projects.count == \(count.map(String.init) ?? "nil")"
        case let .managerReports(all, test, use): "manager?.reports.\(all ? "allSatisfy" : "contains") { \(test) } \(use)"
        case let .departmentStaff(all, test, use): "department?.staff.\(all ? "allSatisfy" : "contains") { \(test) } \(use)"
        case let .reports(all, test): "reports.\(all ? "allSatisfy" : "contains") { \(test) }"
        case let .projects(all, test): "projects.\(all ? "allSatisfy" : "contains") { \(test) }"
        }
    }
}

/// A random test of a project, inside tests of employees.
indirect enum ProjectTest: CustomStringConvertible {
    case and(ProjectTest, ProjectTest), not(ProjectTest)
    case codeEquals(String), membersMoreThan(Int)
    case members(all: Bool, EmployeeTest)

    static func random(_ random: inout SeededRandom, depth: Int, outer: Int) -> ProjectTest {
        switch Int.random(in: 0..<(depth < 3 ? 6 : 3), using: &random) {
        case 0, 1: return .codeEquals(["p0", "p1", "p9"].randomElement(using: &random)!)
        case 2: return .membersMoreThan(Int.random(in: 1...4, using: &random))
        case 3: return .and(Self.random(&random, depth: depth + 1, outer: outer), Self.random(&random, depth: depth + 1, outer: outer))
        case 4: return .not(Self.random(&random, depth: depth + 1, outer: outer))
        default: return .members(all: Bool.random(using: &random), EmployeeTest.random(&random, depth: depth + 1, outer: outer))
        }
    }

    func expression(_ project: PredicateExpressions.Variable<Project>, outer: [PredicateExpressions.Variable<Employee>]) -> BoolExpression {
        let members = PredicateExpressions.build_KeyPath(root: project, keyPath: \.members)
        switch self {
        case let .and(lhs, rhs): return conjunction(lhs.expression(project, outer: outer), rhs.expression(project, outer: outer))
        case let .not(test): return negation(test.expression(project, outer: outer))
        case let .codeEquals(code):
            return PredicateExpressions.build_Equal(lhs: PredicateExpressions.build_KeyPath(root: project, keyPath: \.code), rhs: PredicateExpressions.build_Arg(code))
        case let .membersMoreThan(count):
            let size = PredicateExpressions.build_KeyPath(root: members, keyPath: \.count)
            return PredicateExpressions.build_Comparison(lhs: size, rhs: PredicateExpressions.build_Arg(count), op: .greaterThan)
        case let .members(all, test):
            return objectsTest(members, all: all) { test.expression($0, outer: outer) }
        }
    }

    /// The test in `modelgen delete --where`'s language (see `EmployeeTest.whereText`).
    var whereText: String? {
        switch self {
        case let .and(lhs, rhs):
            guard let lhs = lhs.whereText, let rhs = rhs.whereText else { return nil }
            return "(\(lhs) && \(rhs))"
        case let .not(test): return test.whereText.map { "!(\($0))" }
        case let .codeEquals(code): return "code == \(code.debugDescription)"
        case let .membersMoreThan(count): return "members.count > \(count)"
        case let .members(all, test): return test.whereText.map { "members.\(all ? "allSatisfy" : "contains") { \($0) }" }
        }
    }

    var description: String {
        switch self {
        case let .and(lhs, rhs): "(\(lhs) && \(rhs))"
        case let .not(test): "!\(test)"
        case let .codeEquals(code): "code == \(code.debugDescription)"
        case let .membersMoreThan(count): "members.count > \(count)"
        case let .members(all, test): "members.\(all ? "allSatisfy" : "contains") { \(test) }"
        }
    }
}

private func conjunction(_ lhs: BoolExpression, _ rhs: BoolExpression) -> BoolExpression {
    func build<L: StandardPredicateExpression<Bool>, R: StandardPredicateExpression<Bool>>(_ lhs: L, _ rhs: R) -> BoolExpression {
        PredicateExpressions.build_Conjunction(lhs: lhs, rhs: rhs)
    }
    return build(lhs, rhs)
}

private func disjunction(_ lhs: BoolExpression, _ rhs: BoolExpression) -> BoolExpression {
    func build<L: StandardPredicateExpression<Bool>, R: StandardPredicateExpression<Bool>>(_ lhs: L, _ rhs: R) -> BoolExpression {
        PredicateExpressions.build_Disjunction(lhs: lhs, rhs: rhs)
    }
    return build(lhs, rhs)
}

private func negation(_ test: BoolExpression) -> BoolExpression {
    func build<T: StandardPredicateExpression<Bool>>(_ test: T) -> BoolExpression { PredicateExpressions.build_Negation(test) }
    return build(test)
}

/// `wrapped?.…`: `test` of the value where there is one (a `Bool`), nil where there is none.
private func chained<Wrapped: StandardPredicateExpression, Value>(
    _ wrapped: Wrapped, _ test: @escaping (PredicateExpressions.Variable<Value>) -> BoolExpression
) -> OptionalBoolExpression where Wrapped.Output == Value? {
    func build<Test: StandardPredicateExpression<Bool>>(_: Test) -> OptionalBoolExpression {
        PredicateExpressions.build_flatMap(wrapped) { test($0) as! Test }
    }
    return build(test(PredicateExpressions.Variable()))
}

/// `wrapped?.…` where the test of the value is itself a `Bool?` (a chain in a chain).
private func chained<Wrapped: StandardPredicateExpression, Value>(
    _ wrapped: Wrapped, _ test: @escaping (PredicateExpressions.Variable<Value>) -> OptionalBoolExpression
) -> OptionalBoolExpression where Wrapped.Output == Value? {
    func build<Test: StandardPredicateExpression<Bool?>>(_: Test) -> OptionalBoolExpression {
        PredicateExpressions.build_flatMap(wrapped) { test($0) as! Test }
    }
    return build(test(PredicateExpressions.Variable()))
}

/// `objects.contains { test }` or `objects.allSatisfy { test }`. The closure's expression type must
/// be known before the closure runs: the test is built once for a variable of its own to learn it,
/// then again for the variable the closure is given (the same tree gives the same type).
private func objectsTest<Objects: StandardPredicateExpression, Object>(
    _ objects: Objects, all: Bool, _ test: @escaping (PredicateExpressions.Variable<Object>) -> BoolExpression
) -> BoolExpression where Objects.Output == [Object] {
    func build<Test: StandardPredicateExpression<Bool>>(_: Test) -> BoolExpression {
        all ? PredicateExpressions.build_allSatisfy(objects) { test($0) as! Test } : PredicateExpressions.build_contains(objects) { test($0) as! Test }
    }
    return build(test(PredicateExpressions.Variable()))
}
