import Foundation
import ModelGenPostgres
import ModelGenRuntime
import ModelGenTestSupport
import PostgresNIO
import XCTest

/// Many server tasks at once on one PostgreSQL database, each with contexts of its own, for a
/// bounded time: what they insert, fetch and delete (through the safe-deletion functions, some
/// refused by a deny rule) must leave no lost insert, no dangling reference, and every refused
/// delete must have changed nothing.
final class PostgresConcurrencyTests: XCTestCase {
    /// What the tasks say they did, checked against the database at the end.
    actor Ledger {
        var kept: Set<String> = []
        var gone: Set<String> = []
        var refusals = 0, deletions = 0, fetches = 0, retries = 0

        func inserted(_ names: [String]) { kept.formUnion(names) }
        func deleted(_ name: String) {
            kept.remove(name)
            gone.insert(name)
            deletions += 1
        }
        func refused() { refusals += 1 }
        func fetched() { fetches += 1 }
        func retried() { retries += 1 }
    }

    func testThirtyTwoTasksInsertFetchAndDeleteWithoutLosingOrDanglingAnything() async throws {
        try await PostgresTestServer.withClient { client in
            let container = try await PostgresModelContainer(for: Lending.self, client: client)
            // Readers every task links books to: their join rows are shared.
            let setup = PostgresModelContext(container)
            for index in 0..<4 { setup.insert(Reader(name: "reader\(index)")) }
            try await setup.save()
            let ledger = Ledger()
            let deadline = ContinuousClock.now + .seconds(3)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<32 {
                    group.addTask {
                        var random = SeededRandom(seed: UInt64(task + 1))
                        var mine: [(name: String, lent: Bool)] = []
                        var round = 0
                        while ContinuousClock.now < deadline {
                            round += 1
                            try await Self.retrying(ledger) {
                                switch Int.random(in: 0..<4, using: &random) {
                                case 0, 1:
                                    mine.append(try await Self.insertAuthor("t\(task)-\(round)", lent: Bool.random(using: &random), container))
                                    await ledger.inserted([mine.last!.name])
                                case 2:
                                    try await Self.checkAuthors(of: task, container)
                                    await ledger.fetched()
                                default:
                                    guard !mine.isEmpty else { return }
                                    let (name, lent) = mine.remove(at: Int.random(in: 0..<mine.count, using: &random))
                                    let deleted = try await Self.deleteAuthor(name, byPredicate: Bool.random(using: &random), container)
                                    XCTAssertEqual(deleted, !lent, "\(name): a lent book (deny) blocks the delete, and only that")
                                    if deleted { await ledger.deleted(name) } else { await ledger.refused() }
                                }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }

            let reader = PostgresModelContext(container)
            let names = Set(try await reader.fetch(FetchDescriptor<Author>()).map(\.name))
            let (kept, gone, refusals, deletions, fetches) = await (ledger.kept, ledger.gone, ledger.refusals, ledger.deletions, ledger.fetches)
            print("concurrency: \(kept.count) kept, \(deletions) deleted, \(refusals) refused, \(fetches) fetches, \(await ledger.retries) retries")
            XCTAssertEqual(names, kept, "every author inserted and not deleted is there, and only those")
            XCTAssertTrue(names.isDisjoint(with: gone))
            XCTAssertGreaterThan(refusals, 0, "some deletes were refused")
            XCTAssertGreaterThan(deletions, 0)
            XCTAssertGreaterThan(fetches, 0)
            try await assertEqual(await client.scalar("SELECT count(*) FROM book WHERE author_id IS NULL OR author_id NOT IN (SELECT id FROM author)"), 0, "no book outlived its author")
            try await assertEqual(await client.scalar("SELECT count(*) FROM book"), Int64(kept.count * 2), "every kept author has its two books")
            try await assertEqual(await client.scalar("SELECT count(*) FROM book_readers WHERE book_id NOT IN (SELECT id FROM book)"), 0)
            try await assertEqual(await client.scalar("SELECT count(*) FROM loan WHERE book_id NOT IN (SELECT id FROM book)"), 0)
        }
    }

    /// Runs `body` again after a serialization failure or a deadlock (what a server does).
    private static func retrying(_ ledger: Ledger, _ body: () async throws -> Void) async throws {
        for attempt in 1...5 {
            do {
                return try await body()
            } catch is PostgresRetryableError where attempt < 5 {
                await ledger.retried()
            }
        }
    }

    /// An author with two books, both read by a shared reader; with a loan of the first when `lent`.
    private static func insertAuthor(_ name: String, lent: Bool, _ container: PostgresModelContainer) async throws -> (String, Bool) {
        let context = PostgresModelContext(container)
        var readers = FetchDescriptor<Reader>(sortBy: [SortDescriptor(\.name)])
        readers.relationshipKeyPathsForPrefetching = [\.books]
        let shared = try await context.fetch(readers)
        let author = Author(name: name)
        author.books = [Book(title: name + "/1"), Book(title: name + "/2")]
        author.books[0].readers = [shared[name.utf8.reduce(0) { $0 &+ Int($1) } & 3]]
        if lent {
            let loan = Loan(borrower: "someone")
            loan.book = author.books[0]
        }
        context.insert(author)
        try await context.save()
        return (name, lent)
    }

    /// Every author of the task, with its books loaded: each book's author is that author.
    private static func checkAuthors(of task: Int, _ container: PostgresModelContainer) async throws {
        let context = PostgresModelContext(container)
        let prefix = "t\(task)-"
        var descriptor = FetchDescriptor<Author>(predicate: #Predicate { $0.name.starts(with: prefix) })
        descriptor.relationshipKeyPathsForPrefetching = [\.books]
        for author in try await context.fetch(descriptor) {
            XCTAssertEqual(author.books.count, 2, "\(author.name) has its two books")
            try await context.load(\.author, of: author.books)
            XCTAssertTrue(author.books.allSatisfy { $0.author === author })
        }
    }

    /// Deletes the author (by predicate, or by `delete` and `save`); false when refused, having
    /// checked that the refusal changed nothing.
    private static func deleteAuthor(_ name: String, byPredicate: Bool, _ container: PostgresModelContainer) async throws -> Bool {
        let context = PostgresModelContext(container)
        do {
            if byPredicate {
                let report = try await context.delete(model: Author.self, where: #Predicate { $0.name == name })
                XCTAssertEqual(report.deletedCount(of: "Book"), 2)
            } else {
                guard let author = try await context.fetch(FetchDescriptor<Author>(predicate: #Predicate { $0.name == name })).first else {
                    XCTFail("\(name) is gone before its delete")
                    return false
                }
                context.delete(author)
                try await context.save()
            }
            return true
        } catch is PostgresDeletionRefused {
            var descriptor = FetchDescriptor<Author>(predicate: #Predicate { $0.name == name })
            descriptor.relationshipKeyPathsForPrefetching = [\.books]
            let author = try await PostgresModelContext(container).fetch(descriptor).first
            XCTAssertEqual(author?.books.count, 2, "\(name): the refused delete changed nothing")
            return false
        }
    }

    /// Sixteen saves at once each add a player to a team that has room for one more
    /// (`maximumModelCount: 3`): the owner is locked before it is counted, so exactly one save
    /// passes and the others are refused (or retried), never leaving the team above its bound;
    /// without the lock each save counted only its own player and most of them passed.
    func testConcurrentSavesCannotTogetherExceedARelationshipsBound() async throws {
        try await PostgresTestServer.withClient { client in
            let container = try await PostgresModelContainer(for: Teams.self, client: client)
            let setup = PostgresModelContext(container)
            let team = Team(name: "Reds")
            team.players = [Player(name: "Ann"), Player(name: "Bo")]
            setup.insert(team)
            try await setup.save()
            let ledger = Ledger()
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for task in 0..<16 {
                    group.addTask {
                        var saved = false
                        try await Self.retrying(ledger) {
                            let context = PostgresModelContext(container)
                            let reds = try await context.fetch(FetchDescriptor<Team>(predicate: #Predicate { $0.name == "Reds" }))[0]
                            let player = Player(name: "new\(task)")
                            player.team = reds
                            context.insert(player)
                            do {
                                try await context.save()
                                saved = true
                            } catch let error as ModelContextError {
                                guard case .modelCountViolation = error else { throw error }
                            }
                        }
                        return saved
                    }
                }
                var savedCount = 0
                for try await saved in group where saved { savedCount += 1 }
                let retries = await ledger.retries
                XCTAssertEqual(savedCount, 1, "one save had room (\(retries) retried)")
            }
            let reader = PostgresModelContext(container)
            let count = try await reader.fetchCount(FetchDescriptor<Player>())
            XCTAssertEqual(count, 3, "the team holds at most 3 players")
        }
    }
}
