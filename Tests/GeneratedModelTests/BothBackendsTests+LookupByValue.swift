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

    /// Find-or-create by a value of any kind. A fetch whose predicate requires an attribute to
    /// equal a value looks only at the unsaved objects holding it when the value's kind compares
    /// as stored (integers, booleans, texts, UUIDs, bytes: `PendingValueIndex.indexes`), and on
    /// SQLite decides a lone such equality without the store. On both backends, random work on
    /// samples whose attributes take values from small pools (canonically equivalent texts, UUIDs
    /// that differ in one digit, empty and zero bytes, `0.0` and `-0.0`, `1` and `1.0` as
    /// `Decimal`s) is followed after each step by a lookup, alone or under `&&` after a term no
    /// index serves, which must select and count what the same test written so that no index
    /// applies (`a || a`) selects, with and without a limit of 1; and before each save, what it
    /// selects must be what a new context reads from the store once the save is done.
    func testLookupsOfEveryKindOfValueAmidUnsavedChangesSelectWhatTheStoreWill() async throws {
        let texts = ["a", "\u{E9}", "e\u{301}", "", "K", "\u{212A}"], ints = [0, 1, -1], flags = [false, true]
        let uuids = ["00000000-0000-0000-0000-000000000001", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "E621E1F8-C36C-495A-93FC-0C247A3E6E50"].map { UUID(uuidString: $0)! }
        let bytes = [Data(), Data([0]), Data([0, 0]), Data([1])]
        let doubles = [0.0, -0.0, 1.5], amounts = [Decimal(1), Decimal(string: "1.0")!, Decimal(string: "0.5")!]
        let tiers = [Tier.basic, .gold], links = [URL(string: "https://a.example")!, URL(string: "https://a.example/")!]
        func pick<Value>(_ values: [Value], _ random: inout SeededRandom) -> Value { values[random.below(values.count)] }
        /// Sets attribute `which` (0 to 8) of `sample` to a value from its pool.
        func set(_ which: Int, of sample: Sample, _ random: inout SeededRandom) {
            switch which {
            case 0: sample.text = pick(texts, &random)
            case 1: sample.int = pick(ints, &random)
            case 2: sample.uuid = pick(uuids, &random)
            case 3: sample.bytes = pick(bytes, &random)
            case 4: sample.flag = pick(flags, &random)
            case 5: sample.tier = pick(tiers, &random)
            case 6: sample.link = pick(links, &random)
            case 7: sample.double = pick(doubles, &random)
            default: sample.amount = pick(amounts, &random)
            }
        }
        /// A lookup, by attribute `which` (as `set` numbers them) or, for 9 and 10, by several: its
        /// name, its predicate, and the same test that no index serves.
        func lookup(_ which: Int, _ random: inout SeededRandom) -> (String, Predicate<Sample>, Predicate<Sample>) {
            let text = pick(texts, &random), int = pick(ints, &random), uuid = pick(uuids, &random), data = pick(bytes, &random)
            let flag = pick(flags, &random), tier = pick(tiers, &random), link = pick(links, &random)
            let double = pick(doubles, &random), amount = pick(amounts, &random)
            let lookups: [(String, Predicate<Sample>, Predicate<Sample>)] = [
                ("text == \(text.unicodeScalars.map { $0.value })", #Predicate { $0.text == text }, #Predicate { $0.text == text || $0.text == text }),
                ("int == \(int)", #Predicate { $0.int == int }, #Predicate { $0.int == int || $0.int == int }),
                ("uuid == \(uuid)", #Predicate { $0.uuid == uuid }, #Predicate { $0.uuid == uuid || $0.uuid == uuid }),
                ("bytes == \(Array(data))", #Predicate { $0.bytes == data }, #Predicate { $0.bytes == data || $0.bytes == data }),
                ("flag == \(flag)", #Predicate { $0.flag == flag }, #Predicate { $0.flag == flag || $0.flag == flag }),
                ("tier == \(tier)", #Predicate { $0.tier == tier }, #Predicate { $0.tier == tier || $0.tier == tier }),
                ("link == \(link)", #Predicate { $0.link == link }, #Predicate { $0.link == link || $0.link == link }),
                ("double == \(double)", #Predicate { $0.double == double }, #Predicate { $0.double == double || $0.double == double }),
                ("amount == \(amount)", #Predicate { $0.amount == amount }, #Predicate { $0.amount == amount || $0.amount == amount }),
                ("double == \(double) && uuid == \(uuid)", #Predicate { $0.double == double && $0.uuid == uuid },
                 #Predicate { ($0.double == double && $0.uuid == uuid) || ($0.double == double && $0.uuid == uuid) }),
                ("amount == \(amount) && (flag == \(flag) && bytes == \(Array(data)))", #Predicate { $0.amount == amount && ($0.flag == flag && $0.bytes == data) },
                 #Predicate { ($0.amount == amount && $0.flag == flag && $0.bytes == data) || ($0.amount == amount && $0.flag == flag && $0.bytes == data) }),
            ]
            return lookups[which]
        }
        try await onBothBackends(Catalog.self, seeds: 1...8) { seed, backend in
            var random = SeededRandom(seed: seed)
            let context = backend.makeContext()
            // The samples the app sees (inserted or saved, not deleted), and those the store holds.
            var living: [Sample] = [], saved: [Sample] = []
            // The attributes this seed changes and looks up by, so that an index, once made, sees
            // changes of the values it indexes.
            let focus = [random.below(9), random.below(9)]
            for step in 0..<60 {
                let label = "\(backend.name), seed \(seed), step \(step)"
                let (name, predicate, unindexed) = lookup(random.below(4) == 0 ? 9 + random.below(2) : focus[random.below(2)], &random)
                switch random.below(20) {
                case 0..<6:
                    let sample = Sample.random(&random, withNUL: false, withNaN: false)
                    for which in 0..<9 { set(which, of: sample, &random) }
                    context.insert(sample)
                    living.append(sample)
                case 6..<14 where !living.isEmpty:
                    set(random.below(3) == 0 ? random.below(9) : focus[random.below(2)], of: living[random.below(living.count)], &random)
                case 14...15 where !living.isEmpty:
                    context.delete(living.remove(at: random.below(living.count)))
                case 16, 17:
                    let before = try await context.fetch(FetchDescriptor(predicate: predicate))
                    try await context.save()
                    saved = living
                    let after = try await backend.makeContext().fetch(FetchDescriptor(predicate: predicate))
                    XCTAssertEqual(Set(before.map(\.persistentModelID)), Set(after.map(\.persistentModelID)), "\(label): \(name) before the save and from the store after it")
                case 18:
                    context.rollback()
                    living = saved
                default:
                    break
                }
                let expected = Set(try await context.fetch(FetchDescriptor(predicate: unindexed)).map(ObjectIdentifier.init))
                let found = Set(try await context.fetch(FetchDescriptor(predicate: predicate)).map(ObjectIdentifier.init))
                XCTAssertEqual(found, expected, "\(label): the samples with \(name)")
                var first = FetchDescriptor(predicate: predicate)
                first.fetchLimit = 1
                let one = Set(try await context.fetch(first).map(ObjectIdentifier.init))
                XCTAssertTrue(one.count == min(1, expected.count) && one.isSubset(of: expected), "\(label): the first sample with \(name)")
                try await assertEqual(await context.fetchCount(FetchDescriptor(predicate: predicate)), expected.count, "\(label): the count with \(name)")
                if testRun?.failureCount ?? 0 > 0 { return }
            }
            context.rollback()
        }
    }
}
