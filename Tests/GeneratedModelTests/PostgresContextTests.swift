import Foundation
import ModelGenPostgres
import ModelGenRuntime
import ModelGenTestSupport
import PostgresNIO
import XCTest

/// The generated models on a real PostgreSQL server (`ModelGenPostgres`), the same classes the
/// SQLite tests use: values, relationships, fetches, saves and safe deletes.
final class PostgresContextTests: XCTestCase {
    /// In the server's default database and in one of a linguistic collation ("a" < "B" there, not
    /// in Swift): text compares and sorts by code point in both, as in SQLite (and as Swift's
    /// `String` does for the byte-faithful copies), before a save and after it.
    func testEveryValueReadsBackExactlyAndComparesAndSortsAsInSwift() async throws {
        for linguistic in [false, true] {
            try await PostgresTestServer.withClient(linguistic: linguistic) { client in
                try await self.checkValuesComparisonsAndSorts(client, linguistic: linguistic)
            }
        }
    }

    private func checkValuesComparisonsAndSorts(_ client: PostgresClient, linguistic: Bool) async throws {
        do {
            let container = try await PostgresModelContainer(for: Catalog.self, client: client)
            for seed in UInt64(1)...4 {
                var random = SeededRandom(seed: seed)
                let context = PostgresModelContext(container)
                let originals = (0..<40).map { _ in Sample.random(&random, withNUL: false, withNaN: false) }
                let dates = originals.map(\.date)
                for sample in originals { context.insert(sample) }
                let unsavedPivot = originals[Int.random(in: 0..<originals.count, using: &random)]
                // An unsaved object matches as its row will after the save: its date to the microsecond.
                let unsavedCopies = originals.map { original in
                    let copy = original.byteFaithfulCopy
                    copy.date = PostgresModelContainer.storedDate(copy.date)
                    return copy
                }
                for ((label, predicate), (_, oracle)) in zip(Sample.predicates(around: unsavedPivot), Sample.predicates(around: unsavedPivot.byteFaithfulCopy)) {
                    let fetched = Set(try await context.fetch(FetchDescriptor(predicate: predicate)).map(ObjectIdentifier.init))
                    let expected = Set(try zip(originals, unsavedCopies).filter { try oracle.evaluate($1) }.map { ObjectIdentifier($0.0) })
                    XCTAssertEqual(fetched, expected, "seed \(seed), linguistic \(linguistic), unsaved, \(label): PostgreSQL selects what Swift selects")
                }
                try await context.save()
                for (sample, date) in zip(originals, dates) {
                    XCTAssertLessThanOrEqual(abs(sample.date.timeIntervalSince(date)), 0.000_000_5 + abs(date.timeIntervalSinceReferenceDate) * 1e-15,
                                             "seed \(seed): a saved Date is its value to the nearest microsecond")
                }

                let reader = PostgresModelContext(container)
                let loaded = try await reader.fetch(FetchDescriptor<Sample>())
                let byID = Dictionary(uniqueKeysWithValues: loaded.map { ($0.persistentModelID, $0) })
                for original in originals {
                    XCTAssertEqual(byID[original.persistentModelID]?.exactSnapshot, original.exactSnapshot, "seed \(seed): a value changed on its way through PostgreSQL")
                }

                let pivot = originals[Int.random(in: 0..<originals.count, using: &random)]
                let copies = loaded.map(\.byteFaithfulCopy)
                for ((label, predicate), (_, oracle)) in zip(Sample.predicates(around: pivot), Sample.predicates(around: pivot.byteFaithfulCopy)) {
                    let fetched = Set(try await reader.fetch(FetchDescriptor(predicate: predicate)).map(\.persistentModelID))
                    let expected = Set(try zip(loaded, copies).filter { try oracle.evaluate($1) }.map(\.0.persistentModelID))
                    XCTAssertEqual(fetched, expected, "seed \(seed), linguistic \(linguistic), \(label): PostgreSQL selects what Swift selects")
                    try await assertEqual(await reader.fetchCount(FetchDescriptor(predicate: predicate)), expected.count, "seed \(seed), \(label): count")
                }
                try await assertEqual(await reader.fetch(FetchDescriptor<Sample>(sortBy: [SortDescriptor(\.text)])).map { Array($0.text.utf8) },
                                      loaded.map { Array($0.text.utf8) }.sorted { $0.lexicographicallyPrecedes($1) },
                                      "seed \(seed), linguistic \(linguistic): text sorts by code point, as SQLite sorts it")
                for (label, descriptor, expected) in Sample.optionalSorts(loaded) {
                    try await assertEqual(await reader.fetch(FetchDescriptor<Sample>(sortBy: [descriptor])).map(ObjectIdentifier.init), expected,
                                          "seed \(seed), linguistic \(linguistic): \(label)")
                }
                try await assertEqual(await reader.fetch(FetchDescriptor<Sample>(sortBy: [SortDescriptor(\.int32)])).map(\.int32), loaded.map(\.int32).sorted())
                try await assertEqual(await reader.fetch(FetchDescriptor<Sample>(sortBy: [SortDescriptor(\.double)])).map(\.double), loaded.map(\.double).sorted())
                try await assertEqual(await reader.fetch(FetchDescriptor<Sample>(sortBy: [SortDescriptor(\.date)])).map(\.date), loaded.map(\.date).sorted())
                try await assertEqual(await reader.fetch(FetchDescriptor<Sample>(sortBy: [SortDescriptor(\.amount, order: .reverse)])).map(\.amount),
                               loaded.map(\.amount).sorted(by: >), "seed \(seed): Decimal sorts by value")
                try await reader.delete(model: Sample.self)
            }
        }
    }

