import Foundation
import ModelGenCore
import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// Property tests of the runtime on the Catalog schema and real SQLite files: random values of
/// every attribute type read back exactly and compare and sort as Swift's `==` and `<` do (text by
/// its code points: see `Sample.byteFaithfulCopy`), and random predicates (through any number of
/// to-one relationships) select exactly the objects that `Predicate.evaluate` selects in memory —
/// the same before a save (unsaved objects), after it, and with unsaved changes. Seeded: a failure
/// names its seed.
final class StorageAndPredicateTests: XCTestCase {
    private func container() throws -> ModelContainer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("modelgen-catalog-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        return try ModelContainer(for: Catalog.self, configurations: ModelConfiguration(url: directory.appendingPathComponent("catalog.sqlite")))
    }

    // MARK: - Values

    func testEveryValueReadsBackExactlyAndComparesAndSortsAsInSwift() throws {
        for seed in UInt64(1)...6 {
            var random = SeededRandom(seed: seed)
            let container = try container()
            let originals = (0..<40).map { _ in Sample.random(&random) }
            let unsavedPivot = originals[Int.random(in: 0..<originals.count, using: &random)]
            // Spellings of the pivot's text that Swift finds equal to it (its composed and
            // decomposed forms), in other samples: the store finds them different.
            unsavedPivot.text += ["é", "\u{212A}", "A\u{30A}"].randomElement(using: &random)!
            originals[0].text = unsavedPivot.text.decomposedStringWithCanonicalMapping
            originals[1].text = unsavedPivot.text.precomposedStringWithCanonicalMapping
            for sample in originals { container.mainContext.insert(sample) }
            // Before the save, the fetch matches the inserted objects by their values in memory.
            try assertAgrees(around: unsavedPivot, originals, container.mainContext, "seed \(seed), unsaved")
            try container.mainContext.save()

            let context = ModelContext(container)
            let loaded = try context.fetch(FetchDescriptor<Sample>())
            XCTAssertEqual(loaded.count, originals.count)
            for (original, copy) in zip(originals, loaded) {
                XCTAssertEqual(original.snapshot, copy.snapshot, "seed \(seed): a value changed on its way through SQLite")
            }

            let pivot = loaded[Int.random(in: 0..<loaded.count, using: &random)]
            try assertAgrees(around: pivot, loaded, context, "seed \(seed)")

            let texts = loaded.map { Array($0.text.utf8) }
            let sortedTexts = try context.fetch(FetchDescriptor<Sample>(sortBy: [SortDescriptor(\.text)])).map { Array($0.text.utf8) }
            XCTAssertEqual(sortedTexts, texts.sorted { $0.lexicographicallyPrecedes($1) }, "seed \(seed): text sorts by code point")
            for (label, descriptor, expected) in Sample.optionalSorts(loaded) {
                XCTAssertEqual(try context.fetch(FetchDescriptor<Sample>(sortBy: [descriptor])).map(ObjectIdentifier.init), expected, "seed \(seed): \(label)")
            }
            try assertSorted(\.int, loaded, context, seed)
            try assertSorted(\.int32, loaded, context, seed)
            try assertSorted(\.double, loaded, context, seed)
            try assertSorted(\.float, loaded, context, seed)
            try assertSorted(\.date, loaded, context, seed)
            try assertSorted(\.amount, loaded, context, seed)
            let descending = try context.fetch(FetchDescriptor<Sample>(sortBy: [SortDescriptor(\.amount, order: .reverse)])).map(\.amount)
            XCTAssertEqual(descending, loaded.map(\.amount).sorted(by: >), "seed \(seed): Decimal sorts by value")

            // Unsaved changes: the changed objects match by their values now.
            for sample in loaded where Int.random(in: 0..<3, using: &random) == 0 {
                let other = Sample.random(&random)
                (sample.text, sample.note) = Bool.random(using: &random) ? (other.text, other.note) : (pivot.text, pivot.note)
            }
            try assertAgrees(around: pivot, loaded, context, "seed \(seed), changed")
        }
    }

