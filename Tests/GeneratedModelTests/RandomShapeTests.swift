import Foundation
import ModelGenCore
import ModelGenPostgres
@_spi(Backend) @testable import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// A property test of the context over random schema shapes, where the other runtime tests use
/// fixed schemas: two to four entities, related by one-to-one, one-to-many and many-to-many
/// relationships (an entity to itself too) with random delete rules, some to-ones required, some
/// entities with a unique attribute (alone, or with a to-one's key), some to-manys bounded. For each shape the validator accepts, random work of one
/// context — inserts, relating and unrelating from either side, attribute changes, deletes, saves,
/// rollbacks, fetches amid unsaved changes, objects let go and fetched again, delete(model:) now
/// and then, and now and then another context deleting or changing a stored object — runs on SQLite and on PostgreSQL, and after every save:
/// - saved: the objects the context holds show exactly what a new context reads from the store
///   (no change lost, no deletion's effect missed in memory), until another context saves (its
///   objects then show what they read, until the work goes on in a new context);
/// - refused: the store is as it was, and the objects still show every unsaved change; after
///   `rollback()` they show what the store holds;
/// - the backends end each step alike: the objects read alike where the work reads them, each save
///   is saved or refused in the same words but for row ids (`agree(_:_:)`), the same rows after.
///
/// The models are made at run time from the generator's own stages (`ShapeModel`, `ShapeSchema`):
/// a shape needs no compiled Swift of its own. Seeded: a failure names its seed and prints the shape.
extension BothBackendsTests {
    func testRandomWorkOnRandomSchemaShapesIsSavedAsShownOnBothBackends() async throws {
        var shapes = 0, outcomes: [String: Int] = [:]
        for seed in UInt64(1)...60 {
            var random = SeededRandom(seed: seed &* 7_919)
            guard let shape = RandomShape(&random) else { continue }
            shapes += 1
            RandomShape.current = shape
            defer { RandomShape.current = nil }
            var traces: [String: [String]] = [:]
            try await onBothBackends(shape.schemaType) { flow in
                var work = SeededRandom(seed: seed)
                traces[flow.name] = try await workOnShape(shape, &work, on: flow, context: "seed \(seed), \(flow.name)\n\(shape.yaml)")
            }
            if testRun?.failureCount ?? 0 > 0 { return }
            let (sqlite, postgres) = (traces["SQLite"] ?? [], traces["PostgreSQL"] ?? [])
            if let step = sqlite.indices.first(where: { $0 >= postgres.count || !agree(sqlite[$0], postgres[$0]) }) {
                XCTFail("""
                    seed \(seed), step \(step): the backends differ
                    SQLite:     \(sqlite[step])
                    PostgreSQL: \(step < postgres.count ? postgres[step] : "-")
                    \(shape.yaml)after:
                    \(sqlite[..<step].suffix(30).joined(separator: "\n"))
                    """)
            }
            for line in sqlite where !line.hasPrefix("rows: ") && !line.hasPrefix("shown: ") {
                if line.hasPrefix("did: ") {
                    if line.hasSuffix("] unread") {
                        outcomes["members given unread", default: 0] += 1
                    } else if line.hasSuffix(" unread") {
                        outcomes["partner given unread", default: 0] += 1
                    }
                    continue
                }
                outcomes[line.hasPrefix("fetched ") ? "fetched" : line.split(separator: " ").prefix(2).joined(separator: " "), default: 0] += 1
            }
            if testRun?.failureCount ?? 0 > 0 { return }
        }
        print("random shapes: \(shapes) accepted, outcomes \(outcomes.sorted { $0.key < $1.key })")
        // The shapes and the work must reach each outcome, or the test proves less than it says.
        XCTAssertGreaterThan(shapes, 25, "few random shapes were accepted")
        for (outcome, least) in [("saved", 200), ("refused: delete", 1), ("refused: constraintViolation", 5), ("refused: uniqueViolation", 5), ("bulk deleted", 10), ("fetched", 50), ("refused: modelCountViolation", 3), ("refused: deletedFromStore", 0), ("partner given unread", 10), ("members given unread", 20)] {
            XCTAssertGreaterThan(outcomes[outcome] ?? 0, least, "\(outcomes)")
        }
    }

