import ModelGenCore
import XCTest

/// Malformed schema in, the expected located diagnostic out.
final class DiagnosticTests: XCTestCase {
    private func assertDiagnostic(_ yaml: String, _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
        let compilation = TestSupport.compile(yaml)
        let printed = compilation.diagnostics.map(\.description)
        XCTAssertTrue(printed.contains { $0.hasPrefix(expected) || $0 == expected }, "expected \(expected)\ngot:\n\(printed.joined(separator: "\n"))", file: file, line: line)
        if expected.contains(": error: ") {
            XCTAssertTrue(compilation.files.isEmpty, "no files may be produced when there is an error", file: file, line: line)
        }
    }

    private let zoo = """
    schema: Zoo
    enums:
      Diet: [herbivorous, carnivorous]
    entities:
      AnimalCategory:
        attributes:
          name: { type: String, unique: true }
        relationships:
          animals: { type: [Animal], inverse: category, deleteRule: cascade }
      Animal:
        attributes:
          name: String
        relationships:
          category: { type: AnimalCategory?, inverse: animals }

    """

    /// A diagnostic quoting the schema's text stays one line whatever that text holds: control
    /// characters and line separators in any name, type, default or key are printed as escapes.
    func testDiagnosticsQuotingControlCharactersStayOneLine() {
        let unprintable = ["\\n", "\\r", "\\t", "\\0", "\\x7F", "\\x1B[31m", "\\u2028", "\\x85", "\\u2029", "a\\r\\nb"]
        for text in unprintable {
            let places = [
                zoo.replacingOccurrences(of: "Diet: [herbivorous, carnivorous]", with: "Diet: [herbivorous, \"c\(text)\"]"),
                zoo.replacingOccurrences(of: "\n  Animal:\n", with: "\n  \"Ani\(text)mal\":\n"),
                zoo.replacingOccurrences(of: "      name: String\n", with: "      \"na\(text)me\": String\n"),
                zoo.replacingOccurrences(of: "      name: String\n", with: "      name: \"Str\(text)ing\"\n"),
                zoo.replacingOccurrences(of: "      name: String\n", with: "      name: { type: Int, default: \"1\(text)\" }\n"),
                zoo.replacingOccurrences(of: "      name: String\n", with: "      name: { type: String, \"uni\(text)que\": true }\n"),
                zoo.replacingOccurrences(of: "inverse: animals", with: "inverse: \"ani\(text)mals\""),
            ]
            for yaml in places {
                let printed = TestSupport.diagnostics(yaml)
                XCTAssertFalse(printed.isEmpty, "\(yaml) has an error")
                for line in printed {
                    XCTAssertFalse(line.unicodeScalars.contains { [.control, .lineSeparator, .paragraphSeparator].contains($0.properties.generalCategory) },
                                   "a diagnostic printed a control character or line break: \(line.debugDescription)")
                }
            }
        }
    }

    func testMisspeltTypeSuggestsTheNearMiss() {
        assertDiagnostic(zoo.replacingOccurrences(of: "name: String\n", with: "name: Strin\n"),
                         "test.yaml:12:13: error: unknown type 'Strin' for attribute 'name' of 'Animal'; did you mean 'String'?")
    }

    func testMisspeltEnumTypeSuggestsTheEnum() {
        assertDiagnostic(zoo.replacingOccurrences(of: "name: String\n", with: "name: Deit\n"), "test.yaml:12:13: error: unknown type 'Deit'")
        XCTAssertTrue(TestSupport.diagnostics(zoo.replacingOccurrences(of: "name: String\n", with: "name: Deit\n")).first!.hasSuffix("did you mean 'Diet'?"))
    }

    func testMisspeltEntitySuggestsTheNearMiss() {
        assertDiagnostic(zoo.replacingOccurrences(of: "type: [Animal]", with: "type: [Animl]"),
                         "test.yaml:9:25: error: unknown entity 'Animl' in the type of relationship 'AnimalCategory.animals'; did you mean 'Animal'?")
        XCTAssertEqual(TestSupport.diagnostics(zoo.replacingOccurrences(of: "type: [Animal]", with: "type: [Animl]")).count, 1, "no follow-on errors")
    }

    func testMisspeltInverseSuggestsTheNearMiss() {
        assertDiagnostic(zoo.replacingOccurrences(of: "inverse: category", with: "inverse: categroy"),
                         "test.yaml:9:43: error: inverse 'categroy' of 'AnimalCategory.animals' is not a relationship of 'Animal'; did you mean 'category'?")
    }

