@testable import ModelGenCore
import XCTest

/// `concurrentMap` under contention: both cores storing results at once, many times over.
final class ConcurrentMapTests: XCTestCase {
    func testResultsKeepTheirPositionsWhileWorkersStoreConcurrently() {
        let numbers = Array(0..<5_000)
        for round in 0..<40 {
            let results = numbers.concurrentMap { "\($0 * round)" }
            XCTAssertEqual(results, numbers.map { "\($0 * round)" }, "round \(round)")
        }
    }
}