    /// The trace of random work on `shape`: what the app did (as it read the objects), each save's
    /// and bulk delete's outcome, and the rows after it. Fails (with `context`) where an invariant
    /// of the test's comment breaks.
    private func workOnShape(_ shape: RandomShape, _ random: inout SeededRandom, on flow: SeedFlowBackend, context: String) async throws -> [String] {
        var app = flow.makeContext()
        /// Whether another context saved since the app's context began: its objects then keep
        /// showing what they read, and the checks against the store wait for a new app context.
        var othersChanged = false
        var held: [String: any PersistentModel] = [:]
        var counter = 0
        var trace: [String] = []
        /// What the app did, for a failure's message (and in the trace: the backends must show the
        /// same objects alike, in what each step reads of them).
        var done: [String] = []
        func did(_ step: String) {
            done.append(step)
            trace.append("did: " + step)
        }
        /// Whether the app changed something since its last save, rollback or new context: what
        /// the work decides by, alike on both backends (`hasChanges` may differ: a change undone
        /// through an unloaded list leaves nothing changed on PostgreSQL, a changed object on SQLite).
        var workUnsaved = false
        func didChange(_ step: String) {
            did(step)
            workUnsaved = true
        }
        func fail(_ message: String) { XCTFail("\(context)\n\(message)\nafter:\n\(done.suffix(25).joined(separator: "\n"))") }

        func live() -> [any PersistentModel] {
            held.values.filter { $0.persistentBackingData.managingContext != nil && !$0.isDeleted }.sorted { shape.name(of: $0) < shape.name(of: $1) }
        }
        func live(of entity: Int) -> [any PersistentModel] { live().filter { $0.persistentBackingData.entity === shape.entities[entity] } }
        func pick(_ objects: [any PersistentModel]) -> (any PersistentModel)? { objects.isEmpty ? nil : objects[random.below(objects.count)] }
        /// What the objects the app holds show (their relationships loaded first where need be).
        func shown() async throws -> String {
            let objects = live()
            try await shape.loadRelationships(of: objects, in: app)
            return shape.view(of: objects)
        }
        /// Every object the store holds now, fetched into the app's context: the objects it holds
        /// already (one object per row per context), and any other from now on.
        func refetch() async throws {
            for object in try await shape.fetchAll(in: app) {
                let name = shape.name(of: object)
                if let kept = held[name], kept !== object, kept.persistentBackingData.managingContext != nil {
                    fail("a fetch made a second object for \(name), which the context holds")
                }
                held[name] = object
            }
        }
        /// Before a partner is given through to-one `relationship`: for a one-to-one, half the
        /// time its relationships are loaded first, half the time not (on PostgreSQL, which loads
        /// nothing on access, the partner's old partner is then let go of unread; SQLite reads it
        /// as the link is set).
        func willRelate(_ relationship: RelationshipDescription, to partner: any PersistentModel) async throws {
            guard shape.isOneToOne(relationship), random.below(2) == 0 else { return }
            try await shape.loadRelationships(of: [partner], in: app)
        }
        func insert(_ entity: Int) async throws {
            counter += 1
            let object = shape.make(entity, name: "o\(counter)", rank: random.below(4) == 0 ? nil : random.below(3), code: random.below(3) == 0 ? nil : random.below(4))
            // Its required to-ones, and another relationship now and then (a new object joining
            // objects the same save may delete, or cascade to).
            let relationships = shape.entities[entity].relationships
            let another = relationships.isEmpty || random.below(2) == 0 ? nil : random.below(relationships.count)
            var partners: [String] = []
            for (index, relationship) in relationships.enumerated() where !relationship.isToMany && !relationship.isOptional || index == another {
                guard let partner = pick(live(of: shape.index(of: relationship.target))) else { continue }
                try await willRelate(relationship, to: partner)
                if relationship.isToMany { shape.setToMany(object, index, [partner]) } else { shape.setToOne(object, index, partner) }
                partners.append("\(relationship.name)=\(shape.name(of: partner))")
            }
            app.insert(object)
            held[shape.name(of: object)] = object
            didChange("insert \(shape.describe(object))" + partners.map { " " + $0 }.joined())
        }
        /// The app's unsaved work goes with a new context, which reads everything again.
        func startAfresh() {
            app.rollback()
            (app, held, othersChanged, workUnsaved) = (flow.makeContext(), [:], false, false)
            did("a new context")
        }
        /// A rollback. Once another context saved, the objects it leaves show what each backend
        /// can show: on SQLite relationships load again from the store on access, on PostgreSQL
        /// those loaded stay as read (README): the work goes on in a new context.
        func rollBack() async throws {
            if othersChanged {
                startAfresh()
                try await refetch()
            } else {
                app.rollback()
                workUnsaved = false
            }
        }
        func outcome(_ work: () async throws -> String) async -> String {
            do {
                return try await work()
            } catch {
                return refusal(error) { identifier in held.values.first { $0.persistentModelID == identifier }.map(shape.name(of:)) }
            }
        }

        /// A save of the app's context, checked: saved, the objects show what the store holds;
        /// refused, the store is as it was and the objects keep their changes until rolled back
        /// (loaded amid unsaved changes that break a constraint too: a load reads the store's
        /// rows and corrects them in memory, on PostgreSQL as on SQLite).
        func saveAndCheck() async throws {
            let before = try await shape.storeView(flow)
            let unsaved = try await shown()
            let line = await outcome { try await app.save(); return "saved" }
            let rows = try await shape.storeView(flow)
            trace += [line, "rows: " + rows]
            done.append(line)
            // (The objects the app let go of are fetched again before the objects are compared with the rows.)
            if line == "saved" {
                workUnsaved = false
                try await refetch()
                let objects = try await shown()
                if !othersChanged, objects != rows { fail("after a save: the objects show\n\(objects)\nthe store holds\n\(rows)") }
            } else {
                if rows != before { fail("\(line), yet the store changed from\n\(before)\nto\n\(rows)") }
                let kept = try await shown()
                if kept != unsaved { fail("\(line): the objects showed\n\(unsaved)\nand after it\n\(kept)") }
                try await rollBack()
                try await refetch()
                let rolledBack = try await shown()
                if !othersChanged, rolledBack != rows { fail("after the rollback: the objects show\n\(rolledBack)\nthe store holds\n\(rows)") }
            }
        }
        /// A rollback, checked: the objects show what the store holds.
        func rollBackAndCheck() async throws {
            try await rollBack()
            done.append("rollback")
            try await refetch()
            let (objects, rows) = (try await shown(), try await shape.storeView(flow))
            if !othersChanged, objects != rows { fail("after a rollback: the objects show\n\(objects)\nthe store holds\n\(rows)") }
        }

        for entity in shape.entities.indices { for _ in 0..<2 { try await insert(entity) } }
        for _ in 0..<60 {
            do {
                switch random.below(25) {
                case 0..<3:
                    try await insert(random.below(shape.entities.count))
                case 3..<9:
                    // Relate or unrelate, from either side of any relationship.
                    guard let object = pick(live()) else { continue }
                    let entity = shape.entities[shape.index(of: object)]
                    let index = random.below(entity.relationships.count)
                    guard entity.relationships.indices.contains(index) else { continue }
                    let relationship = entity.relationships[index]
                    let candidates = live(of: shape.index(of: relationship.target))
                    // A to-many is replaced from its members as loaded; a to-one is set loaded or not.
                    if relationship.isToMany || random.below(2) == 0 { try await shape.loadRelationships(of: [object], in: app) }
                    if !relationship.isToMany {
                        let partner = random.below(4) == 0 ? nil : pick(candidates)
                        if let partner { try await willRelate(relationship, to: partner) }
                        shape.setToOne(object, index, partner)
                        didChange("\(shape.name(of: object)).\(relationship.name) = \(partner.map(shape.name(of:)) ?? "nil")")
                    } else {
                        // By name: the order of a to-many relationship's objects is unspecified.
                        var members = object.persistentBackingData.toManyObjects(index).sorted { shape.name(of: $0) < shape.name(of: $1) }
                        switch random.below(3) {
                        case 0: if let added = pick(candidates) { members.append(added) }
                        case 1: if !members.isEmpty { members.remove(at: random.below(members.count)) }
                        default: members = candidates.filter { _ in random.below(2) == 0 }
                        }
                        shape.setToMany(object, index, members)
                        didChange("\(shape.name(of: object)).\(relationship.name) = [\(members.map(shape.name(of:)).joined(separator: " "))]")
                    }
                case 9..<11:
                    guard let object = pick(live()) else { continue }
                    shape.setAttributes(object, rank: random.below(3), code: random.below(2) == 0 ? nil : random.below(4))
                    didChange("change \(shape.describe(object))")
                case 11..<14:
                    guard let object = pick(live()) else { continue }
                    app.delete(object)
                    didChange("delete \(shape.name(of: object))")
                case 14:
                    // delete(model:) runs at once on the stored rows; with nothing unsaved, what the
                    // objects show after it is what the store holds.
                    guard !workUnsaved else { continue }
                    let entity = random.below(shape.entities.count), dryRun = random.below(3) == 0
                    let line = await outcome { try await "bulk deleted \(shape.entities[entity].name): \(shape.bulkDelete(entity, dryRun: dryRun, in: app))" }
                    let rows = try await shape.storeView(flow)
                    trace += [line, "rows: " + rows]
                    done.append(line)
                    let objects = try await shown()
                    if !othersChanged, objects != rows { fail("after \(line): the objects show\n\(objects)\nthe store holds\n\(rows)") }
                    try await refetch()
                case 15:
                    // A fetch sees the unsaved changes: the live objects of an entity in the order of
                    // their rows (the saved ones by id, then the new ones as inserted; both the order of
                    // the inserts), a page of them now and then.
                    let entity = random.below(shape.entities.count)
                    let offset = random.below(3) == 0 ? random.below(3) : nil, limit = random.below(2) == 0 ? 1 + random.below(3) : nil
                    var fetched: [any PersistentModel] = []
                    let line = await outcome {
                        fetched = try await shape.fetch(entity, offset: offset, limit: limit, in: app)
                        return "fetched \(shape.entities[entity].name) offset \(offset ?? 0) limit \(limit ?? 0): " + fetched.map(shape.name(of:)).joined(separator: " ")
                    }
                    trace.append(line)
                    done.append(line)
                    guard line.hasPrefix("fetched ") else { continue }
                    let expected = live(of: entity).sorted { shape.number(of: $0) < shape.number(of: $1) }.dropFirst(offset ?? 0).prefix(limit ?? .max)
                    if !othersChanged, fetched.map(shape.name(of:)) != expected.map(shape.name(of:)) { fail("\(line), where the live objects are \(expected.map(shape.name(of:)))") }
                    // The other ways to ask the same: a count, the identifiers.
                    do {
                        let (count, identifiers) = try await shape.countAndIdentifiers(entity, offset: offset, limit: limit, in: app)
                        if count != fetched.count || identifiers != fetched.map(\.persistentModelID) {
                            fail("\(line), where fetchCount gives \(count) and fetchIdentifiers \(identifiers)")
                        }
                    } catch {
                        fail("\(line), where fetchCount or fetchIdentifiers throws \(error)")
                    }
                case 16:
                    // A rollback: the objects show what the store holds.
                    try await rollBackAndCheck()
                case 17:
                    // The app lets go of the objects it has not changed, and fetches them again; or,
                    // now and then, starts a new context (its unsaved work rolled back).
                    if random.below(2) == 0 {
                        held = held.filter { $0.value.hasChanges || $0.value.isDeleted }
                        done.append("let go of the unchanged objects")
                    } else {
                        startAfresh()
                    }
                    try await refetch()
                case 18:
                    // Another context deletes a stored object, or changes its rank, and saves.
                    let other = flow.makeContext()
                    defer { other.rollback() }
                    let objects = try await shape.fetchAll(in: other).sorted { shape.number(of: $0) < shape.number(of: $1) }
                    guard let object = pick(objects) else { continue }
                    try await shape.loadRelationships(of: objects, in: other)
                    // (Not its keys nor its unique values: the app's unsaved rows, which a fetch
                    // writes, could then collide with what the app has not read.)
                    if random.below(2) == 0 {
                        other.delete(object)
                        did("elsewhere delete \(shape.name(of: object))")
                    } else {
                        let backing = object.persistentBackingData
                        shape.setAttributes(object, rank: random.below(3), code: backing.entity.attributes.count > 2 ? backing.attribute(2, as: Int?.self) : nil)
                        did("elsewhere change \(shape.describe(object))")
                    }
                    let line = await outcome { try await other.save(); return "saved" }
                    let rows = try await shape.storeView(flow)
                    trace += [line, "rows: " + rows]
                    done.append(line)
                    if line == "saved" { othersChanged = true }
                case 19:
                    // A new context gives one-to-one partners to objects, and to-many lists new
                    // members, without loading either side first: each partner's old partner
                    // (each list's old members) lets go of it, whether the context holds it (half
                    // the objects are let go of first) or not; fetched again, the objects it did
                    // not hold show that too. Where that empties a required key,
                    // the save that follows at once is refused alike (a PostgreSQL fetch then
                    // throws what the save would: README).
                    startAfresh()
                    try await refetch()
                    for name in held.keys.sorted() where random.below(2) == 0 { held[name] = nil }
                    var required = false
                    /// The relationships of `entity` given new partners unread.
                    func givenUnread(_ entity: EntityDescription) -> [Int] {
                        entity.relationships.indices.filter { shape.isOneToOne(entity.relationships[$0]) || entity.relationships[$0].isToMany }
                    }
                    for _ in 0..<1 + random.below(3) {
                        guard let object = pick(live().filter { !givenUnread($0.persistentBackingData.entity).isEmpty }) else { break }
                        let entity = shape.entities[shape.index(of: object)]
                        let indexes = givenUnread(entity)
                        let index = indexes[random.below(indexes.count)]
                        let relationship = entity.relationships[index]
                        required = required || !shape.keyIsOptional(relationship)
                        if relationship.isToMany {
                            let members = live(of: shape.index(of: relationship.target)).filter { _ in random.below(3) == 0 }
                            shape.setToMany(object, index, members)
                            didChange("\(shape.name(of: object)).\(relationship.name) = [\(members.map(shape.name(of:)).joined(separator: ", "))] unread")
                            continue
                        }
                        let partner = random.below(5) == 0 ? nil : pick(live(of: shape.index(of: relationship.target)))
                        shape.setToOne(object, index, partner)
                        didChange("\(shape.name(of: object)).\(relationship.name) = \(partner.map(shape.name(of:)) ?? "nil") unread")
                    }
                    // Now and then the same save deletes an object too: an owner whose list was
                    // replaced, a member let go or taken, or another.
                    if random.below(3) == 0, let object = pick(live()) {
                        app.delete(object)
                        didChange("delete \(shape.name(of: object))")
                    }
                    if required { try await saveAndCheck() } else { try await refetch() }
                    trace.append("shown: " + (try await shown()))
                    // Then rolled back, the objects read meanwhile show the partners the store gives
                    // them; saved, what the store holds. (Either way the step ends with nothing
                    // unsaved: on PostgreSQL, emptying a partner's side not loaded is a change even
                    // where no object held it, which the context cannot tell without reading.)
                    if random.below(3) == 0 { try await rollBackAndCheck() } else { try await saveAndCheck() }
                default:
                    try await saveAndCheck()
                }
            } catch {
                fail("the step threw \(error)")
            }
            if testRun?.failureCount ?? 0 > 0 { break }
        }
        app.rollback()
        return trace
    }
}

