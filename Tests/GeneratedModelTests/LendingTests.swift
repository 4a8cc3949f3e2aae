import Foundation
import ModelGenRuntime
import XCTest

/// Refused deletes through the runtime, many-to-many membership, and deletion reports.
final class LendingTests: XCTestCase {
    func testARefusedSaveThrowsTheBlockersPathAndChangesNothing() throws {
        let container = try ModelContainer(for: Lending.self)
        let context = container.mainContext
        let author = Author(name: "Herbert")
        let dune = Book(title: "Dune")
        dune.author = author
        let loan = Loan(borrower: "Ann")
        loan.book = dune
        context.insert(author)
        try context.save()

        context.delete(author)
        XCTAssertThrowsError(try context.save()) { error in
            let refusal = error as? DeletionRefused
            XCTAssertEqual(refusal?.blockers.first?.path, "Author#1 → books (cascade) → Book#1")
            XCTAssertEqual(refusal?.description, "delete refused, nothing was changed:\n  Author#1 → books (cascade) → Book#1 cannot be deleted: Book.loans (deny) still refers to Loan#1, which would survive")
        }
        let reader = ModelContext(container)
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor<Book>()), 1)
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor<Author>()), 1)
        XCTAssertTrue(dune.author === author, "memory is unchanged too")
        context.rollback()
        XCTAssertFalse(author.isDeleted)

        // Returning the book lets the author go.
        context.delete(loan)
        try context.save()
        context.delete(author)
        try context.save()
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor<Book>()), 0)
        XCTAssertNil(dune.modelContext)
    }

    func testManyToManyMembershipIsSavedAndItsJoinRowsRemovedOnDelete() throws {
        let container = try ModelContainer(for: Lending.self)
        let context = container.mainContext
        let first = Book(title: "First"), second = Book(title: "Second")
        let ann = Reader(name: "Ann")
        ann.books = [first, second]
        XCTAssertEqual(first.readers.map(\.name), ["Ann"], "the inverse is kept in sync in memory")
        context.insert(ann)
        try context.save()
        let reader = ModelContext(container)
        XCTAssertEqual(try reader.fetch(FetchDescriptor<Reader>()).first?.books.map(\.title).sorted(), ["First", "Second"])

        let dryRun = try context.delete(model: Book.self, where: #Predicate { $0.title == "First" }, dryRun: true)
        XCTAssertEqual(dryRun.deletedCount(of: "Book"), 1)
        XCTAssertEqual(dryRun.joinRowsRemoved, 1)
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Book>()), 2, "a dry run changes nothing")
        let report = try context.delete(model: Book.self, where: #Predicate { $0.title == "First" })
        XCTAssertEqual(report.deletedCount(of: "Book"), 1)
        XCTAssertEqual(ann.books.map(\.title), ["Second"], "memory follows the store after the delete")
    }
}
