import Foundation
import ModelGenCore
import XCTest

/// The generated PostgreSQL functions under a concurrent writer, on a real server: a reference
/// inserted by another session while a delete runs must refuse the delete (or be counted), never be
/// removed by the database's own cascade behind the plan's back.
final class PostgreSQLConcurrencyTests: XCTestCase {
    private let schema = """
        schema: Race
        entities:
          Author:
            attributes:
              name: String
            relationships:
              books: { type: "[Book]", inverse: authors, deleteRule: deny }
              notes: { type: "[Note]", inverse: author, deleteRule: cascade }
          Book:
            attributes:
              title: String
            relationships:
              authors: { type: "[Author]", inverse: books }
          Note:
            attributes:
              text: String
            relationships:
              author: { type: Author, inverse: notes }
        """

    /// Waits until session B sleeps inside its transaction (so its insert is done and uncommitted).
    private func waitForTheWriter(_ url: String) throws {
        for _ in 0..<200 {
            let sleeping = try PostgresServer.psqlRaw(url, "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%pg_sleep(1.5)%' AND pid <> pg_backend_pid();")
            if sleeping.trimmingCharacters(in: .whitespacesAndNewlines) != "0" { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTFail("session B never reached its sleep")
    }

    /// Runs `body` once per deletion path, each time on a fresh PostgreSQL schema `schema` holding
    /// the tables and functions of `yaml` and the rows `rows` inserts.
    private func onEachPath(_ url: String, schema: String, yaml: String, rows: String, _ body: (_ path: (name: String, setting: String)) throws -> Void) throws {
        let compilation = TestSupport.compile(yaml)
        for path in PostgresServer.deletionPaths {
            try PostgresServer.psql(url, schema: schema, compilation.files[1].contents + "\n" + rows)
            try body(path)
        }
    }

    /// Session B runs `writer` in a transaction it keeps open a moment (it sleeps before it
    /// commits); once B sleeps, session A runs `delete`. Returns A's exit status, output and errors.
    private func race(_ url: String, schema: String, writer: String, delete: String) throws -> (status: Int32, output: String, error: String) {
        let writing = try PostgresServer.background(url, "SET search_path TO \(schema); BEGIN; \(writer) SELECT pg_sleep(1.5); COMMIT;")
        try waitForTheWriter(url)
        let deleting = try PostgresServer.background(url, "SET search_path TO \(schema); \(delete)")
        let outcome = deleting.finish()
        _ = writing.finish()
        return (outcome.status, outcome.standardOutput, outcome.standardError)
    }

    private func prepare(_ url: String) throws {
        let compilation = TestSupport.compile(schema, file: "Race.yaml")
        try PostgresServer.psql(url, schema: "mg_race", compilation.files[1].contents + """

            INSERT INTO author (id, name) VALUES (1, 'a');
            INSERT INTO book (id, title) VALUES (5, 'b');
            INSERT INTO note (id, text, author_id) VALUES (1, 'n', 1);
            """)
    }

    func testAReferenceCommittedWhileTheDeleteWaitsRefusesIt() throws {
        let url = try PostgresServer.requireURL()
        for path in PostgresServer.deletionPaths {
            try referenceCommittedWhileTheDeleteWaits(url, path)
        }
    }

    private func referenceCommittedWhileTheDeleteWaits(_ url: String, _ path: (name: String, setting: String)) throws {
        try prepare(url)
        // Session B links Author#1 to Book#5 (Author.books is deny) and commits a moment later;
        // session A deletes Author#1 meanwhile: it must wait for B's link, see it and refuse.
        let delete = try race(url, schema: "mg_race", writer: "INSERT INTO author_books (author_id, book_id) VALUES (1, 5);",
                              delete: "\(path.setting)SELECT author_safe_delete(ARRAY[1]::bigint[]);")
        XCTAssertNotEqual(delete.status, 0, "\(path.name): the delete went through although a committed reference denies it")
        XCTAssertTrue(delete.error.contains("Author.books (deny) still refers to Book#5, which would survive"), "\(path.name): \(delete.error)")
        XCTAssertEqual(try PostgresServer.psqlRaw(url, "SELECT count(*) FROM mg_race.author_books;").trimmingCharacters(in: .whitespacesAndNewlines), "1", "\(path.name): the link survives")
        XCTAssertEqual(try PostgresServer.psqlRaw(url, "SELECT count(*) FROM mg_race.author;").trimmingCharacters(in: .whitespacesAndNewlines), "1", path.name)
    }

    func testAChildInsertedWhileTheDeleteRunsIsCountedOrRefusedNeverLostSilently() throws {
        let url = try PostgresServer.requireURL()
        for path in PostgresServer.deletionPaths {
            try childInsertedWhileTheDeleteRuns(url, path)
        }
    }

    private func childInsertedWhileTheDeleteRuns(_ url: String, _ path: (name: String, setting: String)) throws {
        try prepare(url)
        // Session B adds a note to Author#1 (cascade) and commits while A's delete waits for it.
        let delete = try race(url, schema: "mg_race", writer: "INSERT INTO note (id, text, author_id) VALUES (2, 'late', 1);",
                              delete: "\(path.setting)SELECT author_safe_delete(ARRAY[1]::bigint[]);")
        let report = delete.output
        XCTAssertEqual(delete.status, 0, "\(path.name): \(delete.error)")
        XCTAssertTrue(report.contains("\"Note\": 2"), "\(path.name): both notes deleted and counted: \(report)")
        XCTAssertEqual(try PostgresServer.psqlRaw(url, "SELECT count(*) FROM mg_race.note;").trimmingCharacters(in: .whitespacesAndNewlines), "0", path.name)
    }

    /// Folders in a tree (Folder.children cascade to Document.pages cascade): another session moves
    /// Document#1 from Folder#1 to Folder#2 and commits while the delete of Folder#1 waits for it.
    /// The document and its page now belong to Folder#2: they survive and are not counted (as with
    /// PostgreSQL's own cascade), where a delete that locked what it had collected before took them.
    func testAChildMovedAwayWhileTheDeleteWaitsSurvivesWithItsChildren() throws {
        let url = try PostgresServer.requireURL()
        let yaml = """
            schema: Moves
            entities:
              Folder:
                attributes:
                  name: String
                relationships:
                  documents: { type: "[Document]", inverse: folder, deleteRule: cascade }
              Document:
                attributes:
                  title: String
                relationships:
                  folder: { type: Folder, inverse: documents }
                  pages: { type: "[Page]", inverse: document, deleteRule: cascade }
              Page:
                attributes:
                  number: Int
                relationships:
                  document: { type: Document, inverse: pages }
            """
        try onEachPath(url, schema: "mg_moves", yaml: yaml, rows: """
            INSERT INTO folder (id, name) VALUES (1, 'one'), (2, 'two');
            INSERT INTO document (id, title, folder_id) VALUES (1, 'moved', 1), (2, 'stays', 1);
            INSERT INTO page (id, number, document_id) VALUES (1, 1, 1), (2, 1, 2);
            """) { path in
            let delete = try race(url, schema: "mg_moves", writer: "UPDATE document SET folder_id = 2 WHERE id = 1;",
                                  delete: "\(path.setting)SELECT folder_safe_delete(ARRAY[1]::bigint[]);")
            let report = delete.output
            XCTAssertEqual(delete.status, 0, "\(path.name): \(delete.error)")
            XCTAssertTrue(report.contains("\"Document\": 1") && report.contains("\"Page\": 1") && report.contains("\"Folder\": 1"),
                          "\(path.name): the folder, the document that stayed and its page: \(report)")
            let left = try PostgresServer.psqlRaw(url, "SELECT (SELECT string_agg(id || ':' || folder_id, ',') FROM mg_moves.document) || ' ' || (SELECT string_agg(id::text, ',') FROM mg_moves.page);")
            XCTAssertEqual(left.trimmingCharacters(in: .whitespacesAndNewlines), "1:2 1", "\(path.name): the moved document and its page survive")
        }
    }

    /// The same race in a tree that cascades to itself (Folder.subfolders), which is collected by a
    /// recursive walk and locked afterwards: another session moves Folder#2 (with Folder#3 under it)
    /// from Folder#1 to Folder#9 while the delete of Folder#1 waits; #2 and #3 survive.
    func testASubtreeMovedAwayWhileTheDeleteWaitsSurvives() throws {
        let url = try PostgresServer.requireURL()
        let yaml = """
            schema: Tree
            entities:
              Folder:
                attributes:
                  name: String
                relationships:
                  parent: { type: Folder?, inverse: subfolders }
                  subfolders: { type: "[Folder]", inverse: parent, deleteRule: cascade }
            """
        try onEachPath(url, schema: "mg_tree", yaml: yaml, rows: """
            INSERT INTO folder (id, name, parent_id) VALUES (1, 'root', NULL), (9, 'other', NULL), (2, 'moved', 1), (3, 'under', 2), (4, 'stays', 1);
            """) { path in
            let delete = try race(url, schema: "mg_tree", writer: "UPDATE folder SET parent_id = 9 WHERE id = 2;",
                                  delete: "\(path.setting)SELECT folder_safe_delete(ARRAY[1]::bigint[]);")
            let report = delete.output
            XCTAssertEqual(delete.status, 0, "\(path.name): \(delete.error)")
            XCTAssertTrue(report.contains("\"Folder\": 2"), "\(path.name): Folder#1 and Folder#4 deleted and counted: \(report)")
            let left = try PostgresServer.psqlRaw(url, "SELECT string_agg(id || ':' || coalesce(parent_id::text, '-'), ',' ORDER BY id) FROM mg_tree.folder;")
            XCTAssertEqual(left.trimmingCharacters(in: .whitespacesAndNewlines), "2:9,3:2,9:-", "\(path.name): the moved subtree survives")
        }
    }

    /// A many-to-many cascade (Shelf.books, cascade) whose link another session deletes while the
    /// delete runs: the link is gone once that session commits, so the book it linked survives.
    /// Deleting a join row locks neither row it links; the delete locks the links it collected
    /// through, waits for the one being deleted, and finds it lost.
    func testALinkDeletedWhileTheDeleteRunsNoLongerCarriesTheCascade() throws {
        let url = try PostgresServer.requireURL()
        let yaml = """
            schema: Links
            entities:
              Shelf:
                attributes:
                  name: String
                relationships:
                  books: { type: "[Book]", inverse: shelves, deleteRule: cascade }
              Book:
                attributes:
                  title: String
                relationships:
                  shelves: { type: "[Shelf]", inverse: books }
            """
        try onEachPath(url, schema: "mg_links", yaml: yaml, rows: """
            INSERT INTO shelf (id, name) VALUES (1, 'one');
            INSERT INTO book (id, title) VALUES (5, 'unlinked meanwhile'), (6, 'stays linked');
            INSERT INTO book_shelves (shelf_id, book_id) VALUES (1, 5), (1, 6);
            """) { path in
            let delete = try race(url, schema: "mg_links", writer: "DELETE FROM book_shelves WHERE book_id = 5;",
                                  delete: "\(path.setting)SELECT shelf_safe_delete(ARRAY[1]::bigint[]);")
            let report = delete.output
            XCTAssertEqual(delete.status, 0, "\(path.name): \(delete.error)")
            XCTAssertTrue(report.contains("\"Book\": 1") && report.contains("\"Shelf\": 1"), "\(path.name): the shelf and the book still linked: \(report)")
            let left = try PostgresServer.psqlRaw(url, "SELECT (SELECT string_agg(id::text, ',' ORDER BY id) FROM mg_links.book) || ' ' || (SELECT count(*) FROM mg_links.book_shelves);")
            XCTAssertEqual(left.trimmingCharacters(in: .whitespacesAndNewlines), "5 0", "\(path.name): the book unlinked meanwhile survives")
        }
    }

    /// A refusal names each blocker with the cascade path a delete run after the other session's
    /// would name. Shelf#1 holds Book#1, whose part Book#2 has a review (deny); another session
    /// puts Book#2 on Shelf#1 too while the delete of Shelf#1 runs. The delete collected Book#2
    /// through Book#1 before that link was committed, waits for it, and refuses; the path it names
    /// is the one the store holds now, the shorter: `Shelf#1 → books (cascade) → Book#2`.
    func testABlockerReachedAnotherWayWhileTheDeleteWaitsIsNamedByThePathItHasNow() throws {
        let url = try PostgresServer.requireURL()
        let yaml = """
            schema: Parts
            entities:
              Shelf:
                attributes:
                  name: String
                relationships:
                  books: { type: "[Book]", inverse: shelves, deleteRule: cascade }
              Book:
                attributes:
                  title: String
                relationships:
                  shelves: { type: "[Shelf]", inverse: books }
                  whole: { type: Book?, inverse: parts }
                  parts: { type: "[Book]", inverse: whole, deleteRule: cascade }
                  reviews: { type: "[Review]", inverse: book, deleteRule: deny }
              Review:
                attributes:
                  text: String
                relationships:
                  book: { type: Book?, inverse: reviews }
            """
        try onEachPath(url, schema: "mg_parts", yaml: yaml, rows: """
            INSERT INTO shelf (id, name) VALUES (1, 'one');
            INSERT INTO book (id, title, whole_id) VALUES (1, 'whole', NULL), (2, 'part', 1);
            INSERT INTO book_shelves (book_id, shelf_id) VALUES (1, 1);
            INSERT INTO review (id, text, book_id) VALUES (1, 'kept', 2);
            """) { path in
            let delete = try race(url, schema: "mg_parts", writer: "INSERT INTO book_shelves (book_id, shelf_id) VALUES (2, 1);",
                                  delete: "\(path.setting)SELECT shelf_safe_delete(ARRAY[1]::bigint[]);")
            XCTAssertNotEqual(delete.status, 0, "\(path.name): the delete went through although Review#1 refers to Book#2")
            XCTAssertTrue(delete.error.contains("Shelf#1 → books (cascade) → Book#2 cannot be deleted: Book.reviews (deny) still refers to Review#1"),
                          "\(path.name): \(delete.error)")
            let left = try PostgresServer.psqlRaw(url, "SELECT (SELECT count(*) FROM mg_parts.book) || ' ' || (SELECT count(*) FROM mg_parts.book_shelves);")
            XCTAssertEqual(left.trimmingCharacters(in: .whitespacesAndNewlines), "2 2", "\(path.name): nothing changed")
        }
    }

    /// A required one-to-one whose key is on the deleted side (person.passport_id; Passport.holder is
    /// required): another session links Person#1 to Passport#7 while the delete of Person#1 runs.
    /// The delete waits for that row, sees the link and refuses (the passport would lose its required
    /// holder), changing nothing.
    func testARequiredOneToOneLinkedWhileTheDeleteWaitsRefusesIt() throws {
        let url = try PostgresServer.requireURL()
        let yaml = """
            schema: Identities
            entities:
              Person:
                attributes:
                  name: String
                relationships:
                  passport: { type: Passport?, inverse: holder }
              Passport:
                attributes:
                  number: String
                relationships:
                  holder: { type: Person, inverse: passport }
            """
        try onEachPath(url, schema: "mg_identities", yaml: yaml, rows: """
            INSERT INTO passport (id, number) VALUES (7, 'X7');
            INSERT INTO person (id, name) VALUES (1, 'ann');
            """) { path in
            let delete = try race(url, schema: "mg_identities", writer: "UPDATE person SET passport_id = 7 WHERE id = 1;",
                                  delete: "\(path.setting)SELECT person_safe_delete(ARRAY[1]::bigint[]);")
            XCTAssertNotEqual(delete.status, 0, "\(path.name): the delete went through although Passport#7 requires its holder")
            XCTAssertTrue(delete.error.contains("the required relationship Passport.holder of Passport#7 would be left empty"), "\(path.name): \(delete.error)")
            let left = try PostgresServer.psqlRaw(url, "SELECT string_agg(id || ':' || coalesce(passport_id::text, '-'), ',') FROM mg_identities.person;")
            XCTAssertEqual(left.trimmingCharacters(in: .whitespacesAndNewlines), "1:7", "\(path.name): nothing changed")
        }
    }

    /// A cascade through a key on the deleted row (Person.passport, no inverse, cascade: the key is
    /// person.passport_id): another session moves Person#1 from Passport#7 to Passport#8 while the
    /// delete of Person#1 runs. The delete waits for that row and cascades to Passport#8; Passport#7,
    /// unlinked meanwhile, survives.
    func testAKeyOnTheDeletedRowChangedWhileTheDeleteWaitsIsFollowedAsItIsNow() throws {
        let url = try PostgresServer.requireURL()
        let yaml = """
            schema: Badges
            entities:
              Person:
                attributes:
                  name: String
                relationships:
                  passport: { type: Passport?, deleteRule: cascade }
              Passport:
                attributes:
                  number: String
            """
        try onEachPath(url, schema: "mg_badges", yaml: yaml, rows: """
            INSERT INTO passport (id, number) VALUES (7, 'X7'), (8, 'X8');
            INSERT INTO person (id, name, passport_id) VALUES (1, 'ann', 7);
            """) { path in
            let delete = try race(url, schema: "mg_badges", writer: "UPDATE person SET passport_id = 8 WHERE id = 1;",
                                  delete: "\(path.setting)SELECT person_safe_delete(ARRAY[1]::bigint[]);")
            XCTAssertEqual(delete.status, 0, "\(path.name): \(delete.error)")
            XCTAssertTrue(delete.output.contains("\"Passport\": 1") && delete.output.contains("\"Person\": 1"), "\(path.name): \(delete.output)")
            let left = try PostgresServer.psqlRaw(url, "SELECT coalesce((SELECT string_agg(id::text, ',') FROM mg_badges.person), '-') || ' ' || (SELECT string_agg(id::text, ',' ORDER BY id) FROM mg_badges.passport);")
            XCTAssertEqual(left.trimmingCharacters(in: .whitespacesAndNewlines), "- 7", "\(path.name): Passport#8 went with Person#1, Passport#7 survives")
        }
    }

    /// The child-moved race where the closure is not a tree of one-to-many cascades (a many-to-many
    /// cascade first: Author.books, then Book.notes): another session moves Note#3 from Book#5 (in
    /// the closure) to Book#9 (outside it) while the delete of Author#1 runs. Note#3 survives.
    func testAChildMovedAwayBehindAManyToManyCascadeSurvives() throws {
        let url = try PostgresServer.requireURL()
        let yaml = """
            schema: Notes
            entities:
              Author:
                attributes:
                  name: String
                relationships:
                  books: { type: "[Book]", inverse: authors, deleteRule: cascade }
              Book:
                attributes:
                  title: String
                relationships:
                  authors: { type: "[Author]", inverse: books }
                  notes: { type: "[Note]", inverse: book, deleteRule: cascade }
              Note:
                attributes:
                  text: String
                relationships:
                  book: { type: Book?, inverse: notes }
            """
        try onEachPath(url, schema: "mg_notes", yaml: yaml, rows: """
            INSERT INTO author (id, name) VALUES (1, 'a');
            INSERT INTO book (id, title) VALUES (5, 'deleted'), (9, 'survives');
            INSERT INTO author_books (author_id, book_id) VALUES (1, 5);
            INSERT INTO note (id, text, book_id) VALUES (3, 'moved', 5), (4, 'stays', 5);
            """) { path in
            let delete = try race(url, schema: "mg_notes", writer: "UPDATE note SET book_id = 9 WHERE id = 3;",
                                  delete: "\(path.setting)SELECT author_safe_delete(ARRAY[1]::bigint[]);")
            XCTAssertEqual(delete.status, 0, "\(path.name): \(delete.error)")
            XCTAssertTrue(delete.output.contains("\"Note\": 1"), "\(path.name): only the note that stayed: \(delete.output)")
            let left = try PostgresServer.psqlRaw(url, "SELECT string_agg(id || ':' || book_id, ',') FROM mg_notes.note;")
            XCTAssertEqual(left.trimmingCharacters(in: .whitespacesAndNewlines), "3:9", "\(path.name): the moved note survives")
        }
    }
}