// MARK: - Random shapes

/// One random schema shape the validator accepted, with what the runtime needs of it: its
/// entities' descriptions, DDL, deletion programs and canonical form, made by the generator's stages.
struct RandomShape {
    /// The shape the `ShapeModel` classes and `ShapeSchema` types describe now.
    nonisolated(unsafe) static var current: RandomShape?
    /// Shapes made so far in this process: each one's schema is a type of its own.
    nonisolated(unsafe) private static var made: UInt64 = 0

    let yaml: String
    let entities: [EntityDescription]
    let sqliteDDL: String
    let postgreSQLTables: String
    let canonicalSchema: String
    let programs: [String: DeletionProgram]
    let schemaType: any ModelSchemaDefinition.Type

    /// A random shape, or nil when the validator refuses it.
    init?(_ random: inout SeededRandom) {
        let count = 2 + random.below(3)
        var attributes = (0..<count).map { _ in ["name: String", "rank: Int?"] }
        for entity in 0..<count where random.below(2) == 0 { attributes[entity].append("code: { type: Int?, unique: true }") }
        var relationships = Array(repeating: [String](), count: count)
        var uniqueGroups = Array(repeating: [String](), count: count)
        let rules = ["nullify", "nullify", "cascade", "cascade", "deny", "noAction"]
        for pair in 0..<(1 + random.below(4)) {
            let (a, b) = (random.below(count), random.below(count))
            let (ruleA, ruleB) = (rules[random.below(rules.count)], rules[random.below(rules.count)])
            let required = random.below(4) == 0 ? "" : "?"
            let (typeA, typeB): (String, String) = switch random.below(3) {
            case 0: ("E\(b)\(required)", "E\(a)?")
            case 1: ("\"[E\(b)]\"", "E\(a)\(required)")
            default: ("\"[E\(b)]\"", "\"[E\(a)]\"")
            }
            /// A to-many side's bounds, now and then.
            func bounds(_ type: String) -> String {
                guard type.hasPrefix("\"["), random.below(4) == 0 else { return "" }
                return ", minimumModelCount: \(random.below(2)), maximumModelCount: \(2 + random.below(2))"
            }
            relationships[a].append("r\(pair)a: { type: \(typeA), inverse: r\(pair)b, deleteRule: \(ruleA)\(bounds(typeA)) }")
            relationships[b].append("r\(pair)b: { type: \(typeB), inverse: r\(pair)a, deleteRule: \(ruleB)\(bounds(typeB)) }")
            // The key of a many-to-one side with the unique code, unique together now and then.
            if !typeB.hasPrefix("\""), !typeA.hasPrefix("E"), attributes[b].count > 2, random.below(3) == 0 { uniqueGroups[b].append("[code, r\(pair)b]") }
        }
        var lines = ["schema: Shape", "entities:"]
        for entity in 0..<count {
            lines += ["  E\(entity):", "    attributes:"] + attributes[entity].map { "      " + $0 }
            if !relationships[entity].isEmpty { lines += ["    relationships:"] + relationships[entity].map { "      " + $0 } }
            if !uniqueGroups[entity].isEmpty { lines.append("    unique: [\(uniqueGroups[entity].joined(separator: ", "))]") }
        }
        yaml = lines.joined(separator: "\n") + "\n"
        guard let schema = ModelGen.load(path: "Shape.yaml", bytes: Array(yaml.utf8)).0 else { return nil }
        let quote = SQLDialect.sqlite.quote
        entities = schema.entities.map { entity in
            EntityDescription(
                name: entity.name, table: quote(entity.tableName),
                attributes: entity.attributes.map { AttributeDescription(name: $0.name, column: $0.isTransient ? nil : quote($0.columnName), isUnique: $0.isUnique) },
                relationships: entity.relationships.map { relationship in
                    let storage: RelationshipDescription.Storage = switch schema.links(of: relationship)! {
                    case let .column(column): .column(quote(column))
                    case let .inverseColumn(column): .inverseColumn(quote(column))
                    case let .joinTable(table, own, other): .joinTable(quote(table), ownColumn: quote(own), targetColumn: quote(other))
                    }
                    return RelationshipDescription(name: relationship.name, target: relationship.target, isToMany: relationship.isToMany, isOptional: !relationship.isRequired,
                                                   inverse: relationship.inverse, deleteRule: relationship.deleteRule.rawValue, storage: storage,
                                                   minimumModelCount: relationship.modelCountBounds.minimum, maximumModelCount: relationship.modelCountBounds.maximum)
                })
        }
        sqliteDDL = DDLGenerator(schema: schema, dialect: .sqlite).render(header: "Shape")
        postgreSQLTables = DDLGenerator(schema: schema, dialect: .postgresql).render(header: "Shape")
        canonicalSchema = schema.canonicalJSON
        let renderer = DeletionSQLRenderer(schema: schema, dialect: .sqlite)
        programs = Dictionary(uniqueKeysWithValues: zip(schema.entities, DeletionPlanner(schema: schema).plans()).map { ($0.name, renderer.program(for: $1)) })
        Self.made += 1
        schemaType = Self.schemaType(Self.made)
    }

