import Foundation
import ModelGenCore
import ModelGenTestSupport
import XCTest

/// Thousands of deterministic mutations of the example schemas: every one must either compile
/// or give at least one located error (and then no files); none may crash or hang.
final class RobustnessTests: XCTestCase {
    static func mutate(_ bytes: [UInt8], _ generator: inout SeededRandom) -> [UInt8] {
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
        let tokens: [[UInt8]] = ["[", "]", "{", "}", ":", ",", "?", "-", "&a", "*a", "\"", "'", "#", "!", "|", "~", "cascade", "Animal",
                                 "type", "inverse", "String", "[Animal]", "null", "  ", "\t", "\u{FEFF}"].map { Array($0.utf8) }
        switch generator.below(8) {
        case 0 where !lines.isEmpty: lines.remove(at: generator.below(lines.count))
        case 1 where lines.count > 1:
            let a = generator.below(lines.count), b = generator.below(lines.count)
            lines.swapAt(a, b)
        case 2 where !lines.isEmpty:
            let index = generator.below(lines.count)
            if generator.below(2) == 0 { lines[index].insert(contentsOf: Array(repeating: UInt8(ascii: " "), count: 1 + generator.below(4)), at: 0) }
            else { lines[index] = Array(lines[index].drop { $0 == UInt8(ascii: " ") }) }
        case 3 where !lines.isEmpty:
            let index = generator.below(lines.count)
            lines.insert(lines[index], at: generator.below(lines.count))
        case 4:
            let index = generator.below(lines.count)
            let token = tokens[generator.below(tokens.count)]
            lines[index].insert(contentsOf: token, at: generator.below(lines[index].count + 1))
        case 5:
            let index = generator.below(lines.count)
            for _ in 0...generator.below(4) {
                lines[index].insert(UInt8(truncatingIfNeeded: generator.next()), at: generator.below(lines[index].count + 1))
            }
        case 6:
            // Swap two words anywhere in the file.
            var words = lines.joined(separator: [UInt8(ascii: "\n")]).split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false).map(Array.init)
            if words.count > 1 { words.swapAt(generator.below(words.count), generator.below(words.count)) }
            return Array(words.joined(separator: [UInt8(ascii: " ")]))
        default:
            let flat = Array(lines.joined(separator: [UInt8(ascii: "\n")]))
            return Array(flat.prefix(generator.below(flat.count + 1)))
        }
        return Array(lines.joined(separator: [UInt8(ascii: "\n")]))
    }

    /// One schema written down the ways editors save text — with a UTF-8 byte order mark, with
    /// Windows line ends, with a comment or a document end marker after it — is one schema: the
    /// same files, or the same errors at the same places. Checked on the examples and on mutants
    /// of them (which exercise the error paths).
    func testEveryWayOfSavingTheSameTextCompilesAlike() throws {
        var generator = SeededRandom(seed: 4_141)
        // Text after the schema is its own only once the schema's YAML has been read to its end
        // (after an unclosed quote it would be part of the quoted text), and a document end
        // marker needs a document before it.
        let forms: [(name: String, appends: Bool, rewrite: ([UInt8]) -> [UInt8])] = [
            ("a byte order mark", false, { [0xEF, 0xBB, 0xBF] + $0 }),
            ("CRLF line ends", false, { Self.windowsLineEnds($0) }),
            ("a byte order mark and CRLF line ends", false, { [0xEF, 0xBB, 0xBF] + Self.windowsLineEnds($0) }),
            ("a comment after it", true, { $0 + Array("\n# the end\n".utf8) }),
            ("a document end marker after it", true, { $0 + Array("\n...\n".utf8) }),
        ]
        var compared = 0
        for schema in TestSupport.exampleSchemas {
            let original = [UInt8](try Data(contentsOf: schema))
            for round in 0..<200 {
                let bytes = round == 0 ? original : Self.mutate(original, &generator)
                // A mutant cut inside a line, or holding a carriage return of its own, is not the
                // same text in another form.
                guard bytes.last == UInt8(ascii: "\n"), !bytes.contains(UInt8(ascii: "\r")) else { continue }
                let expected = ModelGen.generate(path: "s.yaml", bytes: bytes)
                let yamlRead = !expected.diagnostics.contains { $0.message.hasPrefix("invalid YAML") || $0.message.hasPrefix("the schema file is empty") }
                for form in forms where yamlRead || !form.appends {
                    let compilation = ModelGen.generate(path: "s.yaml", bytes: form.rewrite(bytes))
                    XCTAssertEqual(compilation.diagnostics.map(\.description), expected.diagnostics.map(\.description),
                                   "\(schema.lastPathComponent), round \(round), with \(form.name)")
                    XCTAssertTrue(compilation.files == expected.files, "\(schema.lastPathComponent), round \(round), with \(form.name): other files")
                    compared += 1
                }
                if testRun?.failureCount ?? 0 > 0 { return }
            }
        }
        XCTAssertGreaterThan(compared, 1_000)
    }

    private static func windowsLineEnds(_ bytes: [UInt8]) -> [UInt8] {
        bytes.flatMap { $0 == UInt8(ascii: "\n") ? [UInt8(ascii: "\r"), $0] : [$0] }
    }

    func testMutatedSchemasNeverCrashAndErrorsAreLocated() throws {
        var generator = SeededRandom(seed: 2026)
        var compiled = 0, rejected = 0
        for schema in TestSupport.exampleSchemas {
            let original = [UInt8](try Data(contentsOf: schema))
            for round in 0..<1_000 {
                var bytes = original
                for _ in 0...(round % 3) { bytes = Self.mutate(bytes, &generator) }
                let compilation = ModelGen.generate(path: "mutant.yaml", bytes: bytes)
                if compilation.hasErrors {
                    rejected += 1
                    XCTAssertTrue(compilation.files.isEmpty, "files were produced despite errors")
                    for diagnostic in compilation.diagnostics {
                        XCTAssertEqual(diagnostic.location.file, "mutant.yaml")
                        XCTAssertGreaterThanOrEqual(diagnostic.location.line, 1)
                        XCTAssertGreaterThanOrEqual(diagnostic.location.column, 1)
                        XCTAssertFalse(diagnostic.message.isEmpty)
                    }
                } else {
                    compiled += 1
                    XCTAssertEqual(compilation.files.count, ModelGen.outputFileNames(forSchemaFile: "mutant.yaml").count)
                }
            }
        }
        XCTAssertGreaterThan(rejected, 1_000, "the mutations should break most schemas")
        XCTAssertGreaterThan(compiled, 10, "some mutations (comments, reordering) still compile")
    }

    func testMutatedTemplatesNeverCrashAndErrorsAreLocated() throws {
        var generator = SeededRandom(seed: 1)
        let zoo = [UInt8](try Data(contentsOf: TestSupport.schemasDirectory.appendingPathComponent("Zoo.yaml")))
        var rendered = 0, rejected = 0
        for round in 0..<1_000 {
            var bytes = Array(DefaultTemplates.models.utf8)
            for _ in 0...(round % 3) { bytes = Self.mutate(bytes, &generator) }
            let text = String(decoding: bytes, as: UTF8.self)
            let compilation = ModelGen.generate(path: "Zoo.yaml", bytes: zoo, modelsTemplate: TemplateFile(path: "mutant.mustache", text: text))
            if compilation.hasErrors {
                rejected += 1
                XCTAssertTrue(compilation.files.isEmpty, "files were produced despite errors")
                let location = try XCTUnwrap(compilation.diagnostics.first?.location)
                XCTAssertEqual(location.file, "mutant.mustache")
                XCTAssertTrue((1...text.split(separator: "\n", omittingEmptySubsequences: false).count).contains(location.line), "\(location)")
                XCTAssertGreaterThanOrEqual(location.column, 1)
            } else {
                rendered += 1
            }
        }
        XCTAssertGreaterThan(rejected, 100, "the mutations should break some templates")
        XCTAssertGreaterThan(rendered, 100, "most mutations (text, reordering) still render")
    }
}
