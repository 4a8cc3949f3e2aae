import ModelGenCore
import XCTest

/// `Lineage.match`, the identity of elements across versions, on histories written out: which
/// stored element each new one continues (by the stored one's name, or nil).
final class LineageTests: XCTestCase {
    /// `"name<-older<-oldest"` as an element.
    private func element(_ history: String) -> Lineage.Element {
        let names = history.components(separatedBy: "<-")
        return Lineage.Element(name: names[0], originalNames: Array(names.dropFirst()))
    }

    private func continued(_ stored: [String], _ current: [String]) -> [String?] {
        let old = stored.map(element)
        return Lineage.match(old: old, new: current.map(element)).continued.map { $0.map { old[$0].name } }
    }

    func testTheSameNameAndADeclaredOriginalName() {
        XCTAssertEqual(continued(["a", "b"], ["a", "b"]), ["a", "b"])
        XCTAssertEqual(continued(["title"], ["name<-title"]), ["title"])
        // Two renames at once: a store two versions old.
        XCTAssertEqual(continued(["heading"], ["name<-title<-heading"]), ["heading"])
        // An original name listed that no stored element has: a new element.
        XCTAssertEqual(continued(["a"], ["b<-c"]), [nil])
    }

    func testADeclarationComesBeforeTheSameName() {
        // Two elements exchange names.
        XCTAssertEqual(continued(["Alpha", "Beta"], ["Beta<-Alpha", "Alpha<-Beta"]), ["Alpha", "Beta"])
        // A name given up and taken by a new element.
        XCTAssertEqual(continued(["title"], ["name<-title", "title"]), ["title", nil])
    }

    func testTheLongestHistoryThatEndsAlikeIsTheClosest() {
        // The store at the version of the schema: each element continues itself.
        XCTAssertEqual(continued(["name<-title", "title"], ["name<-title", "title"]), ["name", "title"])
        // Names exchanged and exchanged back: a store of the version between.
        XCTAssertEqual(continued(["q<-p", "p<-q"], ["p<-q<-p", "q<-p<-q"]), ["q", "p"])
        XCTAssertEqual(continued(["p", "q"], ["p<-q<-p", "q<-p<-q"]), ["p", "q"])
    }

    func testHistoriesThatDisagreeDoNotLink() {
        // The stored a was first named a; the new a says it was b before.
        XCTAssertEqual(continued(["a"], ["a<-b"]), [nil])
        XCTAssertEqual(continued(["a<-c"], ["a<-b"]), [nil])
        // A schema that dropped its oldest original names still links.
        XCTAssertEqual(continued(["name<-title"], ["name"]), ["name"])
        XCTAssertEqual(continued(["b<-a"], ["c<-b"]), ["b"])
    }

    func testHistoriesThatEndAlikeAreAmbiguousAndTheFirstWins() {
        let old = [element("title")], new = [element("name<-title"), element("heading<-title")]
        let matches = Lineage.match(old: old, new: new)
        XCTAssertEqual(matches.continued, [0, nil])
        XCTAssertEqual(matches.ambiguous.map(\.old), [0])
        XCTAssertEqual(matches.ambiguous.map(\.new), [[0, 1]])
        // A declaration and the same name at equal length are not ambiguous.
        XCTAssertTrue(Lineage.match(old: old, new: [element("name<-title"), element("title")]).ambiguous.isEmpty)
    }
}