    /// `ShapeSchema` of a tag type made for `number` (its bits as nested `ShapeBit0`/`ShapeBit1`):
    /// the runtime keeps what it reads from a schema's canonical form once per schema type and
    /// process, so each shape must be a type no other shape was.
    private static func schemaType(_ number: UInt64) -> any ModelSchemaDefinition.Type {
        func nest<Tag>(_: Tag.Type, _ rest: UInt64) -> any ModelSchemaDefinition.Type {
            rest == 0 ? ShapeSchema<Tag>.self : rest & 1 == 0 ? nest(ShapeBit0<Tag>.self, rest >> 1) : nest(ShapeBit1<Tag>.self, rest >> 1)
        }
        return nest(ShapeBit0<Never>.self, number)
    }

    static let slots: [any ShapeSlot.Type] = [ShapeSlot0.self, ShapeSlot1.self, ShapeSlot2.self, ShapeSlot3.self]

    func index(of entity: String) -> Int { entities.firstIndex { $0.name == entity }! }
    /// Whether `relationship` is a to-one whose inverse is a to-one.
    func isOneToOne(_ relationship: RelationshipDescription) -> Bool {
        !relationship.isToMany && entities[index(of: relationship.target)].relationships.first { $0.name == relationship.inverse }?.isToMany == false
    }
    /// Whether the to-one of a one-to-one or one-to-many whose column holds its key (this one, or its inverse) is optional.
    func keyIsOptional(_ relationship: RelationshipDescription) -> Bool {
        guard case .inverseColumn = relationship.storage else { return relationship.isOptional }
        return entities[index(of: relationship.target)].relationships.first { $0.name == relationship.inverse }?.isOptional ?? true
    }
    func index(of object: any PersistentModel) -> Int { entities.firstIndex { $0 === object.persistentBackingData.entity }! }
    func name(of object: any PersistentModel) -> String { object.persistentBackingData.attribute(0, as: String.self) }
    /// The number in an object's name: the order in which the work made the objects.
    func number(of object: any PersistentModel) -> Int { Int(name(of: object).dropFirst())! }