    func testNaNIsRefusedAndNothingIsSaved() throws {
        let container = try container()
        var random = SeededRandom(seed: 7)
        let sample = Sample.random(&random)
        sample.double = .nan
        container.mainContext.insert(sample)
        XCTAssertThrowsError(try container.mainContext.save()) { error in
            XCTAssertEqual(error as? ModelContextError, .unstorableValue(entity: "Sample", attribute: "double", reason: "NaN cannot be stored (SQLite would read it back as nil); store nil or a number"))
        }
        XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<Sample>()), 0)
    }

    // MARK: - Predicates through relationships

    func testPredicatesThroughRelationshipsSelectWhatSwiftSelects() throws {
        for seed in UInt64(1)...8 {
            var random = SeededRandom(seed: seed)
            let container = try container()
            let context = container.mainContext
            let titles: [String?] = ["Ops", "Lab", nil]
            let departments = (0..<3).map { _ in Department(title: titles.randomElement(using: &random)!) }
            var employees: [Employee] = []
            for _ in 0..<30 {
                let employee = Employee(name: ["ceo", "ann", "bob", ""].randomElement(using: &random)!, level: Bool.random(using: &random) ? Int.random(in: 0...5, using: &random) : nil)
                if !employees.isEmpty, Int.random(in: 0..<4, using: &random) > 0 { employee.manager = employees.randomElement(using: &random) }
                if Bool.random(using: &random) { employee.department = departments.randomElement(using: &random) }
                context.insert(employee)
                employees.append(employee)
            }
            try context.save()
            let fresh = ModelContext(container)
            let loaded = try fresh.fetch(FetchDescriptor<Employee>())
            // Each #Predicate beside the same condition written for `modelgen delete --where`: both
            // front ends lower to one QueryCondition, and must select what Predicate.evaluate selects.
            let predicates: [(String, Predicate<Employee>)] = [
                ("manager.manager.name == \"ceo\"", #Predicate { $0.manager?.manager?.name == "ceo" }),
                ("$0.manager?.manager?.name != \"ceo\"", #Predicate { $0.manager?.manager?.name != "ceo" }),
                ("manager?.department?.title == nil", #Predicate { $0.manager?.department?.title == nil }),
                ("manager.manager.manager.name == \"ceo\"", #Predicate { $0.manager?.manager?.manager?.name == "ceo" }),
                ("manager.name != \"ann\"", #Predicate { $0.manager?.name != "ann" }),
                ("department.title != \"Ops\"", #Predicate { $0.department?.title != "Ops" }),
                ("department.title == nil", #Predicate { $0.department?.title == nil }),
                ("manager.department.title == \"Ops\"", #Predicate { $0.manager?.department?.title == "Ops" }),
                ("manager == nil", #Predicate { $0.manager == nil }),
                ("manager.manager == nil", #Predicate { $0.manager?.manager == nil }),
                ("!(manager.name == \"bob\")", #Predicate { !($0.manager?.name == "bob") }),
                ("manager.level == nil", #Predicate { $0.manager?.level == nil }),
                ("manager.level != 3", #Predicate { $0.manager?.level != 3 }),
                ("(name == \"ann\" || manager.name == \"ann\") && department.title != nil",
                 #Predicate { ($0.name == "ann" || $0.manager?.name == "ann") && $0.department?.title != nil }),
                ("!(name.contains(\"o\")) || manager.name.hasPrefix(\"\")", #Predicate { !$0.name.contains("o") || $0.manager?.name != nil }),
            ] + Self.toManyPredicates
            for (whereText, predicate) in predicates {
                try assertAgrees(predicate, loaded, fresh, "seed \(seed), \(whereText)")
                try assertWhereAgrees(whereText, predicate, loaded, container)
            }
            try assertAgrees(#Predicate { ($0.level ?? 0) > 2 }, loaded, fresh, "seed \(seed), level ??")
        }
    }

    /// Through the reports (a to-many relationship) and in lists, each as `--where` writes it.
    private static let toManyPredicates: [(String, Predicate<Employee>)] = {
        let (names, levels): ([String], [Int?]) = (["ann", "bob"], [nil, 3])
        return [
            ("reports.isEmpty", #Predicate { $0.reports.isEmpty }), ("reports.count >= 2", #Predicate { $0.reports.count >= 2 }),
            ("reports.contains { name == \"ann\" }", #Predicate { $0.reports.contains { $0.name == "ann" } }),
            ("!reports.allSatisfy { $0.level != nil }", #Predicate { !$0.reports.allSatisfy { $0.level != nil } }),
            ("reports.contains { reports.contains { department.title == \"Ops\" } }",
             #Predicate { $0.reports.contains { $0.reports.contains { $0.department?.title == "Ops" } } }),
            ("[\"ann\", \"bob\"].contains(name) && !reports.isEmpty", #Predicate { names.contains($0.name) && !$0.reports.isEmpty }),
            ("[nil, 3].contains(level)", #Predicate { levels.contains($0.level) }),
            // Of an object a to-one relationship reaches: as #Predicate reads it with `== true`.
            ("manager.reports.count >= 2", #Predicate { ($0.manager?.reports.count ?? 0) >= 2 }),
            ("manager?.reports.count != 1", #Predicate { $0.manager?.reports.count != 1 }),
            ("manager.projects.count == 0", #Predicate { $0.manager?.projects.count == 0 }),
            ("manager.reports.isEmpty", #Predicate { $0.manager?.reports.isEmpty == true }),
            ("manager.reports.contains { name == \"ann\" }", #Predicate { $0.manager?.reports.contains { $0.name == "ann" } == true }),
            ("manager.reports.allSatisfy { level == nil }", #Predicate { $0.manager?.reports.allSatisfy { $0.level == nil } == true }),
            ("!manager.manager.reports.allSatisfy { name != \"bob\" }", #Predicate { !($0.manager?.manager?.reports.allSatisfy { $0.name != "bob" } == true) }),
        ]
    }()

    // MARK: - Unsaved changes

    func testObjectsThatBecomeRelatedToAnInsertedObjectAreInserted() throws {
        let container = try container()
        let context = container.mainContext
        let book = Manual(title: "Dune")
        context.insert(book)
        let first = Section(heading: "One")
        first.manual = book                       // the chapter is in no context yet
        book.sections.append(Section(heading: "Two"))
        try context.save()
        let saved = try context.fetch(FetchDescriptor<Manual>()).first
        let later = Section(heading: "Three")
        later.manual = saved                      // related to a registered object
        try context.save()

        let fresh = ModelContext(container)
        let chapters = try fresh.fetch(FetchDescriptor<Section>(sortBy: [SortDescriptor(\.heading)]))
        XCTAssertEqual(chapters.map(\.heading), ["One", "Three", "Two"])
        XCTAssertEqual(chapters.map { $0.manual?.title }, ["Dune", "Dune", "Dune"])
    }

    func testABulkDeleteKeepsUnsavedChangesOfOtherObjects() throws {
        let container = try container()
        let context = container.mainContext
        let ann = Employee(name: "ann"), apollo = Project(code: "apollo")
        let book = Manual(title: "Dune"), chapter = Section(heading: "One")
        chapter.manual = book
        context.insert(ann)
        context.insert(apollo)
        context.insert(book)
        try context.save()

        ann.projects = [apollo]
        ann.name = "Ann"
        chapter.heading = "Gone with its book"
        try context.delete(model: Manual.self)
        XCTAssertEqual(ann.projects.map(\.code), ["apollo"], "an unsaved relationship edit survives a delete(model:where:)")
        XCTAssertTrue(context.hasChanges)
        XCTAssertNil(chapter.modelContext, "the cascade removed the chapter's row")
        try context.save()

        let fresh = ModelContext(container)
        let saved = try XCTUnwrap(try fresh.fetch(FetchDescriptor<Employee>()).first)
        XCTAssertEqual(saved.name, "Ann")
        XCTAssertEqual(saved.projects.map(\.code), ["apollo"])
        XCTAssertEqual(try fresh.fetchCount(FetchDescriptor<Section>()), 0)
    }

    func testAStoreThatDoesNotMatchTheSchemaIsRefusedWithItsDifferences() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("modelgen-mismatch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("old.sqlite")
        try SQLiteDatabase(path: url.path).execute("CREATE TABLE project (id INTEGER PRIMARY KEY, code TEXT NOT NULL, budget REAL)")
        let before = try Data(contentsOf: url)
        XCTAssertThrowsError(try ModelContainer(for: Catalog.self, configurations: ModelConfiguration(url: url, usesWriteAheadLog: false))) { error in
            guard case let .storeDoesNotMatchSchema(_, _, differences)? = error as? ModelContainerError else { return XCTFail("\(error)") }
            XCTAssertTrue(differences.contains("table sample is missing"), "\(differences)")
            XCTAssertTrue(differences.contains("table project has a column budget the schema does not declare"), "\(differences)")
            XCTAssertTrue(differences.contains("table employee_projects is missing"), "\(differences)")
        }
        XCTAssertEqual(try Data(contentsOf: url), before, "a refused store is not changed")
    }

    // MARK: - Helpers

    /// Each predicate around `pivot` selects, from `objects` (all the samples `context` has), what
    /// the same predicate around the pivot's byte-faithful copy selects from theirs in Swift.
    private func assertAgrees(around pivot: Sample, _ objects: [Sample], _ context: ModelContext, _ label: String) throws {
        let copies = objects.map(\.byteFaithfulCopy)
        for ((name, predicate), (_, oracle)) in zip(Sample.predicates(around: pivot), Sample.predicates(around: pivot.byteFaithfulCopy)) {
            let fetched = try context.fetch(FetchDescriptor(predicate: predicate)).map(ObjectIdentifier.init)
            let expected = try zip(objects, copies).filter { try oracle.evaluate($1) }.map { ObjectIdentifier($0.0) }
            XCTAssertEqual(Set(fetched), Set(expected), "\(label), \(name): the store and Swift disagree")
            XCTAssertEqual(try context.fetchCount(FetchDescriptor(predicate: predicate)), expected.count, "\(label), \(name): count")
        }
    }

    private func assertAgrees<Model: PersistentModel>(_ predicate: Predicate<Model>, _ objects: [Model], _ context: ModelContext, _ label: String) throws {
        let fetched = try context.fetch(FetchDescriptor(predicate: predicate)).map(\.persistentModelID)
        let expected = try objects.filter { try predicate.evaluate($0) }.map(\.persistentModelID)
        XCTAssertEqual(fetched, expected, "\(label): SQL and Swift disagree")
        XCTAssertEqual(try context.fetchCount(FetchDescriptor(predicate: predicate)), expected.count, label)
    }

    /// `modelgen delete --where` text selects, on the same store, what the `#Predicate` selects.
    private func assertWhereAgrees(_ text: String, _ predicate: Predicate<Employee>, _ objects: [Employee], _ container: ModelContainer) throws {
        let schema = try XCTUnwrap(CatalogSchema.resolved)
        let entity = try XCTUnwrap(schema.entity(named: "Employee"))
        let condition = try WhereClauseTranslator.translate(text, entity: entity, schema: schema).get()
        var renderer = PredicateSQLRenderer(dialect: .sqlite, table: entity.tableName)
        let sql = "SELECT id FROM employee WHERE \(renderer.condition(condition)) ORDER BY id"
        let database = try SQLiteDatabase(path: try XCTUnwrap(container.configuration.url).path)
        let selected = try database.query(sql, renderer.bindings).compactMap { $0[0].integer }
        let expected = try objects.filter { try predicate.evaluate($0) }.compactMap(\.persistentModelID.id)
        XCTAssertEqual(selected, expected, "--where '\(text)' and its #Predicate disagree")
    }

    /// Catalog.yaml, resolved by the generator.
    private func assertSorted<Value: Comparable>(_ keyPath: KeyPath<Sample, Value> & Sendable, _ objects: [Sample], _ context: ModelContext, _ seed: UInt64) throws {
        let fetched = try context.fetch(FetchDescriptor<Sample>(sortBy: [SortDescriptor(keyPath)])).map { $0[keyPath: keyPath] }
        XCTAssertEqual(fetched, objects.map { $0[keyPath: keyPath] }.sorted(), "seed \(seed): sorting by \(keyPath) disagrees with Swift")
    }
}

extension Sample {
    /// Every stored value, bit for bit (the sign of a zero `Double`, `Float` or `Date` included).
    var snapshot: [String] {
        [Self.scalars(text), String(int), String(int64), String(int32), String(int16), String(double.bitPattern), String(float.bitPattern),
         String(flag), String(date.timeIntervalSinceReferenceDate.bitPattern), uuid.uuidString, bytes.base64EncodedString(),
         amount.description, link.absoluteString, tier.rawValue, note.map(Self.scalars) ?? "<nil>", price?.description ?? "<nil>"]
    }

    /// Sorts by optional attributes, each way, with the order of `objects` (every sample, in id
    /// order) that Foundation's `SortDescriptor` gives their byte-faithful copies: nil first going
    /// forward, ties in id order.
    static func optionalSorts(_ objects: [Sample]) -> [(label: String, descriptor: SortDescriptor<Sample>, expected: [ObjectIdentifier])] {
        let copies = objects.map(\.byteFaithfulCopy)
        let original = Dictionary(uniqueKeysWithValues: zip(copies, objects).map { (ObjectIdentifier($0), ObjectIdentifier($1)) })
        return [SortOrder.forward, .reverse].flatMap { order in
            [("note", SortDescriptor(\Sample.note, order: order)), ("price", SortDescriptor(\Sample.price, order: order))].map { name, descriptor in
                ("sorting by \(name) \(order)", descriptor, copies.sorted(using: descriptor).map { original[ObjectIdentifier($0)]! })
            }
        }
    }

    /// A text's code points, so that canonically equivalent texts (equal in Swift) differ.
    static func scalars(_ text: String) -> String {
        text.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " ")
    }

    /// A copy (in no context) whose texts hold one code point per UTF-8 byte of this sample's
    /// (U+0100 + the byte). The store compares, sorts and searches text by its bytes; Swift compares
    /// `String`s by canonical equivalence and searches them by `Character`, which differ for texts
    /// such as `"e\u{301}"` (equal to `"é"` in Swift) or `"\r\n"` (one `Character`). The copies'
    /// code points are each their own `Character` and normal form, in the order of the bytes, so
    /// `Predicate.evaluate` on copies selects what the store selects from the originals.
    var byteFaithfulCopy: Sample {
        func faithful(_ text: String) -> String {
            String(String.UnicodeScalarView(text.utf8.map { Unicode.Scalar(0x100 + UInt32($0))! }))
        }
        return Sample(text: faithful(text), int: int, int64: int64, int32: int32, int16: int16, double: double, float: float, flag: flag,
                      date: date, uuid: uuid, bytes: bytes, amount: amount, link: link, tier: tier, note: note.map(faithful), price: price)
    }

    /// Predicates of every shape the renderers write, on values of `pivot`, with a label each.
    static func predicates(around pivot: Sample) -> [(String, Predicate<Sample>)] {
        let (text, int, int16, double, float, date, amount, tier, note, price, bytes, uuid) =
            (pivot.text, pivot.int, pivot.int16, pivot.double, pivot.float, pivot.date, pivot.amount, pivot.tier, pivot.note, pivot.price, pivot.bytes, pivot.uuid)
        let (int32, int64, link) = (pivot.int32, pivot.int64, pivot.link)
        return [
            ("text ==", #Predicate { $0.text == text }), ("text <", #Predicate { $0.text < text }),
            ("text >=", #Predicate { $0.text >= text }), ("text != ", #Predicate { $0.text != text }),
            ("note >", #Predicate { ($0.note ?? "") > text }),
            ("int32 >", #Predicate { $0.int32 > int32 }), ("int64 <=", #Predicate { $0.int64 <= int64 }),
            ("float ==", #Predicate { $0.float == float }), ("double >=", #Predicate { $0.double >= double }),
            ("date >=", #Predicate { $0.date >= date }), ("uuid !=", #Predicate { $0.uuid != uuid }),
            ("link ==", #Predicate { $0.link == link }),
            ("int ==", #Predicate { $0.int == int }), ("int >", #Predicate { $0.int > int }),
            ("int16 <=", #Predicate { $0.int16 <= int16 }),
            ("double ==", #Predicate { $0.double == double }), ("double <", #Predicate { $0.double < double }),
            ("float >=", #Predicate { $0.float >= float }),
            ("date ==", #Predicate { $0.date == date }), ("date <", #Predicate { $0.date < date }),
            ("amount ==", #Predicate { $0.amount == amount }), ("amount >", #Predicate { $0.amount > amount }),
            ("amount <=", #Predicate { $0.amount <= amount }),
            ("tier ==", #Predicate { $0.tier == tier }),
            ("note ==", #Predicate { $0.note == note }), ("note !=", #Predicate { $0.note != note }),
            ("note == nil", #Predicate { $0.note == nil }),
            ("price ??", #Predicate { ($0.price ?? 0) < amount }), ("price !=", #Predicate { $0.price != price }),
            ("bytes ==", #Predicate { $0.bytes == bytes }), ("uuid ==", #Predicate { $0.uuid == uuid }),
            ("text contains", #Predicate { $0.text.contains(text) }),
            ("text starts", #Predicate { $0.text.starts(with: text) }),
            ("!flag", #Predicate { !$0.flag }),
            ("flag || int", #Predicate { $0.flag || !($0.int < int) }),
        ] + membershipPredicates(around: pivot)
    }

    /// `collection.contains($0.attribute)` on lists of values of `pivot` and edge values, nil, NaN, an
    /// empty `Data`, a date between two microseconds (PostgreSQL holds none such), `Date.distantPast`
    /// and `distantFuture`, one after the year 9999 (nor that), and an empty list; `range.contains`
    /// on captured and built ranges around them; `isEmpty`.
    static func membershipPredicates(around pivot: Sample) -> [(String, Predicate<Sample>)] {
        let texts = [pivot.text, pivot.note ?? "", ""], notes = [pivot.note, nil], nothing: [String] = []
        let (ints, int16s, int64s) = ([pivot.int, 0, -1], [pivot.int16, 1], [pivot.int64, .min])
        let (doubles, floats) = ([pivot.double, 0, .infinity, .nan], [pivot.float, -0.0, .nan])
        let dates = [pivot.date, pivot.date.addingTimeInterval(0.000_000_4), Date(timeIntervalSinceReferenceDate: 0), .distantPast, .distantFuture,
                     Date(timeIntervalSinceReferenceDate: 1e12)]
        let (amounts, tiers, prices) = ([pivot.amount, 1], [pivot.tier, .gold], [pivot.price, nil])
        let (bytes, uuids, links) = ([pivot.bytes, Data()], [pivot.uuid], [pivot.link])
        // Longer than a statement's list of parameters holds (one array parameter), with texts that JSON and PostgreSQL's arrays escape.
        let manyTexts = [pivot.text] + (0..<150).map { "x\($0)\"\\\n\u{7}" }, manyInts = [pivot.int] + (0..<150).map { $0 - 75 }
        let manyUUIDs = [pivot.uuid] + (0..<150).map { UUID(uuidString: String(format: "E621E1F8-C36C-495A-93FC-%012X", $0))! }
        return [
            ("texts.contains", #Predicate { texts.contains($0.text) }), ("!texts.contains", #Predicate { !texts.contains($0.text) }),
            ("notes.contains", #Predicate { notes.contains($0.note) }), ("[].contains", #Predicate { nothing.contains($0.text) }),
            ("ints.contains", #Predicate { ints.contains($0.int) }), ("int16s.contains", #Predicate { int16s.contains($0.int16) }),
            ("int64s.contains", #Predicate { int64s.contains($0.int64) }), ("doubles.contains", #Predicate { doubles.contains($0.double) }),
            ("floats.contains", #Predicate { floats.contains($0.float) }), ("dates.contains", #Predicate { dates.contains($0.date) }),
            ("amounts.contains", #Predicate { amounts.contains($0.amount) }), ("tiers.contains", #Predicate { tiers.contains($0.tier) }),
            ("prices.contains", #Predicate { prices.contains($0.price) }), ("bytes.contains", #Predicate { bytes.contains($0.bytes) }),
            ("uuids.contains", #Predicate { uuids.contains($0.uuid) }), ("links.contains", #Predicate { links.contains($0.link) }),
            ("ints.contains || flag", #Predicate { ints.contains($0.int) || $0.flag }),
            ("manyTexts.contains", #Predicate { manyTexts.contains($0.text) }), ("manyInts.contains", #Predicate { manyInts.contains($0.int) }),
            ("manyUUIDs.contains", #Predicate { manyUUIDs.contains($0.uuid) }), ("!manyTexts.contains(note ?? \"\")", #Predicate { !manyTexts.contains($0.note ?? "") }),
        ] + rangePredicates(around: pivot)
    }

    static func rangePredicates(around pivot: Sample) -> [(String, Predicate<Sample>)] {
        let (intRange, amountRange) = (min(pivot.int, 0)...max(pivot.int, 0), min(pivot.amount, 1)..<max(pivot.amount, 1))
        let hour = pivot.date..<pivot.date.addingTimeInterval(3600)
        let (start, end) = (pivot.date.addingTimeInterval(0.000_000_4), pivot.date.addingTimeInterval(86_400))
        let (low, high) = (min(pivot.double, -1), max(pivot.double, 1)), (small, large) = (min(pivot.int16, 0), max(pivot.int16, 0))
        return [
            ("intRange.contains", #Predicate { intRange.contains($0.int) }), ("amountRange.contains", #Predicate { amountRange.contains($0.amount) }),
            ("hour.contains", #Predicate { hour.contains($0.date) }), ("(start...end).contains", #Predicate { (start...end).contains($0.date) }),
            ("(low..<high).contains", #Predicate { (low..<high).contains($0.double) }),
            ("!(small...large).contains", #Predicate { !(small...large).contains($0.int16) }),
            ("text.isEmpty", #Predicate { $0.text.isEmpty }), ("!bytes.isEmpty", #Predicate { !$0.bytes.isEmpty }),
        ]
    }

    /// A sample of random values, edge cases often; texts hold NUL characters unless `withNUL` is
    /// false, decimals are sometimes `Decimal.nan` unless `withNaN` is false (PostgreSQL holds neither).
    static func random(_ random: inout SeededRandom, withNUL: Bool = true, withNaN: Bool = true) -> Sample {
        // Texts Swift and the store see alike, and texts they do not: canonically equivalent
        // spellings ("é", "e\u{301}"; "K", the Kelvin sign), a combining mark alone, "\r\n" (one
        // `Character`), an emoji family (one `Character` of five code points).
        let pieces = ["", "a", "A", "z", "é", "日本", "😀", "'", "\"", "\n", "Zebra", "zebra", "%", "_", "\\",
                      "e", "e\u{301}", "\u{301}", "\r", "\r\n", "K", "\u{212A}", "\u{C5}", "A\u{30A}", "👩", "👨\u{200D}👩\u{200D}👧"]
            + (withNUL ? ["\0", "a\0b"] : [])
        func text() -> String { (0..<Int.random(in: 0...3, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined() }
        func double() -> Double {
            let special: [Double] = [0, -0.0, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -1.5, 0.1]
            if Int.random(in: 0..<4, using: &random) == 0 { return special.randomElement(using: &random)! }
            var value = Double(bitPattern: random.next())
            while value.isNaN { value = Double(bitPattern: random.next()) }
            return value
        }
        func float() -> Float {
            let special: [Float] = [0, -0.0, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude]
            if Int.random(in: 0..<4, using: &random) == 0 { return special.randomElement(using: &random)! }
            var value = Float(bitPattern: UInt32(truncatingIfNeeded: random.next()))
            while value.isNaN { value = Float(bitPattern: UInt32(truncatingIfNeeded: random.next())) }
            return value
        }
        func decimal() -> Decimal {
            if withNaN, Int.random(in: 0..<8, using: &random) == 0 { return .nan }
            if Int.random(in: 0..<6, using: &random) == 0 {
                // Far from 1: up to 38 digits (what `Decimal` holds) times a power of ten from its
                // least to beyond its greatest exponents, spelled by `description` in up to 167 characters.
                let digits = (0..<Int.random(in: 1...38, using: &random)).map { _ in String(Int.random(in: 0...9, using: &random)) }.joined()
                let significand = Decimal(string: digits, locale: Locale(identifier: "en_US_POSIX"))!
                return Decimal(sign: Bool.random(using: &random) ? .minus : .plus, exponent: Int.random(in: -128...127, using: &random), significand: significand)
            }
            let digits = (0..<Int.random(in: 1...30, using: &random)).map { _ in String(Int.random(in: 0...9, using: &random)) }.joined()
            let point = Int.random(in: 0...digits.count, using: &random)
            let text = (Bool.random(using: &random) ? "-" : "") + digits.prefix(point) + (point < digits.count ? "." + digits.dropFirst(point) : "")
            return Decimal(string: text.hasPrefix(".") || text.hasPrefix("-.") ? text.replacingOccurrences(of: ".", with: "0.") : text, locale: Locale(identifier: "en_US_POSIX"))!
        }
        func date() -> Date {
            switch Int.random(in: 0..<8, using: &random) {
            case 0, 1: Date()
            case 2: [Date.distantPast, .distantFuture, Date(timeIntervalSince1970: 0), Date(timeIntervalSinceReferenceDate: -0.0)].randomElement(using: &random)!
            // From `Date.distantPast` to `distantFuture` (years 1 to 4001), every bit of the fraction.
            case 3: Date(timeIntervalSinceReferenceDate: Double.random(in: Date.distantPast.timeIntervalSinceReferenceDate...Date.distantFuture.timeIntervalSinceReferenceDate, using: &random))
            default: Date(timeIntervalSinceReferenceDate: Double.random(in: -1e10...1e10, using: &random))
            }
        }
        func link() -> URL {
            let texts = ["https://example.com/\(Int.random(in: 0...99, using: &random))?q=%20", "https://user:pw@host.example:8080/a;b?c=d&e#f",
                         "https://例え.jp/パス?q=ü", "file:///tmp/a%20b/c.txt", "mailto:someone@example.com", "data:text/plain;base64,SGk=",
                         "urn:isbn:0451450523", "HTTPS://EXAMPLE.COM/Path/../x", "https://example.com/%00%ff"]
            return URL(string: texts.randomElement(using: &random)!)!
        }
        let integers: [Int64] = [.min, .max, 0, -1, 1]
        let sample = Sample(
            text: text(),
            int: Int(Bool.random(using: &random) ? integers.randomElement(using: &random)! : Int64.random(in: -1000...1000, using: &random)),
            int64: Int64(bitPattern: random.next()),
            int32: Int32.random(in: .min ... .max, using: &random),
            int16: [Int16.min, .max, 0, Int16.random(in: .min ... .max, using: &random)].randomElement(using: &random)!,
            double: double(),
            float: float(),
            flag: Bool.random(using: &random),
            date: date(),
            uuid: UUID(),
            bytes: Data((0..<Int.random(in: 0...6, using: &random)).map { _ in UInt8.random(in: 0...2, using: &random) }),
            amount: decimal(),
            link: link(),
            tier: Tier.allCases.randomElement(using: &random)!,
            note: Bool.random(using: &random) ? text() : nil,
            price: Bool.random(using: &random) ? decimal() : nil
        )
        return sample
    }
}
