import Foundation
@_spi(Backend) import ModelGenRuntime
import ModelGenTestSupport
import XCTest

extension BothBackendsTests {
    /// A fetch whose predicate requires an attribute to equal a value looks only at the unsaved
    /// objects holding that value (`PendingChanges.candidates`, an index kept in step with every
    /// change). On both backends, random work on employees — inserts, names and levels changed
    /// again and again, objects deleted before and after their save, saves and rollbacks — is
    /// followed after each step by lookups by name and by level, with and without a limit of 1,
    /// which must find exactly the objects that hold the value now (an oracle kept beside).
    func testLookupsByValueAmidUnsavedChangesFindWhatTheObjectsHoldNow() async throws {
        let names = ["ann", "bob", "cy", "dee"], levels: [Int?] = [nil, 1, 2]
        try await onBothBackends(Catalog.self, seeds: 1...12) { seed, backend in
            var random = SeededRandom(seed: seed)
            let context = backend.makeContext()
            /// The objects the context holds as the app sees them (alive: inserted or saved, not deleted).
            final class Tracked {
                let employee: Employee
                var alive = true
                /// As last saved; nil while never saved.
                var saved: (name: String, level: Int?, alive: Bool)?
                init(_ employee: Employee) { self.employee = employee }
            }
            var tracked: [Tracked] = []
            for step in 0..<50 {
                let living = tracked.filter(\.alive)
                let label = "\(backend.name), seed \(seed), step \(step)"
                switch random.below(12) {
                case 0..<3:
                    let employee = Employee(name: names[random.below(names.count)])
                    employee.level = levels[random.below(levels.count)]
                    context.insert(employee)
                    tracked.append(Tracked(employee))
                case 3..<6 where !living.isEmpty:
                    living[random.below(living.count)].employee.name = names[random.below(names.count)]
                case 6..<8 where !living.isEmpty:
                    living[random.below(living.count)].employee.level = levels[random.below(levels.count)]
                case 8 where !living.isEmpty:
                    let doomed = living[random.below(living.count)]
                    context.delete(doomed.employee)
                    doomed.alive = false
                case 9, 10:
                    try await context.save()
                    for object in tracked where object.alive || object.saved != nil {
                        object.saved = (object.employee.name, object.employee.level, object.alive)
                    }
                    tracked.removeAll { !$0.alive }
                default:
                    context.rollback()
                    tracked.removeAll { $0.saved == nil }
                    for object in tracked {
                        XCTAssertEqual(object.employee.name, object.saved?.name, "\(label): the rollback restores the name")
                        object.alive = object.saved?.alive ?? false
                    }
                    tracked.removeAll { !$0.alive }
                }
                let name = names[random.below(names.count)], level = levels[random.below(levels.count)]
                let limit = random.below(2) == 0 ? nil : 1
                let byName = Set(tracked.filter { $0.alive && $0.employee.name == name }.map { ObjectIdentifier($0.employee) })
                let byLevel = Set(tracked.filter { $0.alive && $0.employee.level == level }.map { ObjectIdentifier($0.employee) })
                for (predicate, expected, what) in [(#Predicate<Employee> { $0.name == name }, byName, "name \(name)"),
                                                    (#Predicate<Employee> { $0.level == level }, byLevel, "level \(String(describing: level))")] {
                    var descriptor = FetchDescriptor<Employee>(predicate: predicate)
                    descriptor.fetchLimit = limit
                    let found = Set(try await context.fetch(descriptor).map(ObjectIdentifier.init))
                    if limit == nil {
                        XCTAssertEqual(found, expected, "\(label): the objects with \(what)")
                    } else {
                        XCTAssertEqual(found.count, min(1, expected.count), "\(label): how many with \(what), limit 1")
                        XCTAssertTrue(found.isSubset(of: expected), "\(label): an object without \(what), limit 1")
                    }
                    try await assertEqual(await context.fetchCount(FetchDescriptor<Employee>(predicate: predicate)), expected.count, "\(label): the count with \(what)")
                }
                if testRun?.failureCount ?? 0 > 0 { return }
            }
            context.rollback()
        }
    }
}