    /// A new object of entity `entity` with these values.
    func make(_ entity: Int, name: String, rank: Int?, code: Int?) -> any PersistentModel {
        func make<Slot: ShapeSlot>(_: Slot.Type) -> any PersistentModel { ShapeModel<Slot>() }
        let object = make(Self.slots[entity])
        object.persistentBackingData.setAttribute(0, name)
        setAttributes(object, rank: rank, code: code)
        return object
    }

    func setAttributes(_ object: any PersistentModel, rank: Int?, code: Int?) {
        let backing = object.persistentBackingData
        backing.setAttribute(1, rank)
        if backing.entity.attributes.count > 2 { backing.setAttribute(2, code) }
    }

    func setToOne(_ object: any PersistentModel, _ index: Int, _ partner: (any PersistentModel)?) {
        let backing = object.persistentBackingData
        backing.setToOneObject(index, partner, target: entities[self.index(of: backing.entity.relationships[index].target)])
    }

    func setToMany(_ object: any PersistentModel, _ index: Int, _ members: [any PersistentModel]) {
        let backing = object.persistentBackingData
        backing.setToManyObjects(index, members, target: entities[self.index(of: backing.entity.relationships[index].target)])
    }

    /// The objects of entity `Slot.entity` in id order, a page of them (all without `offset` and `limit`).
    private static func page<Slot: ShapeSlot>(of _: Slot.Type, offset: Int?, limit: Int?) -> FetchDescriptor<ShapeModel<Slot>> {
        var descriptor = FetchDescriptor<ShapeModel<Slot>>()
        descriptor.fetchOffset = offset
        descriptor.fetchLimit = limit
        return descriptor
    }