    func testAValueTheServerCannotHoldIsRefusedAndNothingIsSaved() async throws {
        try await PostgresTestServer.withClient { client in
            let container = try await PostgresModelContainer(for: Catalog.self, client: client)
            let context = PostgresModelContext(container)
            var random = SeededRandom(seed: 9)
            let fine = Sample.random(&random, withNUL: false, withNaN: false), nul = Sample.random(&random, withNUL: false, withNaN: false)
            /// The save is refused with `expected`, and the table stays empty.
            func assertSaveRefused(_ expected: ModelContextError, _ what: String) async throws {
                do {
                    try await context.save()
                    XCTFail("\(what) was saved")
                } catch let error as ModelContextError {
                    XCTAssertEqual(error, expected)
                }
                try await assertEqual(await client.scalar("SELECT count(*) FROM sample"), 0)
            }
            nul.text = "a\0b"
            context.insert(fine)
            context.insert(nul)
            try await assertSaveRefused(.unstorableValue(entity: "Sample", attribute: "text", reason: "PostgreSQL text cannot hold the NUL character (\\0); remove it or store the value as Data"),
                                        "text with a NUL character")
            XCTAssertNil(fine.persistentModelID.id, "a refused save gives no ids")
            nul.text = "a b"
            nul.price = .nan
            try await assertSaveRefused(.unstorableValue(entity: "Sample", attribute: "price", reason: "PostgreSQL orders NaN above every number, Swift orders Decimal.nan below them; store nil or a number"),
                                        "Decimal.nan")
            nul.price = nil
            nul.date = Date.distantPast.addingTimeInterval(-0.5)
            try await assertSaveRefused(.unstorableValue(entity: "Sample", attribute: "date", reason: "a Date outside the years 1 to 9999 (-63114076800.5 s since 2001), which this backend does not store"),
                                        "a Date before Date.distantPast")
            nul.date = .distantPast
            // A NaN the server cannot hold still selects as Swift does, in place of a missing decimal
            // too (more in BothBackendsTests), with these unsaved objects written for the fetch.
            let nan = Decimal.nan
            let found = try await context.fetch(FetchDescriptor<Sample>(predicate: #Predicate { ($0.price ?? nan) > 5 }))
            XCTAssertEqual(Set(found.map(ObjectIdentifier.init)), Set([fine, nul].filter { ($0.price ?? nan) > 5 }.map(ObjectIdentifier.init)))
            try await assertEqual(await client.scalar("SELECT count(*) FROM sample"), 0)
            nul.price = 1
            try await context.save()
            try await assertEqual(await client.scalar("SELECT count(*) FROM sample"), 2)
        }
    }

    /// A unique attribute's value too long for a B-tree entry (SQLite indexes any length): the save
    /// is refused naming the entity and what to do, and nothing is saved.
    func testAValueTooLongToIndexIsRefusedSayingWhy() async throws {
        try await PostgresTestServer.withClient { client in
            let container = try await PostgresModelContainer(for: Zoo.self, client: client)
            let context = PostgresModelContext(container)
            var random = SeededRandom(seed: 11)
            // Incompressible: a B-tree entry holds about 2,700 bytes once compressed.
            let long = String((0..<6_000).map { _ in Character(Unicode.Scalar(UInt8(33 + random.next() % 90))) })
            context.insert(AnimalCategory(name: "short"))
            context.insert(AnimalCategory(name: long))
            do {
                try await context.save()
                XCTFail("a value longer than an index entry was saved")
            } catch let error as ModelContextError {
                guard case let .constraintViolation(message) = error else { return XCTFail("\(error)") }
                XCTAssertTrue(message.contains("AnimalCategory is too long for PostgreSQL to index") && message.contains("drop `indexed`/`unique`"), message)
            }
            try await assertEqual(await client.scalar("SELECT count(*) FROM animal_category"), 0)
        }
    }

    func testRelationshipsLoadWhenAskedAndSaveFromEitherSide() async throws {
        try await PostgresTestServer.withClient { client in
            let container = try await PostgresModelContainer(for: Catalog.self, client: client)
            let context = PostgresModelContext(container)
            let boss = Employee(name: "boss", level: 3)
            let ann = Employee(name: "ann", level: 1), bob = Employee(name: "bob", level: 2)
            let sales = Department(title: "sales"), lab = Department(title: "lab")
            let apollo = Project(code: "apollo"), gemini = Project(code: "gemini")
            ann.manager = boss
            bob.manager = boss
            sales.staff = [ann, boss]
            bob.department = lab
            ann.projects = [apollo, gemini]
            gemini.members.append(bob)
            context.insert(boss)
            try await context.save()
            XCTAssertEqual(context.statementsExecuted, 1 + 2 * 3 + 1, "the keys deferred to the commit, ids and rows per entity, and the join rows")

            let reader = PostgresModelContext(container)
            var descriptor = FetchDescriptor<Employee>(sortBy: [SortDescriptor(\.name)])
            descriptor.relationshipKeyPathsForPrefetching = [\.manager, \.reports, \.department, \.projects]
            let people = try await reader.fetch(descriptor)
            XCTAssertEqual(people.map(\.name), ["ann", "bob", "boss"])
            let (readAnn, readBob, readBoss) = (people[0], people[1], people[2])
            XCTAssertTrue(readAnn.manager === readBoss)
            XCTAssertEqual(readBoss.reports.map(\.name), ["ann", "bob"])
            XCTAssertEqual(readAnn.department?.title, "sales")
            XCTAssertTrue(readAnn.department === readBoss.department, "one object per row")
            XCTAssertEqual(readAnn.projects.map(\.code).sorted(), ["apollo", "gemini"])
            XCTAssertEqual(readBob.projects.map(\.code), ["gemini"])
            try await reader.load(\.members, of: readBob.projects)
            XCTAssertEqual(readBob.projects[0].members.map(\.name).sorted(), ["ann", "bob"])

            // Moving through the to-many side of a to-one whose other side is not loaded.
            let departments = try await reader.fetch(FetchDescriptor<Department>(sortBy: [SortDescriptor(\.title)]))
            try await reader.load(\.staff, of: departments)
            let (readLab, readSales) = (departments[0], departments[1])
            readLab.staff.append(readAnn)
            XCTAssertEqual(readSales.staff.map(\.name), ["boss"], "the old department lets go in memory")
            readAnn.projects = [readAnn.projects.first { $0.code == "apollo" }!]
            try await reader.save()

            let third = PostgresModelContext(container)
            var check = FetchDescriptor<Department>(sortBy: [SortDescriptor(\.title)])
            check.relationshipKeyPathsForPrefetching = [\.staff]
            try await assertEqual(await third.fetch(check).map { $0.staff.map(\.name).sorted() }, [["ann", "bob"], ["boss"]])
            try await assertEqual(await client.scalar("SELECT count(*) FROM employee_projects"), 2, "ann left gemini; bob stays")
        }
    }

    /// A list replaced with its members never read holds, after the save, exactly the members it
    /// was given, through keys and through a join table: a member another context added to its
    /// owner in between goes too (the last save wins; SQLite, which reads the old members as the
    /// list is replaced, keeps it: README).
    func testAListReplacedUnreadHoldsExactlyItsNewMembersAfterTheSave() async throws {
        try await PostgresTestServer.withClient { client in
            let container = try await PostgresModelContainer(for: Catalog.self, client: client)
            let setup = PostgresModelContext(container)
            let sales = Department(title: "sales")
            let ann = Employee(name: "ann", level: 1), bob = Employee(name: "bob", level: 2)
            let apollo = Project(code: "apollo")
            sales.staff = [ann, bob]
            apollo.members = [ann, bob]
            setup.insert(sales)
            try await setup.save()

            let context = PostgresModelContext(container)
            let department = try await context.fetch(FetchDescriptor<Department>())[0]
            let project = try await context.fetch(FetchDescriptor<Project>())[0]
            let kept = try await context.fetch(FetchDescriptor<Employee>(predicate: #Predicate { $0.name == "bob" }))
            department.staff = kept
            project.members = kept

            let other = PostgresModelContext(container)
            let cid = Employee(name: "cid", level: 1)
            cid.department = try await other.fetch(FetchDescriptor<Department>())[0]
            cid.projects = try await other.fetch(FetchDescriptor<Project>())
            other.insert(cid)
            try await other.save()

            try await context.save()
            let reader = PostgresModelContext(container)
            var descriptor = FetchDescriptor<Employee>(sortBy: [SortDescriptor(\.name)])
            descriptor.relationshipKeyPathsForPrefetching = [\.department, \.projects]
            try await assertEqual(await reader.fetch(descriptor).map { "\($0.name):\($0.department?.title ?? "-"):\($0.projects.map(\.code))" },
                                  ["ann:-:[]", "bob:sales:[\"apollo\"]", "cid:-:[]"])
        }
    }

    /// A save refused for a unique value, then `rollback()`, the usual way a server turns a
    /// request away: the objects take their saved values again, and those whose attributes alone
    /// changed keep the relationships they had loaded (they used to forget them all, and reading
    /// one stopped the program). Objects whose relationships changed — set, or following a change
    /// of the other side — forget theirs, and load them again as the store holds them.
    func testARollbackKeepsTheRelationshipsOfObjectsWhoseRelationshipsDidNotChange() async throws {
        try await PostgresTestServer.withClient { client in
            let container = try await PostgresModelContainer(for: Catalog.self, client: client)
            let context = PostgresModelContext(container)
            let boss = Employee(name: "boss", level: 3), ann = Employee(name: "ann", level: 1), bob = Employee(name: "bob", level: nil)
            ann.manager = boss
            bob.manager = boss
            Department(title: "sales").staff = [ann, boss]
            bob.department = Department(title: "lab")
            ann.projects = [Project(code: "apollo"), Project(code: "gemini")]
            bob.projects = [ann.projects[1]]
            context.insert(boss)
            try await context.save()

            let reader = PostgresModelContext(container)
            var employeesRead = FetchDescriptor<Employee>(sortBy: [SortDescriptor(\.name)])
            employeesRead.relationshipKeyPathsForPrefetching = [\.manager, \.reports, \.department, \.projects]
            let people = try await reader.fetch(employeesRead)
            var departmentsRead = FetchDescriptor<Department>(sortBy: [SortDescriptor(\.title)])
            departmentsRead.relationshipKeyPathsForPrefetching = [\.staff]
            let departments = try await reader.fetch(departmentsRead)
            var projectsRead = FetchDescriptor<Project>(sortBy: [SortDescriptor(\.code)])
            projectsRead.relationshipKeyPathsForPrefetching = [\.members]
            let projects = try await reader.fetch(projectsRead)
            /// Every object's values and relationships, by name.
            func shown() -> [String] {
                people.map { "\($0.name) \($0.level.map(String.init) ?? "nil") manager \($0.manager?.name ?? "nil") reports \($0.reports.map(\.name).sorted()) "
                    + "department \($0.department?.title ?? "nil") projects \($0.projects.map(\.code).sorted())" }
                    + departments.map { "\($0.title ?? "nil") staff \($0.staff.map(\.name).sorted())" }
                    + projects.map { "\($0.code) members \($0.members.map(\.name).sorted())" }
            }
            let saved = shown()

            for person in people {
                person.name += "!"
                person.level = 7
            }
            departments[0].title = nil
            projects[0].code = "gemini"
            do {
                try await reader.save()
                XCTFail("two projects coded gemini were saved")
            } catch ModelContextError.uniqueViolation(entity: "Project", attribute: "code") {}
            reader.rollback()
            XCTAssertEqual(shown(), saved, "the saved values again, and every loaded relationship still readable")

            let (readAnn, readBob) = (people[0], people[1])
            readBob.department = departments[1]
            readAnn.projects = []
            projects[1].code = "mercury"
            reader.rollback()
            XCTAssertEqual(projects[1].code, "gemini")
            try await reader.load(\.department, of: people)
            try await reader.load(\.projects, of: people)
            try await reader.load(\.staff, of: departments)
            try await reader.load(\.members, of: projects)
            XCTAssertEqual(shown(), saved, "the relationships that changed, loaded again as the store holds them")
        }
    }

    /// Changes to an object whose row another session deleted have nowhere to go: the save throws,
    /// naming the object, and writes nothing.
    func testChangesToAnObjectDeletedElsewhereAreRefusedNotLost() async throws {
        try await PostgresTestServer.withClient { client in
            let container = try await PostgresModelContainer(for: Catalog.self, client: client)
            let setup = PostgresModelContext(container)
            setup.insert(Employee(name: "ann"))
            setup.insert(Employee(name: "bob"))
            try await setup.save()
            let context = PostgresModelContext(container)
            let staff = try await context.fetch(FetchDescriptor<Employee>(sortBy: [SortDescriptor(\.name)]))
            try await PostgresModelContext(container).delete(model: Employee.self, where: #Predicate { $0.name == "ann" })
            staff[0].level = 3
            staff[1].level = 4
            let annID = try XCTUnwrap(staff[0].persistentModelID.id)
            do {
                try await context.save()
                XCTFail("the save wrote the changes of a deleted row into nothing")
            } catch {
                XCTAssertEqual(error as? ModelContextError, .deletedFromStore(entity: "Employee", id: annID))
            }
            XCTAssertTrue(context.hasChanges, "the changes are still the context's, to roll back or redo")
            try await assertEqual(await client.scalar("SELECT count(*) FROM employee WHERE level IS NOT NULL"), 0, "bob's change was not written either")
        }
    }

    /// An error of the server that has no type of its own (here: tables renamed behind the
    /// container's back) reaches the app from every operation as `PostgresDatabaseError`, with the
    /// server's message and SQLSTATE, not as PostgresNIO's "Generic description".
    func testAnyOtherServerErrorSaysWhatTheServerSaid() async throws {
        try await PostgresTestServer.withClient { client in
            let container = try await PostgresModelContainer(for: Catalog.self, client: client)
            let setup = PostgresModelContext(container)
            let ann = Employee(name: "ann")
            ann.projects = [Project(code: "apollo")]
            setup.insert(ann)
            try await setup.save()
            let id = ann.persistentModelID
            let context = PostgresModelContext(container)
            let people = try await context.fetch(FetchDescriptor<Employee>())
            _ = try await client.query("ALTER TABLE employee_projects RENAME TO employee_projects_elsewhere").collect()
            _ = try await client.query("ALTER TABLE employee RENAME TO employee_elsewhere").collect()
            func assertServerError(_ operation: String, _ body: () async throws -> Void, relation: String = "employee") async {
                do {
                    try await body()
                    XCTFail("\(operation) ran on a table that is gone")
                } catch let error as PostgresDatabaseError {
                    XCTAssertEqual(error.sqlState, "42P01", operation)
                    XCTAssertTrue("\(error)".contains("relation \"\(relation)\" does not exist"), "\(operation): \(error)")
                } catch {
                    XCTFail("\(operation) threw \(String(reflecting: error)), not a PostgresDatabaseError")
                }
            }
            await assertServerError("fetch") { _ = try await PostgresModelContext(container).fetch(FetchDescriptor<Employee>()) }
            await assertServerError("fetchCount") { _ = try await PostgresModelContext(container).fetchCount(FetchDescriptor<Employee>()) }
            await assertServerError("model(for:)") { _ = try await PostgresModelContext(container).model(for: id) }
            await assertServerError("load", { try await context.load(\Employee.projects, of: people) }, relation: "employee_projects")
            await assertServerError("delete") { _ = try await PostgresModelContext(container).delete(model: Employee.self) }
            await assertServerError("save") {
                let writer = PostgresModelContext(container)
                writer.insert(Employee(name: "bob"))
                try await writer.save()
            }
            await assertServerError("deleteAllData", { try await container.deleteAllData() }, relation: "employee_projects")
        }
    }

    func testFetchesSeeUnsavedChangesAndTheStoreNeverHoldsThem() async throws {
        try await PostgresTestServer.withClient { client in
            let container = try await PostgresModelContainer(for: Catalog.self, client: client)
            let context = PostgresModelContext(container)
            let saved = Employee(name: "saved", level: 1), gone = Employee(name: "gone", level: 1)
            context.insert(saved)
            context.insert(gone)
            try await context.save()
            let new = Employee(name: "new", level: 1)
            context.insert(new)
            saved.level = 2
            context.delete(gone)
            let levelOne = try await context.fetch(FetchDescriptor<Employee>(predicate: #Predicate { $0.level == 1 }))
            XCTAssertEqual(levelOne.map(\.name), ["new"], "the inserted one matches, the changed and the deleted ones do not")
            XCTAssertTrue(levelOne.first === new)
            XCTAssertNil(new.persistentModelID.id, "the fetch gave no id for good")
            try await assertEqual(await context.fetchCount(FetchDescriptor<Employee>()), 2)
            var stored = FetchDescriptor<Employee>()
            stored.includePendingChanges = false
            try await assertEqual(await context.fetchCount(stored), 2)
            try await assertEqual(await client.scalar("SELECT count(*) FROM employee WHERE level = 2"), 0, "nothing unsaved reached the store")
            try await context.save()
            try await assertEqual(await client.scalar("SELECT count(*) FROM employee"), 2)
            XCTAssertNil(gone.modelContext)
        }
    }

    func testARefusedDeleteChangesNothingAndADryRunReportsTheRealRun() async throws {
        try await PostgresTestServer.withClient { client in
            let container = try await PostgresModelContainer(for: Lending.self, client: client)
            let context = PostgresModelContext(container)
            let author = Author(name: "Herbert")
            let dune = Book(title: "Dune"), children = Book(title: "Children of Dune")
            author.books = [dune, children]
            let loan = Loan(borrower: "Ann")
            loan.book = dune
            let reader = Reader(name: "Ann")
            reader.books = [dune, children]
            context.insert(author)
            context.insert(reader)
            try await context.save()

            context.delete(author)
            do {
                try await context.save()
                XCTFail("the loan's deny rule let the author go")
            } catch let refusal as PostgresDeletionRefused {
                XCTAssertEqual(refusal.entity, "Author")
                XCTAssertTrue(refusal.message.contains("Book.loans (deny) still refers to Loan#"), refusal.message)
            }
            try await assertEqual(await client.scalar("SELECT count(*) FROM book"), 2, "a refused delete changes nothing")
            context.rollback()

            let dryRun = try await context.delete(model: Book.self, where: #Predicate { $0.title.starts(with: "Children") }, dryRun: true)
            XCTAssertEqual(dryRun.deletedCount(of: "Book"), 1)
            XCTAssertTrue(dryRun.isDryRun)
            try await assertEqual(await client.scalar("SELECT count(*) FROM book"), 2, "a dry run changes nothing")
            let report = try await context.delete(model: Book.self, where: #Predicate { $0.title.starts(with: "Children") })
            XCTAssertEqual(report.json, dryRun.json.replacingOccurrences(of: "\"dryRun\": true", with: "\"dryRun\": false"))
            XCTAssertNil(children.modelContext, "the deleted object leaves the context")
            XCTAssertEqual(reader.books.map(\.title), ["Dune"], "loaded lists let it go")

            context.delete(loan)
            context.delete(author)
            try await context.save()
            try await assertEqual(await client.scalar("SELECT count(*) FROM book"), 0, "the author's books went with it")
            try await assertEqual(await client.scalar("SELECT count(*) FROM book_readers"), 0)
        }
    }

    func testUniqueViolationsAreTypedAndSavesTakeTheSameStatementsForAnyNumberOfObjects() async throws {
        try await PostgresTestServer.withClient { client in
            let container = try await PostgresModelContainer(for: Zoo.self, client: client)
            var counts: [Int] = []
            for size in [3, 300] {
                let context = PostgresModelContext(container)
                for index in 0..<size {
                    let category = AnimalCategory(name: "c\(size)-\(index)")
                    category.animals = [Animal(name: "a\(index)"), Animal(name: "b\(index)", diet: .omnivorous)]
                    context.insert(category)
                }
                try await context.save()
                let before = context.statementsExecuted
                for category in try await context.fetch(FetchDescriptor<AnimalCategory>(predicate: #Predicate { $0.name.starts(with: "c\(size)-") })) {
                    category.name += "!"
                }
                try await context.save()
                counts.append(context.statementsExecuted)
                XCTAssertEqual(context.statementsExecuted - before, 4, "one fetch; the keys deferred, the names given up set aside, one UPDATE")
            }
            XCTAssertEqual(counts[0], counts[1], "statements per save do not grow with the objects")

            let context = PostgresModelContext(container)
            context.insert(AnimalCategory(name: "c3-0!"))
            do {
                try await context.save()
                XCTFail("a duplicate unique name was saved")
            } catch let error as ModelContextError {
                XCTAssertEqual(error, .uniqueViolation(entity: "AnimalCategory", attribute: "name"))
            }
        }
    }

    /// The README's example on PostgreSQL, as written there but for the client's address.
    func testTheREADMEExampleRuns() async throws {
        try await PostgresTestServer.withClient { client in
            let container = try await PostgresModelContainer(for: Zoo.self, client: client)
            let context = PostgresModelContext(container)

            let mammal = AnimalCategory(name: "Mammal")
            for name in ["Lion", "Zebra"] {
                let animal = Animal(name: name, diet: name == "Lion" ? .carnivorous : .herbivorous)
                animal.category = mammal
                context.insert(animal)
            }
            try await context.save()

            let carnivorous = Diet.carnivorous
            let hunters = try await context.fetch(FetchDescriptor<Animal>(predicate: #Predicate { $0.diet == carnivorous }, sortBy: [SortDescriptor(\.name)]))
            XCTAssertEqual(hunters.map(\.name), ["Lion"])

            context.delete(mammal)
            try await context.save()
            try await assertEqual(await context.fetchCount(FetchDescriptor<Animal>()), 0)
        }
    }

    func testAContainerChecksTheSchemaTheDatabaseRecords() async throws {
        try await PostgresTestServer.withClient { client in
            // Two servers starting at once: one creates the schema, the other finds it.
            async let first = PostgresModelContainer(for: Zoo.self, client: client)
            async let second = PostgresModelContainer(for: Zoo.self, client: client)
            _ = try await (first, second)
            do {
                _ = try await PostgresModelContainer(for: Lending.self, client: client)
                XCTFail("a database of another schema was used")
            } catch let error as PostgresModelContainerError {
                XCTAssertEqual(error, .storeHasOtherSchema(schema: "Lending", storedSchema: "Zoo"))
            }
        }
    }

    /// Rows written with explicit ids (an import, another program: the table's sequence does not
    /// know of them), anywhere in `Int64`, do not make later saves fail: random runs of such
    /// employees, some just ahead of the sequence, then saves of new employees, whose ids must
    /// pass over them; every save succeeds, the ids are distinct and ascend in the order of the
    /// inserts, and a new context reads what was saved.
    func testNewObjectsPassOverRowsWrittenWithExplicitIDs() async throws {
        try await PostgresTestServer.withClient { client in
            let container = try await PostgresModelContainer(for: Catalog.self, client: client)
            for seed in UInt64(1)...6 {
                var random = SeededRandom(seed: seed)
                _ = try await client.query("TRUNCATE employee_projects, employee RESTART IDENTITY CASCADE").collect()
                var names: Set<String> = []
                var explicit = Set((0..<Int.random(in: 1...40, using: &random)).map { _ in Int64.random(in: 1...30, using: &random) })
                explicit.formUnion([Int64.max, Int64.max - 1, -1, 0, Int64.min].filter { _ in Bool.random(using: &random) })
                for id in explicit.sorted() {
                    _ = try await client.query("INSERT INTO employee (id, name) VALUES (\(id), \("e\(id)"))").collect()
                    names.insert("e\(id)")
                }
                var next = 0
                for round in 0..<4 {
                    let context = PostgresModelContext(container)
                    let made = (0..<Int.random(in: 1...8, using: &random)).map { _ -> Employee in
                        next += 1
                        return Employee(name: "n\(next)")
                    }
                    for employee in made { context.insert(employee) }
                    try await context.save()
                    let ids = made.compactMap(\.persistentModelID.id)
                    XCTAssertEqual(ids, ids.sorted(), "seed \(seed), round \(round): ids ascend in the order of the inserts")
                    XCTAssertTrue(explicit.isDisjoint(with: ids), "seed \(seed), round \(round)")
                    names.formUnion(made.map(\.name))
                    let stored = try await PostgresModelContext(container).fetch(FetchDescriptor<Employee>())
                    XCTAssertEqual(Set(stored.map(\.name)), names, "seed \(seed), round \(round)")
                    XCTAssertEqual(Set(stored.map(\.persistentModelID)).count, stored.count, "seed \(seed), round \(round)")
                }
            }
        }
    }

}

extension Sample {
    /// Every stored value, bit for bit (PostgreSQL keeps the sign of a zero, unlike SQLite).
    var exactSnapshot: [String] {
        [Self.scalars(text), String(int), String(int64), String(int32), String(int16), String(double.bitPattern), String(float.bitPattern),
         String(flag), String(date.timeIntervalSinceReferenceDate.bitPattern), uuid.uuidString, bytes.base64EncodedString(),
         amount.description, link.absoluteString, tier.rawValue, note.map(Self.scalars) ?? "<nil>", price?.description ?? "<nil>"]
    }
}
