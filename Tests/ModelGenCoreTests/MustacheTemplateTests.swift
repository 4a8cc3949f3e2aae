import ModelGenCore
import XCTest

/// The Mustache subset templates are written in; cases follow the specification's
/// (github.com/mustache/spec: interpolation, sections, inverted, comments).
final class MustacheTemplateTests: XCTestCase {
    private func render(_ template: String, _ context: [String: TemplateValue]) throws -> String {
        try MustacheTemplate(template).render(.object(context))
    }

    func testVariablesAreInsertedUnescapedAndMissingOnesAreEmpty() throws {
        let context: [String: TemplateValue] = ["type": .text("[Animal]"), "quote": .text("a < \"b\" & c"), "flag": .bool(true)]
        XCTAssertEqual(try render("var x: {{type}}, {{{quote}}}, {{& quote}}, {{ flag }}, <{{missing}}>", context),
                       "var x: [Animal], a < \"b\" & c, a < \"b\" & c, true, <>")
    }

    func testSectionsIterateListsAndNameLookupClimbsTheContext() throws {
        let context: [String: TemplateValue] = [
            "entity": .text("Zoo"),
            "items": .list([.object(["name": .text("a")]), .object(["name": .text("b"), "entity": .text("Inner")])]),
            "owner": .object(["address": .object(["city": .text("Oslo")])]),
        ]
        XCTAssertEqual(try render("{{#items}}{{entity}}.{{name}};{{/items}}", context), "Zoo.a;Inner.b;")
        XCTAssertEqual(try render("{{owner.address.city}}|{{#owner}}{{address.city}}{{/owner}}|{{owner.nothing.city}}", context), "Oslo|Oslo|")
        XCTAssertEqual(try render("{{#items}}{{#name}}<{{.}}>{{/name}}{{/items}}", context), "<a><b>")
    }

    func testFalseValuesAndEmptyListsSkipSectionsAndRenderInvertedOnes() throws {
        let context: [String: TemplateValue] = ["yes": .bool(true), "no": .bool(false), "none": .list([])]
        XCTAssertEqual(try render("{{#yes}}Y{{/yes}}{{#no}}N{{/no}}{{#none}}E{{/none}}{{#missing}}M{{/missing}}", context), "Y")
        XCTAssertEqual(try render("{{^yes}}Y{{/yes}}{{^no}}N{{/no}}{{^none}}E{{/none}}{{^missing}}M{{/missing}}", context), "NEM")
    }

    func testStandaloneTagLinesDisappearWithTheirLineBreak() throws {
        let context: [String: TemplateValue] = ["items": .list([.text("a"), .text("b")])]
        let template = "begin\n  {{#items}}\n    {{.}}\n  {{/items}}\r\n{{! a comment }}\n\t{{% PRAGMA }}  \nend {{#items}}{{.}}{{/items}}\n{{^items}}\n{{/items}}"
        XCTAssertEqual(try render(template, context), "begin\n    a\n    b\nend ab\n")
        // A tag sharing its line with text or another tag is not standalone: the line stays.
        XCTAssertEqual(try render(" {{#items}}{{.}}{{/items}} \n", context), " ab \n")
        XCTAssertEqual(try render("x {{! note }}\n", context), "x \n")
    }

    func testMalformedTemplatesFailWithTheLineAndColumnOfTheTag() {
        let cases: [(String, String, Int, Int)] = [
            ("a\n  {{#entities}}\n", "{{#entities}} is never closed: add {{/entities}}", 2, 3),
            ("{{#a}}\n{{/b}}", "{{/b}} does not close {{#a}} opened at 1:1", 2, 1),
            ("x {{/a}}", "{{/a}} closes no section", 1, 3),
            ("é {{name", "{{ is never closed with }}", 1, 3),
            ("{{{name}}", "{{{ is never closed with }}}", 1, 1),
            ("{{}}", "empty tag {{}}: name a value", 1, 1),
            ("{{> header}}", "partials ({{>header}}) are not supported: a template is one file", 1, 1),
            ("{{=<% %>=}}", "changing delimiters ({{=…=}}) is not supported", 1, 1),
            ("{{a..b}}", "'a..b' is not a name: use letters, digits and '_', dotted for members", 1, 1),
        ]
        for (template, message, line, column) in cases {
            XCTAssertThrowsError(try MustacheTemplate(template), template) { error in
                let parseError = error as? MustacheTemplate.ParseError
                XCTAssertEqual(parseError?.message, message, template)
                XCTAssertEqual(parseError.map { [$0.line, $0.column] }, [line, column], template)
            }
        }
    }

    func testABrokenTemplateOverrideIsALocatedDiagnosticAndNoFiles() throws {
        let schema = Array("schema: S\nentities:\n  A:\n    attributes:\n      name: String\n".utf8)
        let broken = ModelGen.generate(path: "S.yaml", bytes: schema, modelsTemplate: TemplateFile(path: "T/Models.swift.mustache", text: "x\n{{#entities}}\n"))
        XCTAssertEqual(broken.files, [])
        XCTAssertEqual(broken.diagnostics.map(\.description),
                       ["T/Models.swift.mustache:2:1: error: cannot parse the Models.swift.mustache template: {{#entities}} is never closed: add {{/entities}}"])
        let custom = ModelGen.generate(path: "S.yaml", bytes: schema, modelsTemplate: TemplateFile(path: "T", text: "{{#entities}}{{swiftName}}:{{#attributes}}{{name}}{{/attributes}}{{/entities}}"))
        XCTAssertEqual(custom.files.first { $0.name == "S+Models.swift" }?.contents, "A:name")
    }
}