    /// The objects of entity `entity` in id order, a page of them, in `context`.
    func fetch(_ entity: Int, offset: Int? = nil, limit: Int? = nil, in context: some SeedFlowContext) async throws -> [any PersistentModel] {
        func fetch<Slot: ShapeSlot>(_ slot: Slot.Type) async throws -> [any PersistentModel] { try await context.fetch(Self.page(of: slot, offset: offset, limit: limit)) }
        return try await fetch(Self.slots[entity])
    }

    /// `fetchCount` and `fetchIdentifiers` of the same page.
    func countAndIdentifiers(_ entity: Int, offset: Int?, limit: Int?, in context: some SeedFlowContext) async throws -> (Int, [PersistentIdentifier]) {
        func ask<Slot: ShapeSlot>(_ slot: Slot.Type) async throws -> (Int, [PersistentIdentifier]) {
            let descriptor = Self.page(of: slot, offset: offset, limit: limit)
            return (try await context.fetchCount(descriptor), try await context.fetchIdentifiers(descriptor))
        }
        return try await ask(Self.slots[entity])
    }

    /// Every object of every entity, in `context`.
    func fetchAll(in context: some SeedFlowContext) async throws -> [any PersistentModel] {
        var objects: [any PersistentModel] = []
        for entity in entities.indices { objects += try await fetch(entity, in: context) }
        return objects
    }

