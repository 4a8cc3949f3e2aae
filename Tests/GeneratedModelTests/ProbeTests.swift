import Foundation
@_spi(Backend) import ModelGenRuntime
import XCTest

extension BothBackendsTests {
    func testProbeExtremeLimits() async throws {
        try await onBothBackends(Catalog.self) { flow in
            let b = flow.name
            let context = flow.makeContext()
            for i in 0..<3 { context.insert(Employee(name: "e\(i)", level: i)) }
            try await context.save()
            context.insert(Employee(name: "new", level: 9))
            let all = try await context.fetch(FetchDescriptor<Employee>())
            all[0].level = 7
            for (limit, offset) in [(Int.max, nil), (Int.max, Int.max), (1, Int.max), (nil, Int.max), (Int.max, 1)] as [(Int?, Int?)] {
                for sorted in [false, true] {
                    var d = FetchDescriptor<Employee>(predicate: #Predicate { $0.level != nil }, sortBy: sorted ? [SortDescriptor(\.name)] : [])
                    d.fetchLimit = limit; d.fetchOffset = offset
                    do {
                        let r = try await context.fetch(d).map(\.name)
                        let n = try await context.fetchCount(d)
                        let ids = try await context.fetchIdentifiers(d).count
                        let e = try await context.enumerated(d, batchSize: Int.max).count
                        print("PROBE \(b) \(String(describing: limit)) \(String(describing: offset)) \(sorted): \(r) \(n) \(ids) \(e)")
                    } catch { print("PROBE \(b) \(String(describing: limit)) \(String(describing: offset)) \(sorted): threw \(error)") }
                }
            }
        }
    }
}
