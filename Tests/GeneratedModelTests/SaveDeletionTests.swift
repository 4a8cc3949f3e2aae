import Foundation
@_spi(Backend) import ModelGenRuntime
import ModelGenPostgres
import ModelGenTestSupport
import XCTest

/// A save deletes its objects together, whatever order the app deleted them in (`SPEC.md` §3: a
/// `deny` relationship refuses only when it refers to an object that survives the save), on both
/// backends: random saves of the Lending schema delete authors (cascading to their books, which
/// deny deletion while on loan), books, loans and readers in a random order, beside a change
/// kept through a refusal. A save is refused exactly when a deleted book keeps a loan the save
/// does not delete, and then changes nothing; the app then deletes those loans too and saves
/// again in the same context, which must write everything. The store is checked against a model
/// after every save.
extension BothBackendsTests {
    func testASaveDecidesItsDeletionsTogetherInAnyOrder() async throws {
        try await onBothBackends(Lending.self, seeds: UInt64(1)...6, deleteTogether)
    }

    /// The Lending data by name: each book's author, each loan's book, each reader's books.
    private struct Library: Equatable {
        var authors: Set<String> = []
        var books: [String: String?] = [:]
        var loans: [String: String] = [:]
        var readers: [String: Set<String>] = [:]
    }

    private func deleteTogether(seed: UInt64, on flow: SeedFlowBackend) async throws {
        var random = SeededRandom(seed: seed)
        var model = Library()
        var counter = 0
        func name(_ prefix: String) -> String { counter += 1; return "\(prefix)\(counter)" }
        func stored() async throws -> Library {
            let reader = flow.makeContext()
            let books = try await reader.fetch(FetchDescriptor<Book>()), loans = try await reader.fetch(FetchDescriptor<Loan>())
            let readers = try await reader.fetch(FetchDescriptor<Reader>())
            try await reader.load(\.author, of: books)
            try await reader.load(\.book, of: loans)
            try await reader.load(\.books, of: readers)
            return Library(authors: Set(try await reader.fetch(FetchDescriptor<Author>()).map(\.name)),
                           books: Dictionary(uniqueKeysWithValues: books.map { ($0.title, $0.author?.name) }),
                           loans: Dictionary(uniqueKeysWithValues: loans.map { ($0.borrower, $0.book?.title ?? "-") }),
                           readers: Dictionary(uniqueKeysWithValues: readers.map { ($0.name, Set($0.books.map(\.title))) }))
        }
        for round in 0..<10 {
            let context = flow.makeContext()
            // Top up: authors with books, books on loan, readers reading some of them.
            var books = try await context.fetch(FetchDescriptor<Book>())
            while model.authors.count < 3 {
                let author = Author(name: name("a"))
                context.insert(author)
                model.authors.insert(author.name)
                for _ in 0..<Int.random(in: 0...3, using: &random) {
                    let book = Book(title: name("b"))
                    book.author = author
                    books.append(book)
                    model.books[book.title] = author.name
                }
            }
            if Bool.random(using: &random) {
                let book = Book(title: name("b"))
                context.insert(book)
                books.append(book)
                model.books[book.title] = .some(nil)
            }
            for book in books where Int.random(in: 0..<3, using: &random) == 0 {
                let loan = Loan(borrower: name("l"))
                loan.book = book
                context.insert(loan)
                model.loans[loan.borrower] = book.title
            }
            while model.readers.count < 3 {
                let reader = Reader(name: name("r"))
                reader.books = books.filter { _ in Bool.random(using: &random) }
                context.insert(reader)
                model.readers[reader.name] = Set(reader.books.map(\.title))
            }
            try await context.save()

            // Deletions of every kind, in a random order, and a reader renamed.
            var authorsByName: [String: Author] = [:], booksByTitle: [String: Book] = [:], loansByBorrower: [String: Loan] = [:]
            var readersByName: [String: Reader] = [:]
            for author in try await context.fetch(FetchDescriptor<Author>()) { authorsByName[author.name] = author }
            for book in try await context.fetch(FetchDescriptor<Book>()) { booksByTitle[book.title] = book }
            for loan in try await context.fetch(FetchDescriptor<Loan>()) { loansByBorrower[loan.borrower] = loan }
            for reader in try await context.fetch(FetchDescriptor<Reader>()) { readersByName[reader.name] = reader }
            let deletedAuthors = Set(authorsByName.keys.filter { _ in Int.random(in: 0..<3, using: &random) == 0 })
            let deletedBooks = Set(booksByTitle.keys.filter { _ in Int.random(in: 0..<5, using: &random) == 0 })
            let deletedLoans = Set(loansByBorrower.keys.filter { _ in Bool.random(using: &random) })
            let deletedReaders = Set(readersByName.keys.filter { _ in Int.random(in: 0..<4, using: &random) == 0 })
            var deletions: [(String, any PersistentModel)] = deletedAuthors.map { ($0, authorsByName[$0]!) } + deletedBooks.map { ($0, booksByTitle[$0]!) }
                + deletedLoans.map { ($0, loansByBorrower[$0]!) } + deletedReaders.map { ($0, readersByName[$0]!) }
            deletions.sort { $0.0 < $1.0 }
            deletions.shuffle(using: &random)
            for (_, object) in deletions { context.delete(object) }
            var expected = model
            let renamed = model.readers.keys.sorted().filter { !deletedReaders.contains($0) }.randomElement(using: &random)
            if let renamed {
                readersByName[renamed]!.name = renamed + "'"
                expected.readers[renamed + "'"] = expected.readers.removeValue(forKey: renamed)
            }
            // The model: authors cascade to their books; a deleted book's loans must go too.
            let goneBooks = deletedBooks.union(model.books.filter { $0.value.map(deletedAuthors.contains) == true }.keys)
            let blockers = Set(model.loans.filter { goneBooks.contains($0.value) && !deletedLoans.contains($0.key) }.keys)
            for author in deletedAuthors { expected.authors.remove(author) }
            for book in goneBooks { expected.books[book] = nil }
            for loan in deletedLoans.union(blockers) { expected.loans[loan] = nil }
            for reader in deletedReaders { expected.readers[reader] = nil }
            for reader in expected.readers.keys { expected.readers[reader]!.subtract(goneBooks) }
            let trail = "\(flow.name), seed \(seed), round \(round): delete \(deletions.map(\.0)), rename \(renamed ?? "none"), blockers \(blockers.sorted())"
            do {
                try await context.save()
                XCTAssertTrue(blockers.isEmpty, "\(trail): saved, though deleted books keep loans")
            } catch {
                XCTAssertFalse(blockers.isEmpty, "\(trail): refused: \(error)")
                XCTAssertTrue(error is DeletionRefused || error is PostgresDeletionRefused, "\(trail): \(error)")
                try await assertEqual(await stored(), model, "\(trail): a refused save changes nothing")
                // The app deletes the loans in the way and saves again: everything it did is written.
                for loan in blockers.sorted() { context.delete(loansByBorrower[loan]!) }
                do {
                    try await context.save()
                } catch {
                    XCTFail("\(trail): the save after deleting the blockers threw \(error)")
                }
            }
            model = expected
            try await assertEqual(await stored(), model, trail)
            if testRun?.failureCount ?? 0 > 0 { return }
        }
    }
}