    /// Loads every relationship of `objects` not loaded yet (PostgreSQL; SQLite loads on access).
    func loadRelationships(of objects: [any PersistentModel], in context: some SeedFlowContext) async throws {
        for (entity, slot) in Self.slots.prefix(entities.count).enumerated() {
            func load<Slot: ShapeSlot>(_: Slot.Type) async throws {
                let ofEntity = objects.compactMap { $0 as? ShapeModel<Slot> }.filter { $0.persistentBackingData.id != nil }
                guard !ofEntity.isEmpty else { return }
                for index in entities[entity].relationships.indices { try await context.load(\ShapeModel<Slot>.[relationship: index], of: ofEntity) }
            }
            try await load(slot)
        }
    }

    /// `delete(model:where:)` of every object of entity `entity`: the counts it reports.
    func bulkDelete(_ entity: Int, dryRun: Bool, in context: some SeedFlowContext) async throws -> String {
        func delete<Slot: ShapeSlot>(_: Slot.Type) async throws -> DeletionReport { try await context.delete(model: ShapeModel<Slot>.self, where: nil, dryRun: dryRun) }
        let report = try await delete(Self.slots[entity])
        return "\(report.deleted.map { "\($0.entity) \($0.count)" }.joined(separator: ", ")), \(report.nullified) nullified\(dryRun ? " (dry run)" : "")"
    }

