import Foundation
import ModelGenCore
import XCTest

/// The `modelgen` executable as a user runs it: exit statuses, diagnostics, files written.
final class CommandLineTests: XCTestCase {
    func testGenerateWritesTheDDLFilesNamedAfterTheSchemaFile() throws {
        let output = try TestSupport.temporaryDirectory()
        let result = try TestSupport.modelgen("generate", TestSupport.schemasDirectory.appendingPathComponent("Zoo.yaml").path, "--output", output.path)
        XCTAssertEqual(result.status, 0, result.standardError)
        let names = try FileManager.default.contentsOfDirectory(atPath: output.path).sorted()
        XCTAssertEqual(names, ["Zoo+Deletion.swift", "Zoo+Models.swift", "Zoo+Schema.swift", "Zoo.postgresql.sql", "Zoo.sqlite.sql"])
    }

    func testAFileThatCannotBeWrittenLeavesEveryOutputUnchanged() throws {
        let output = try TestSupport.temporaryDirectory()
        let zoo = TestSupport.schemasDirectory.appendingPathComponent("Zoo.yaml").path
        try "old".write(to: output.appendingPathComponent("Zoo.sqlite.sql"), atomically: true, encoding: .utf8)
        // The fourth file cannot be written: a directory stands in its place.
        try FileManager.default.createDirectory(at: output.appendingPathComponent("Zoo+Schema.swift").appendingPathComponent("blocker"), withIntermediateDirectories: true)
        let result = try TestSupport.modelgen("generate", zoo, "--output", output.path)
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.standardError.contains("no file was changed"), result.standardError)
        XCTAssertEqual(try String(contentsOf: output.appendingPathComponent("Zoo.sqlite.sql"), encoding: .utf8), "old", "all or nothing")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output.path).sorted(), ["Zoo+Schema.swift", "Zoo.sqlite.sql"], "no temporary file is left")
    }

    func testSwiftOnlyTemplatesDumpAndOverride() throws {
        let schema = TestSupport.schemasDirectory.appendingPathComponent("Zoo.yaml").path
        let swiftOnly = try TestSupport.temporaryDirectory()
        XCTAssertEqual(try TestSupport.modelgen("generate", schema, "-o", swiftOnly.path, "--swift-only").status, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: swiftOnly.path).sorted(), ["Zoo+Deletion.swift", "Zoo+Models.swift", "Zoo+Schema.swift"])

        let templates = try TestSupport.temporaryDirectory()
        XCTAssertEqual(try TestSupport.modelgen("templates", "dump", templates.path).status, 0)
        let dumped = templates.appendingPathComponent("Models.swift.mustache")
        XCTAssertEqual(try String(contentsOf: dumped, encoding: .utf8),
                       try String(contentsOf: TestSupport.repositoryRoot.appendingPathComponent("Templates/Models.swift.mustache"), encoding: .utf8))
        try (try String(contentsOf: dumped, encoding: .utf8)).replacingOccurrences(of: "/// Generated from entity", with: "/// Custom template: entity")
            .write(to: dumped, atomically: true, encoding: .utf8)
        let custom = try TestSupport.temporaryDirectory()
        XCTAssertEqual(try TestSupport.modelgen("generate", schema, "-o", custom.path, "--templates", templates.path).status, 0)
        XCTAssertTrue(try String(contentsOf: custom.appendingPathComponent("Zoo+Models.swift"), encoding: .utf8).contains("/// Custom template: entity `Animal`"))

        try "{{#entities}}".write(to: dumped, atomically: true, encoding: .utf8)
        let broken = try TestSupport.modelgen("generate", schema, "-o", custom.path, "--templates", templates.path)
        XCTAssertEqual(broken.status, 2)
        XCTAssertTrue(broken.standardError.contains("error: cannot parse the Models.swift.mustache template"), broken.standardError)
    }

    /// `DefaultTemplates.swift` embeds `Templates/`; `MODELGEN_RECORD_GOLDEN=1` rewrites it from there.
    func testTheEmbeddedTemplateEqualsTemplatesDirectory() throws {
        let template = try String(contentsOf: TestSupport.repositoryRoot.appendingPathComponent("Templates/Models.swift.mustache"), encoding: .utf8)
        if ProcessInfo.processInfo.environment["MODELGEN_RECORD_GOLDEN"] == "1" {
            let source = """
            /// The default templates, embedded so that `modelgen` needs no resource files. They are copies of
            /// `Templates/`; a test checks that the copies are equal (`modelgen templates dump DIR` writes them out).
            public enum DefaultTemplates {
                /// `Templates/Models.swift.mustache`.
                public static let models = #\"\"\"
            \(template)
            \"\"\"#

                /// File name and text of every default template.
                public static let all: [(name: String, text: String)] = [("Models.swift.mustache", models)]
            }

            """
            try source.write(to: TestSupport.repositoryRoot.appendingPathComponent("Sources/ModelGenCore/Swift/DefaultTemplates.swift"), atomically: true, encoding: .utf8)
            return
        }
        XCTAssertEqual(DefaultTemplates.models, template,
                       "Sources/ModelGenCore/Swift/DefaultTemplates.swift must embed Templates/Models.swift.mustache; re-record with MODELGEN_RECORD_GOLDEN=1 swift test --filter testTheEmbeddedTemplate")
    }

    func testTwoProcessesWriteByteIdenticalFiles() throws {
        for schema in TestSupport.exampleSchemas {
            let first = try TestSupport.temporaryDirectory(), second = try TestSupport.temporaryDirectory()
            XCTAssertEqual(try TestSupport.modelgen("generate", schema.path, "-o", first.path).status, 0)
            XCTAssertEqual(try TestSupport.modelgen("generate", schema.path, "-o", second.path).status, 0)
            for name in try FileManager.default.contentsOfDirectory(atPath: first.path) {
                XCTAssertEqual(try Data(contentsOf: first.appendingPathComponent(name)), try Data(contentsOf: second.appendingPathComponent(name)), name)
            }
        }
    }

    func testUnchangedFilesAreNotRewrittenAndCheckDetectsStaleness() throws {
        let output = try TestSupport.temporaryDirectory()
        let schema = TestSupport.schemasDirectory.appendingPathComponent("Zoo.yaml").path
        XCTAssertEqual(try TestSupport.modelgen("generate", schema, "-o", output.path).status, 0)
        let file = output.appendingPathComponent("Zoo.sqlite.sql")
        let old = Date(timeIntervalSince1970: 1_000_000)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: file.path)
        XCTAssertEqual(try TestSupport.modelgen("generate", schema, "-o", output.path).status, 0)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date, old, "an unchanged file is not rewritten")

        XCTAssertEqual(try TestSupport.modelgen("generate", schema, "-o", output.path, "--check").status, 0)
        try "stale".write(to: file, atomically: true, encoding: .utf8)
        let check = try TestSupport.modelgen("generate", schema, "-o", output.path, "--check")
        XCTAssertEqual(check.status, 1)
        XCTAssertTrue(check.standardError.contains("Zoo.sqlite.sql is out of date"), check.standardError)
        XCTAssertEqual(try String(contentsOf: file, encoding: .utf8), "stale", "--check writes nothing")
    }

    func testMalformedSchemaExitsTwoWithLocatedErrorsAndWritesNothing() throws {
        let directory = try TestSupport.temporaryDirectory()
        let schema = directory.appendingPathComponent("Broken.yaml")
        try "schema: Broken\nentities:\n  A:\n    attributes:\n      name: Strng\n".write(to: schema, atomically: true, encoding: .utf8)
        let output = directory.appendingPathComponent("out")
        let result = try TestSupport.modelgen("generate", schema.path, "--output", output.path)
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(result.standardError, "\(schema.path):5:13: error: unknown type 'Strng' for attribute 'name' of 'A'; did you mean 'String'?\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path), "nothing is written when the schema has an error")
        XCTAssertEqual(try TestSupport.modelgen("validate", schema.path).status, 2)
    }

    func testValidateIsQuietAndZeroForACleanSchema() throws {
        let result = try TestSupport.modelgen("validate", TestSupport.schemasDirectory.appendingPathComponent("FitIQ.yaml").path)
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.standardError, "")
    }

    func testMissingFileAndBadUsageExitTwo() throws {
        XCTAssertEqual(try TestSupport.modelgen("validate", "/nonexistent/x.yaml").status, 2)
        let usage = try TestSupport.modelgen("generate")
        XCTAssertEqual(usage.status, 2, "usage errors exit 2")
        XCTAssertTrue(usage.standardError.contains("Missing expected argument"), usage.standardError)
        let help = try TestSupport.modelgen("generate", "--help")
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.standardOutput.contains("--output"))
        XCTAssertEqual(try TestSupport.modelgen("--version").status, 0)
    }
}