    func testMisspeltDeleteRuleSuggestsTheNearMiss() {
        assertDiagnostic(zoo.replacingOccurrences(of: "deleteRule: cascade", with: "deleteRule: cascde"),
                         "test.yaml:9:65: error: unknown deleteRule 'cascde' on 'AnimalCategory.animals'; did you mean 'cascade'?")
    }

    func testMisspeltOptionKeySuggestsTheNearMiss() {
        assertDiagnostic(zoo.replacingOccurrences(of: "unique: true", with: "uniqe: true"),
                         "test.yaml:7:29: error: unknown key 'uniqe' in attribute 'name'; did you mean 'unique'?")
    }

    func testUnknownTopLevelAndEntityKeys() {
        assertDiagnostic("schema: S\nentites: {}\n", "test.yaml:2:1: error: unknown key 'entites' in the schema; did you mean 'entities'?")
        assertDiagnostic("schema: S\nentities:\n  A:\n    atributes: {}\n", "test.yaml:4:5: error: unknown key 'atributes' in entity 'A'; did you mean 'attributes'?")
    }

    func testDuplicateKeysAreReported() {
        assertDiagnostic("schema: S\nentities:\n  A:\n    attributes:\n      name: String\n      name: Int\n", "test.yaml:6:7: error: duplicate key 'name' in a mapping (first at 5:7)")
    }

    func testMissingSchemaNameAndEntities() {
        assertDiagnostic("enums: {}\n", "test.yaml:1:1: error: the schema has no 'schema:' key")
        assertDiagnostic("schema: S\n", "test.yaml:1:1: error: the schema has no 'entities:' key")
    }

    func testEmptyFileAndNonMappingRoot() {
        assertDiagnostic("", "test.yaml:1:1: error: the schema file is empty")
        assertDiagnostic("- a\n- b\n", "test.yaml:1:1: error: the schema file must be a mapping, found a sequence")
    }

    func testYAMLSyntaxErrorIsLocated() {
        let diagnostics = TestSupport.diagnostics("schema: S\nentities:\n  A: {attributes: [\n")
        XCTAssertEqual(diagnostics.count, 1)
        XCTAssertTrue(diagnostics[0].hasPrefix("test.yaml:4:1: error: invalid YAML:"), diagnostics[0])
    }

    func testBytesThatAreNotUTF8AreLocated() {
        var bytes = Array("schema: S\nentities:\n  A:\n    attributes:\n      na".utf8)
        bytes += [0xFF, 0xFE]
        bytes += Array("me: String\n".utf8)
        let compilation = ModelGen.generate(path: "bad.yaml", bytes: bytes)
        XCTAssertEqual(compilation.diagnostics.map(\.description), ["bad.yaml:5:9: error: the schema is not valid UTF-8 text (invalid byte 0xFF)"])
    }

    /// Editors on Windows start UTF-8 files with a byte order mark: not part of the text, so the
    /// same schema gives the same files and the same error locations; UTF-16 text is refused,
    /// saying so.
    func testAByteOrderMarkIsNotPartOfTheSchema() throws {
        let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
        let valid = Array("schema: S\nentities:\n  A:\n    attributes:\n      name: String\n".utf8)
        let plain = ModelGen.generate(path: "s.yaml", bytes: valid)
        XCTAssertEqual(plain.diagnostics.map(\.description), [])
        XCTAssertEqual(ModelGen.generate(path: "s.yaml", bytes: byteOrderMark + valid).files, plain.files)
        XCTAssertFalse(plain.files.isEmpty)

        let misspelt = Array("schema: S entities\nentities:\n  A:\n    attributes:\n      name: Strin\n".utf8)
        let errors = ModelGen.generate(path: "s.yaml", bytes: misspelt).diagnostics.map(\.description)
        XCTAssertFalse(errors.isEmpty)
        XCTAssertEqual(ModelGen.generate(path: "s.yaml", bytes: byteOrderMark + misspelt).diagnostics.map(\.description), errors)

        let utf16: [UInt8] = [0xFF, 0xFE] + "schema: S\n".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        XCTAssertEqual(ModelGen.generate(path: "s.yaml", bytes: utf16).diagnostics.map(\.description),
                       ["s.yaml:1:1: error: the schema is UTF-16 text; save it as UTF-8"])
    }