    /// An object's entity, name and values.
    func describe(_ object: any PersistentModel) -> String {
        let backing = object.persistentBackingData
        return "\(backing.entity.name) \(name(of: object))" + backing.entity.attributes.indices.dropFirst().map { " \(backing.entity.attributes[$0].name)=\(backing.attribute($0, as: Int?.self).map(String.init) ?? "nil")" }.joined()
    }

    /// One line per object, in name order: its entity, values and related objects by name.
    func view(of objects: [any PersistentModel]) -> String {
        objects.map { object in
            let backing = object.persistentBackingData
            let related = backing.entity.relationships.enumerated().map { index, relationship in
                relationship.isToMany
                    ? "\(relationship.name)=[\(backing.toManyObjects(index).map(name(of:)).sorted().joined(separator: " "))]"
                    : "\(relationship.name)=\(backing.toOneObject(index).map(name(of:)) ?? "nil")"
            }
            return ([describe(object)] + related).joined(separator: " ")
        }
        .sorted().joined(separator: "\n")
    }

    /// What the store holds, read by a new context.
    func storeView(_ flow: SeedFlowBackend) async throws -> String {
        let reader = flow.makeContext()
        defer { withExtendedLifetime(reader) {} }
        let objects = try await fetchAll(in: reader)
        try await loadRelationships(of: objects, in: reader)
        return view(of: objects)
    }
}

/// Which entity of the current shape a `ShapeModel` class is.
protocol ShapeSlot { static var entity: Int { get } }
enum ShapeSlot0: ShapeSlot { static let entity = 0 }
enum ShapeSlot1: ShapeSlot { static let entity = 1 }
enum ShapeSlot2: ShapeSlot { static let entity = 2 }
enum ShapeSlot3: ShapeSlot { static let entity = 3 }
enum ShapeBit0<Rest> {}
enum ShapeBit1<Rest> {}

/// The model class of entity `Slot.entity` of the current shape, written as generated models are.
final class ShapeModel<Slot: ShapeSlot>: PersistentModel {
    static var entity: EntityDescription { RandomShape.current!.entities[Slot.entity] }
    let persistentBackingData: ModelBackingData

    init() {
        persistentBackingData = ModelBackingData(entity: Self.entity)
        persistentBackingData.attach(self)
    }

    required init(backingData: ModelBackingData) {
        persistentBackingData = backingData
    }

    deinit {
        persistentBackingData.modelDidEnd()
    }

    /// A key path per relationship, for `load(_:of:)`.
    subscript(relationship index: Int) -> Int { index }

    static func propertyName(for keyPath: AnyKeyPath) -> String? {
        entity.relationships.indices.first { keyPath == \ShapeModel<Slot>.[relationship: $0] }.map { entity.relationships[$0].name }
    }
}

/// The current shape's schema; `Tag` makes it a type of its own (`RandomShape.schemaType`).
enum ShapeSchema<Tag>: ModelSchemaDefinition {
    private static var shape: RandomShape { RandomShape.current! }
    static var models: [any PersistentModel.Type] {
        let all: [any PersistentModel.Type] = [ShapeModel<ShapeSlot0>.self, ShapeModel<ShapeSlot1>.self, ShapeModel<ShapeSlot2>.self, ShapeModel<ShapeSlot3>.self]
        return Array(all.prefix(shape.entities.count))
    }
    static var sqliteDDL: String { shape.sqliteDDL }
    static var postgreSQLTables: String { shape.postgreSQLTables }
    static func deletionProgram(for entity: String) -> DeletionProgram? { shape.programs[entity] }
    static var canonicalSchema: String { shape.canonicalSchema }
}
