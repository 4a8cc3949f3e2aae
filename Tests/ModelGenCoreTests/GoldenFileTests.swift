import Foundation
import ModelGenCore
import XCTest

/// Every file generated for the example schemas, compared byte for byte with `Golden/`.
///
/// To re-record after an intended change: `MODELGEN_RECORD_GOLDEN=1 swift test --filter GoldenFileTests`,
/// then review the diff of `Tests/ModelGenCoreTests/Golden/` before committing it.
final class GoldenFileTests: XCTestCase {
    func testGeneratedFilesMatchTheGoldenFiles() throws {
        let record = ProcessInfo.processInfo.environment["MODELGEN_RECORD_GOLDEN"] == "1"
        XCTAssertFalse(TestSupport.exampleSchemas.isEmpty)
        for schema in TestSupport.exampleSchemas {
            let compilation = ModelGen.generate(path: schema.lastPathComponent, bytes: [UInt8](try Data(contentsOf: schema)))
            XCTAssertFalse(compilation.hasErrors, "\(schema.lastPathComponent): \(compilation.diagnostics)")
            XCTAssertEqual(compilation.files.map(\.name), ModelGen.outputFileNames(forSchemaFile: schema.lastPathComponent))
            for file in compilation.files {
                let golden = TestSupport.goldenDirectory.appendingPathComponent(file.name)
                if record {
                    try file.contents.write(to: golden, atomically: true, encoding: .utf8)
                    continue
                }
                let expected = try? String(contentsOf: golden, encoding: .utf8)
                XCTAssertNotNil(expected, "missing golden file \(golden.path); record with MODELGEN_RECORD_GOLDEN=1")
                if let expected, expected != file.contents {
                    XCTFail("\(file.name) differs from its golden file; first differing line:\n\(firstDifference(expected, file.contents))")
                }
            }
        }
    }

    private func firstDifference(_ expected: String, _ actual: String) -> String {
        let expectedLines = expected.components(separatedBy: "\n"), actualLines = actual.components(separatedBy: "\n")
        for index in 0..<max(expectedLines.count, actualLines.count) {
            let lhs = index < expectedLines.count ? expectedLines[index] : "<end>"
            let rhs = index < actualLines.count ? actualLines[index] : "<end>"
            if lhs != rhs { return "line \(index + 1)\n  golden: \(lhs)\n  actual: \(rhs)" }
        }
        return "(none)"
    }
}