    func testAliasExpansionBombIsRefusedQuickly() {
        var yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for level in 1...9 {
            yaml += "a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ") + "]\n"
        }
        yaml += "schema: S\nentities:\n  A:\n    unique: *a9\n"
        let start = Date()
        let diagnostics = TestSupport.diagnostics(yaml)
        XCTAssertLessThan(Date().timeIntervalSince(start), 20)
        XCTAssertTrue(diagnostics.contains { $0.contains("error: the document expands to more than") }, diagnostics.joined(separator: "\n"))
    }

    func testAliasesReadAsACopyOfTheAnchoredNode() throws {
        let yaml = "schema: S\nentities:\n  A:\n    attributes: &common\n      name: String\n      createdAt: Date\n  B:\n    attributes: *common\n"
        let (schema, diagnostics) = ModelGen.load(path: "test.yaml", bytes: Array(yaml.utf8))
        XCTAssertEqual(diagnostics.map(\.description), [])
        XCTAssertEqual(schema?.entity(named: "B")?.attributes.map(\.name), ["name", "createdAt"])
        assertDiagnostic("schema: S\nentities:\n  A:\n    attributes: *nothing\n", "test.yaml:4:17: error: unknown alias; define the anchor (&name) before using it (*name)")
        assertDiagnostic("schema: S\n---\nentities: {}\n", "test.yaml:2:1: error: a second YAML document starts here; a schema file holds one document")
    }

    func testTheNodeBudgetCountsEachNodeOnce() {
        // 700,000 nodes three levels deep: well inside the budget, however deep they sit.
        let cases = (0..<700_000).map { "c\($0)" }.joined(separator: ", ")
        let yaml = "schema: S\nenums:\n  Big: [\(cases)]\n"
        guard case let .success(root) = YAMLReader.read(Array(yaml.utf8), file: "test.yaml") else { return XCTFail("not read") }
        guard case let .mapping(pairs) = root.value, case let .mapping(enums) = pairs[1].value.value, case let .sequence(items) = enums[0].value.value
        else { return XCTFail("wrong shape") }
        XCTAssertEqual(items.count, 700_000)
    }

    func testVeryDeepNestingIsAnErrorNotACrash() {
        let yaml = "schema: S\nentities: " + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "\n"
        let diagnostics = TestSupport.diagnostics(yaml)
        XCTAssertTrue(diagnostics.first?.contains("error: invalid YAML") ?? false, diagnostics.joined(separator: "\n"))
    }

    func testTwoEntitiesMappingToOneTable() {
        assertDiagnostic("schema: S\nentities:\n  A:\n    table: things\n  B:\n    table: things\n",
                         "test.yaml:6:12: error: entities 'A' and 'B' both map to table 'things'")
    }

    func testAttributeCollidingWithForeignKeyColumn() {
        assertDiagnostic("schema: S\nentities:\n  A:\n    attributes:\n      bID: Int\n    relationships:\n      b: { type: B? }\n  B: {}\n",
                         "test.yaml:7:7: error: foreign-key column 'b_id' of relationship 'A.b' collides with attribute 'bID'")
    }

    func testNamesThatWouldBreakTheGeneratedCode() {
        assertDiagnostic("schema: S\nentities:\n  A:\n    attributes:\n      id: Int\n", "test.yaml:5:7: error: 'id' in 'A' collides with the primary key 'id', which is added for you")
        // SwiftData models often declare `var id: UUID`: one error, which says what to do.
        let ownID = TestSupport.compile("schema: S\nentities:\n  A:\n    attributes:\n      id: { type: UUID, unique: true }\n").diagnostics.map(\.description)
        XCTAssertEqual(ownID, ["test.yaml:5:7: error: 'id' in 'A' collides with the primary key 'id', which is added for you (an object's identity is its persistentModelID; "
                               + "an attribute of your own, such as a UUID, needs another name, as in 'uuid'); rename it"])
        assertDiagnostic("schema: S\nentities:\n  A:\n    attributes:\n      uuid: { type: UUID, column: id }\n", "test.yaml:5:35: error: column 'id' of attribute 'A.uuid' collides with the primary key in table 'a'; set 'column' to rename it")
        assertDiagnostic("schema: S\nentities:\n  Bad-Name: {}\n", "test.yaml:3:3: error: entity name 'Bad-Name' is not a name a schema can use: use ASCII letters, digits and '_'")
        assertDiagnostic("schema: S\nentities:\n  ModelGenRuntime: {}\n", "test.yaml:3:3: error: entity name 'ModelGenRuntime' is reserved: generated code qualifies names with the modules")
        assertDiagnostic("schema: S\nentities:\n  A:\n    attributes:\n      self: Int\n", "test.yaml:5:7: error: 'self' in 'A' cannot be named by a Swift key path")
        assertDiagnostic("schema: S\nenums:\n  E: [self, Type]\nentities:\n  A: {}\n", "test.yaml:3:7: error: enum case 'self' of 'E' cannot be written as 'E.self' in Swift")
        assertDiagnostic("schema: S\nentities:\n  S: {}\n", "test.yaml:3:3: error: entity 'S' has the same name as the schema")
        assertDiagnostic("schema: S\nentities:\n  A:\n    attributes:\n      x: Int\n      x: String\n", "test.yaml:6:7: error: duplicate key 'x' in a mapping (first at 5:7)")
        assertDiagnostic("schema: S\nentities:\n  A:\n    attributes:\n      x: Int\n    relationships:\n      x: { type: A? }\n", "test.yaml:7:7: error: member of 'A' 'x' is declared twice")
    }

    func testInverseMismatches() {
        assertDiagnostic("schema: S\nentities:\n  A:\n    relationships:\n      b: { type: B?, inverse: c }\n  B:\n    relationships:\n      c: { type: C? }\n  C: {}\n",
                         "test.yaml:5:31: error: inverse 'B.c' of 'A.b' points at 'C', not at 'A'")
        assertDiagnostic("schema: S\nentities:\n  A:\n    relationships:\n      me: { type: A?, inverse: me }\n",
                         "test.yaml:5:32: error: relationship 'A.me' names itself as its inverse")
        assertDiagnostic("schema: S\nentities:\n  A:\n    attributes:\n      n: Int\n    relationships:\n      b: { type: B?, inverse: n }\n  B:\n    attributes:\n      n: Int\n",
                         "test.yaml:7:31: error: inverse 'n' of 'A.b' is not a relationship of 'B'; 'n' is an attribute")
    }

    func testBadOptionValues() {
        assertDiagnostic("schema: S\nentities:\n  A:\n    attributes:\n      x: { type: Int, unique: maybe }\n", "test.yaml:5:31: error: 'unique' must be true or false, found 'maybe'")
        assertDiagnostic("schema: S\nentities:\n  A:\n    attributes:\n      x: { type: Int, default: abc }\n", "test.yaml:5:32: error: default 'abc' of 'A.x' is not a whole number")
        assertDiagnostic("schema: S\nenums:\n  E: [a, b]\nentities:\n  A:\n    attributes:\n      x: { type: E, default: c }\n", "test.yaml:7:30: error: default 'c' of 'A.x' is not a case of 'E'")
        assertDiagnostic("schema: S\nentities:\n  A:\n    relationships:\n      b: { type: [A], minimumModelCount: -1 }\n", "test.yaml:5:42: error: 'minimumModelCount' must be a whole number")
        assertDiagnostic("schema: S\nentities:\n  A:\n    relationships:\n      b: { type: A?, maximumModelCount: 2 }\n", "test.yaml:5:41: error: 'A.b' is a to-one relationship")
        assertDiagnostic("schema: S\nentities:\n  A:\n    relationships:\n      b: { type: [A], minimumModelCount: 3, maximumModelCount: 2 }\n",
                         "test.yaml:5:42: error: minimumModelCount 3 of 'A.b' is greater than its maximumModelCount 2")
        // A maximum of 0 is no maximum, as in SwiftData.
        XCTAssertFalse(ModelGen.generate(path: "test.yaml", bytes: Array("schema: S\nentities:\n  A:\n    relationships:\n      b: { type: [A], minimumModelCount: 3, maximumModelCount: 0 }\n".utf8)).hasErrors)
        assertDiagnostic("schema: S\nentities:\n  A:\n    unique: [[nope]]\n    attributes:\n      note: String\n", "test.yaml:4:15: error: 'unique' of 'A' names 'nope', which is not a stored attribute or to-one relationship of 'A'; did you mean 'note'?")
    }

    /// A group naming a member of the entity that has no column on its table says why, and what
    /// to name instead (not "not a stored attribute or to-one relationship" of a to-one it has).
    func testAGroupNamingAMemberWithoutAColumnSaysWhy() {
        let entities = "  A:\n    attributes:\n      note: { type: String?, transient: true }\n    relationships:\n      tags: { type: \"[B]\", inverse: as }\n"
            + "      kids: { type: \"[C]\", inverse: a }\n      partner: { type: D?, inverse: a }\n"
            + "  B:\n    relationships:\n      as: { type: \"[A]\", inverse: tags }\n  C:\n    relationships:\n      a: { type: A?, inverse: kids }\n"
            + "  D:\n    relationships:\n      a: { type: A?, inverse: partner, column: a_key }\n"
        func schema(_ group: String) -> String { "schema: S\nentities:\n" + entities.replacingOccurrences(of: "  A:\n", with: "  A:\n    indexes: [[\(group)]]\n") }
        assertDiagnostic(schema("note"), "test.yaml:4:16: error: 'indexes' of 'A' names 'note', which is transient, so it has no column; name stored attributes and to-one relationships only")
        assertDiagnostic(schema("tags"), "test.yaml:4:16: error: 'indexes' of 'A' names 'tags', a to-many relationship stored in the join table 'a_tags'; name stored attributes and to-one relationships only")
        assertDiagnostic(schema("kids"), "test.yaml:4:16: error: 'indexes' of 'A' names 'kids', a to-many relationship stored as the key of its inverse, 'C.a'; name stored attributes and to-one relationships only")
        assertDiagnostic(schema("partner"), "test.yaml:4:16: error: 'indexes' of 'A' names 'partner', a one-to-one whose key is stored on the other side, 'D.a'; set 'column' on 'A.partner' to store the key in 'A' instead, or name the pair in 'D'")
        // The key on this side, the same group is accepted.
        XCTAssertFalse(TestSupport.compile(schema("partner").replacingOccurrences(of: ", column: a_key", with: "").replacingOccurrences(of: "partner: { type: D?, inverse: a }", with: "partner: { type: D?, inverse: a, column: partner_key }")).hasErrors)
    }

    func testAttributeOfEntityTypeAndRelationshipOfScalarType() {
        assertDiagnostic("schema: S\nentities:\n  A:\n    attributes:\n      b: B\n  B: {}\n", "test.yaml:5:10: error: attribute 'b' of 'A' has type 'B', which is an entity; declare it under 'relationships'")
        assertDiagnostic("schema: S\nentities:\n  A:\n    relationships:\n      b: String\n", "test.yaml:5:10: error: relationship 'A.b' has type 'String', which is not an entity; declare it under 'attributes'")
    }

    func testRequiredCycleIsRejectedWithItsPath() {
        assertDiagnostic("schema: S\nentities:\n  A:\n    relationships:\n      b: { type: B }\n  B:\n    relationships:\n      a: { type: A }\n",
                         "test.yaml:5:7: error: required to-one relationships form a cycle (A.b → B, B.a → A)")
    }

    func testHazardWarnings() {
        let compilation = TestSupport.compile("schema: S\nentities:\n  P:\n    relationships:\n      kids: { type: [K], inverse: parent }\n      notes: { type: [N] }\n  K:\n    relationships:\n      parent: { type: P, inverse: kids }\n  N: {}\n")
        XCTAssertFalse(compilation.hasErrors)
        let printed = compilation.diagnostics.map(\.description)
        XCTAssertTrue(printed.contains { $0.hasPrefix("test.yaml:5:7: warning: 'P.kids' nullifies 'K.parent', which is required") }, printed.joined(separator: "\n"))
        XCTAssertTrue(printed.contains { $0.hasPrefix("test.yaml:6:7: warning: relationship 'P.notes' has no inverse") }, printed.joined(separator: "\n"))
        XCTAssertEqual(compilation.files.count, 5, "warnings do not stop generation")
    }

    func testAllErrorsAreCollectedAndSorted() {
        let diagnostics = TestSupport.diagnostics("schema: S\nentities:\n  A:\n    attributes:\n      x: Strng\n      y: Dobule\n")
        XCTAssertEqual(diagnostics.count, 2)
        XCTAssertTrue(diagnostics[0].hasPrefix("test.yaml:5:10: error:"))
        XCTAssertTrue(diagnostics[1].hasPrefix("test.yaml:6:10: error:"))
    }
}
