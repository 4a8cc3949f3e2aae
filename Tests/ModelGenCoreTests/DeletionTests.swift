import FitIQWorkload
import Foundation
import ModelGenCore
import ModelGenRuntime
import XCTest

/// SPEC §3 on real SQLite files: every rule alone and in combination, cycles, depth, refusals.
final class DeletionTests: XCTestCase {
    private func parentKids(rule: String, parentType: String = "Parent?") -> String {
        """
        schema: S
        entities:
          Parent:
            attributes:
              name: String
            relationships:
              kids: { type: [Kid], inverse: parent, deleteRule: \(rule) }
          Kid:
            attributes:
              name: String
            relationships:
              parent: { type: \(parentType), inverse: kids }
        """
    }

    private func seedParentKids(_ fixture: DeletionFixture) throws {
        try fixture.execute("""
            INSERT INTO parent (id, name) VALUES (1, 'p1'), (2, 'p2');
            INSERT INTO kid (id, name, parent_id) VALUES (1, 'a', 1), (2, 'b', 1), (3, 'c', 2);
            """)
    }

    func testCascadeDeletesChildren() throws {
        let fixture = try DeletionFixture(parentKids(rule: "cascade"))
        try seedParentKids(fixture)
        let report = try fixture.delete("Parent", ids: 1)
        XCTAssertEqual(report.deletedCount(of: "Parent"), 1)
        XCTAssertEqual(report.deletedCount(of: "Kid"), 2)
        XCTAssertEqual(report.nullified, 0)
        XCTAssertEqual(try fixture.ids("kid"), [3])
        XCTAssertEqual(try fixture.ids("parent"), [2])
        try fixture.assertNoDanglingReferences()
    }

    func testNullifySetsSurvivorsReferencesToNil() throws {
        let fixture = try DeletionFixture(parentKids(rule: "nullify"))
        try seedParentKids(fixture)
        let report = try fixture.delete("Parent", ids: 1)
        XCTAssertEqual(report.deleted.map(\.entity), ["Parent"])
        XCTAssertEqual(report.nullified, 2)
        XCTAssertEqual(report.nullifiedByRelationship.first?.relationship, "Kid.parent")
        XCTAssertEqual(try fixture.ids("kid"), [1, 2, 3])
        XCTAssertEqual(try fixture.value("SELECT count(*) FROM kid WHERE parent_id IS NULL"), .integer(2))
        try fixture.assertNoDanglingReferences()
    }

    func testDenyRefusesWhileChildrenExistAndNamesThem() throws {
        let fixture = try DeletionFixture(parentKids(rule: "deny"))
        try seedParentKids(fixture)
        let refusal = try XCTUnwrap(try fixture.assertRefused("Parent", .ids([1])))
        XCTAssertEqual(refusal.blockers.count, 1)
        XCTAssertEqual(refusal.blockers[0].kind, .deny)
        XCTAssertEqual(refusal.blockers[0].entity, "Parent")
        XCTAssertEqual(refusal.blockers[0].id, 1)
        XCTAssertEqual(refusal.blockers[0].otherIDs, [1, 2])
        XCTAssertEqual(refusal.description, "delete refused, nothing was changed:\n  Parent#1 cannot be deleted: Parent.kids (deny) still refers to Kid#1, Kid#2, which would survive")
        // Once the children are gone, the parent may go.
        try fixture.delete("Kid", ids: 1, 2)
        XCTAssertEqual(try fixture.delete("Parent", ids: 1).deletedCount(of: "Parent"), 1)
    }

    func testNoActionThatWouldDangleIsRefused() throws {
        let fixture = try DeletionFixture(parentKids(rule: "noAction"))
        try seedParentKids(fixture)
        let refusal = try XCTUnwrap(try fixture.assertRefused("Parent", .ids([2])))
        XCTAssertEqual(refusal.blockers.map(\.kind), [.dangling])
        XCTAssertTrue(refusal.description.contains("Kid#3 would keep a dangling reference through Kid.parent"), refusal.description)
    }

    func testNullifyIntoARequiredReferenceIsRefused() throws {
        let fixture = try DeletionFixture(parentKids(rule: "nullify", parentType: "Parent"))
        try seedParentKids(fixture)
        let refusal = try XCTUnwrap(try fixture.assertRefused("Parent", .all))
        XCTAssertEqual(refusal.blockers.map(\.kind), [.required, .required])
        XCTAssertEqual(refusal.blockers.map(\.id), [1, 2])
        XCTAssertTrue(refusal.description.contains("the required relationship Kid.parent of Kid#1, Kid#2 would be left empty"), refusal.description)
        // A parent without kids may be deleted.
        try fixture.execute("INSERT INTO parent (id, name) VALUES (3, 'lonely')")
        XCTAssertEqual(try fixture.delete("Parent", ids: 3).deletedCount(of: "Parent"), 1)
    }

    func testRequiredReferenceHeldByADeletedObjectDoesNotRefuse() throws {
        // Kid.parent is required and Parent.kids nullifies; deleting the parent and its kids together is fine.
        let yaml = """
        schema: S
        entities:
          Home:
            relationships:
              parents: { type: [Parent], inverse: home, deleteRule: cascade }
              kids: { type: [Kid], inverse: home, deleteRule: cascade }
          Parent:
            relationships:
              home: { type: Home, inverse: parents }
              kids: { type: [Kid], inverse: parent }
          Kid:
            relationships:
              home: { type: Home, inverse: kids }
              parent: { type: Parent, inverse: kids }
        """
        let fixture = try DeletionFixture(yaml)
        try fixture.execute("INSERT INTO home (id) VALUES (1); INSERT INTO parent (id, home_id) VALUES (1, 1); INSERT INTO kid (id, home_id, parent_id) VALUES (1, 1, 1);")
        let report = try fixture.delete("Home", ids: 1)
        XCTAssertEqual(report.totalDeleted, 3)
        try fixture.assertNoDanglingReferences()
    }

    func testDjangoRestrictExampleArtistAlbumSong() throws {
        // Django's documented RESTRICT example: Song.album is RESTRICT (here Album.songs deny),
        // yet deleting the artist succeeds when the song is deleted by the artist's cascade too.
        let yaml = """
        schema: Music
        entities:
          Artist:
            attributes:
              name: String
            relationships:
              albums: { type: [Album], inverse: artist, deleteRule: cascade }
              songs: { type: [Song], inverse: artist, deleteRule: cascade }
          Album:
            attributes:
              name: String
            relationships:
              artist: { type: Artist, inverse: albums }
              songs: { type: [Song], inverse: album, deleteRule: deny }
          Song:
            attributes:
              name: String
            relationships:
              artist: { type: Artist, inverse: songs }
              album: { type: Album, inverse: songs }
        """
        let fixture = try DeletionFixture(yaml)
        try fixture.execute("""
            INSERT INTO artist (id, name) VALUES (1, 'one'), (2, 'two');
            INSERT INTO album (id, name, artist_id) VALUES (1, 'album one', 1);
            INSERT INTO song (id, name, artist_id, album_id) VALUES (1, 'song one', 1, 1);
            """)
        let report = try fixture.delete("Artist", ids: 1)
        XCTAssertEqual(report.deleted.map(\.count).reduce(0, +), 3)
        XCTAssertEqual(try fixture.ids("artist"), [2])

        try fixture.execute("""
            INSERT INTO artist (id, name) VALUES (3, 'three');
            INSERT INTO album (id, name, artist_id) VALUES (2, 'album three', 3);
            INSERT INTO song (id, name, artist_id, album_id) VALUES (2, 'song two', 2, 2);
            """)
        let refusal = try XCTUnwrap(try fixture.assertRefused("Artist", .ids([3])))
        XCTAssertEqual(refusal.blockers.first?.path, "Artist#3 → albums (cascade) → Album#2")
        XCTAssertEqual(refusal.description, "delete refused, nothing was changed:\n  Artist#3 → albums (cascade) → Album#2 cannot be deleted: Album.songs (deny) still refers to Song#2, which would survive")
        // Deleting both artists at once removes the blocker with them.
        XCTAssertEqual(try fixture.delete("Artist", ids: 2, 3).totalDeleted, 4)
        try fixture.assertNoDanglingReferences()
    }

    func testCascadeChainFiftyDeep() throws {
        var yaml = "schema: Chain\nentities:\n"
        for level in 0..<50 {
            yaml += "  E\(level):\n    relationships:\n"
            if level > 0 { yaml += "      up: { type: E\(level - 1)?, inverse: down }\n" }
            if level < 49 { yaml += "      down: { type: [E\(level + 1)], inverse: up, deleteRule: cascade }\n" }
        }
        let fixture = try DeletionFixture(yaml)
        var sql = "INSERT INTO e0 (id) VALUES (1), (2);\n"
        sql += "INSERT INTO e1 (id, up_id) VALUES (1, 1), (2, 1), (3, 2);\n"
        for level in 2..<50 { sql += "INSERT INTO e\(level) (id, up_id) VALUES (1, 1), (2, 1), (3, 3);\n" }
        try fixture.execute(sql)
        let report = try fixture.delete("E0", ids: 1)
        XCTAssertEqual(report.deletedCount(of: "E0"), 1)
        XCTAssertEqual(report.deletedCount(of: "E1"), 2)
        XCTAssertEqual(report.deletedCount(of: "E49"), 2)
        XCTAssertEqual(report.totalDeleted, 1 + 49 * 2)
        XCTAssertEqual(try fixture.ids("e49"), [3])
        try fixture.assertNoDanglingReferences()
        XCTAssertEqual(DeletionPlanner(schema: fixture.schema).plan(for: "E0").deletionOrder.first, "E49", "deepest first")
    }

    private let tree = """
    schema: Tree
    entities:
      Node:
        attributes:
          label: String
        relationships:
          parent: { type: Node?, inverse: children }
          children: { type: [Node], inverse: parent, deleteRule: cascade }
    """

    func testSelfReferentialTreeIsDeletedWhateverItsDepth() throws {
        let fixture = try DeletionFixture(tree)
        // A path 500 deep under node 1, and a second tree under node 1000.
        var sql = "INSERT INTO node (id, label, parent_id) VALUES (1, 'root', NULL);\n"
        for id in 2...500 { sql += "INSERT INTO node (id, label, parent_id) VALUES (\(id), 'n', \(id - 1));\n" }
        sql += "INSERT INTO node (id, label, parent_id) VALUES (1000, 'other', NULL), (1001, 'leaf', 1000);\n"
        try fixture.execute(sql)
        let subtree = try fixture.delete("Node", ids: 250)
        XCTAssertEqual(subtree.deletedCount(of: "Node"), 251)
        XCTAssertEqual(try fixture.ids("node").count, 249 + 2)
        let report = try fixture.delete("Node", ids: 1)
        XCTAssertEqual(report.deletedCount(of: "Node"), 249)
        XCTAssertEqual(try fixture.ids("node"), [1000, 1001])
        try fixture.assertNoDanglingReferences()
    }

    func testCascadeCycleAcrossThreeEntities() throws {
        let yaml = """
        schema: Cycle
        entities:
          A:
            relationships:
              bs: { type: [B], inverse: a, deleteRule: cascade }
              c: { type: C?, inverse: as }
          B:
            relationships:
              a: { type: A?, inverse: bs }
              cs: { type: [C], inverse: b, deleteRule: cascade }
          C:
            relationships:
              b: { type: B?, inverse: cs }
              as: { type: [A], inverse: c, deleteRule: cascade }
        """
        let fixture = try DeletionFixture(yaml)
        // a1 → b1 → c1 → a2 → b2 → c2 → a1 (a cycle in the data), plus an unrelated a3.
        try fixture.execute("""
            INSERT INTO a (id) VALUES (1), (2), (3);
            INSERT INTO b (id, a_id) VALUES (1, 1), (2, 2);
            INSERT INTO c (id, b_id) VALUES (1, 1), (2, 2);
            UPDATE a SET c_id = 1 WHERE id = 2;
            UPDATE a SET c_id = 2 WHERE id = 1;
            """)
        let report = try fixture.delete("A", ids: 1)
        XCTAssertEqual(report.deletedCount(of: "A"), 2)
        XCTAssertEqual(report.deletedCount(of: "B"), 2)
        XCTAssertEqual(report.deletedCount(of: "C"), 2)
        XCTAssertEqual(try fixture.ids("a"), [3])
        try fixture.assertNoDanglingReferences()
    }

    func testDiamondWithTwoCascadePathsDeletesEachObjectOnce() throws {
        let yaml = """
        schema: Diamond
        entities:
          Top:
            relationships:
              lefts: { type: [Left], inverse: top, deleteRule: cascade }
              rights: { type: [Right], inverse: top, deleteRule: cascade }
          Left:
            relationships:
              top: { type: Top?, inverse: lefts }
              bottoms: { type: [Bottom], inverse: left, deleteRule: cascade }
          Right:
            relationships:
              top: { type: Top?, inverse: rights }
              bottoms: { type: [Bottom], inverse: right, deleteRule: cascade }
          Bottom:
            relationships:
              left: { type: Left?, inverse: bottoms }
              right: { type: Right?, inverse: bottoms }
        """
        let fixture = try DeletionFixture(yaml)
        try fixture.execute("""
            INSERT INTO top (id) VALUES (1);
            INSERT INTO "left" (id, top_id) VALUES (1, 1);
            INSERT INTO "right" (id, top_id) VALUES (1, 1), (2, NULL);
            INSERT INTO bottom (id, left_id, right_id) VALUES (1, 1, 1), (2, 1, 2), (3, NULL, 2);
            """)
        let report = try fixture.delete("Top", ids: 1)
        let plan = DeletionPlanner(schema: fixture.schema).plan(for: "Top")
        XCTAssertEqual(plan.deletedThroughParentKeys["Bottom"]?.count, 2, "Bottom goes by either of its two keys")
        XCTAssertEqual(report.deletedCount(of: "Bottom"), 2)
        XCTAssertEqual(report.totalDeleted, 1 + 1 + 1 + 2)
        XCTAssertEqual(try fixture.ids("bottom"), [3])
        try fixture.assertNoDanglingReferences()
    }

    /// Leaves are deleted through their keys to collected parents: Bottom hangs from Left and from
    /// Right, so its rows go when either key points at a deleted object, and no id of it is copied.
    func testLeavesAreDeletedThroughTheirParentKeysWithoutCollectingTheirIds() throws {
        let fixture = try DeletionFixture(try String(contentsOf: TestSupport.schemasDirectory.appendingPathComponent("FitIQ.yaml"), encoding: .utf8))
        let plan = DeletionPlanner(schema: fixture.schema).plan(for: "SDUserProfile")
        let program = DeletionSQLRenderer(schema: fixture.schema).program(for: plan)
        XCTAssertEqual(program.targets.map(\.entity), ["SDUserProfile", "SDSleepSession"])
        XCTAssertEqual(plan.closure.filter { plan.deletedThroughParentKeys[$0] != nil },
                       ["SDDietaryAndActivityPreferences", "SDProgressEntry", "SDActivitySnapshot", "SDPhysicalAttribute", "SDSleepStage"])
        XCTAssertEqual(program.deletions.first { $0.entity == "SDSleepStage" }?.sql,
                       "DELETE FROM sd_sleep_stage WHERE session_id IN (SELECT id FROM temp.modelgen_delete_sd_sleep_session)")
        try fixture.execute(FitIQWorkload.insertSQL(profiles: 4))
        let report = try fixture.delete("SDUserProfile", .matching(condition: "id % 2 = 0", bindings: []))
        XCTAssertEqual(report.deletedCount(of: "SDSleepStage"), 2 * 500)
        XCTAssertEqual(report.totalDeleted, 2 * FitIQWorkload.rowsPerProfile)
        XCTAssertEqual(try fixture.ids("sd_user_profile"), [1, 3])
        XCTAssertEqual(try fixture.ids("sd_sleep_stage").count, 2 * 500)
        try fixture.assertNoDanglingReferences()
    }

    /// An entity whose ids a check, a nullification or a further cascade needs is still collected.
    func testEntitiesWhoseIdsAStepNeedsAreCollected() throws {
        let fixture = try DeletionFixture(try String(contentsOf: TestSupport.fixturesDirectory.appendingPathComponent("Library.yaml"), encoding: .utf8))
        let plan = DeletionPlanner(schema: fixture.schema).plan(for: "Author")
        XCTAssertTrue(plan.checks.contains { $0.traversal.subject == "Book" })
        XCTAssertNil(plan.deletedThroughParentKeys["Book"])
        XCTAssertNotNil(plan.deletedThroughParentKeys["Portrait"])
        XCTAssertNil(plan.deletedThroughParentKeys["Author"], "the root is always collected")
    }

    private let profiles = """
    schema: Profiles
    entities:
      Profile:
        relationships:
          settings: { type: Settings?, inverse: profile, deleteRule: cascade }
      Settings:
        relationships:
          profile: { type: Profile, inverse: settings }
    """

    func testOneToOneCascadeFromTheSideWithoutTheKey() throws {
        let fixture = try DeletionFixture(profiles)
        try fixture.execute("INSERT INTO profile (id) VALUES (1), (2); INSERT INTO settings (id, profile_id) VALUES (10, 1), (20, 2);")
        let report = try fixture.delete("Profile", ids: 1)
        XCTAssertEqual(report.deletedCount(of: "Settings"), 1)
        XCTAssertEqual(try fixture.ids("settings"), [20])
        // From the side with the key: the profile survives, its settings become nil.
        let reverse = try fixture.delete("Settings", ids: 20)
        XCTAssertEqual(reverse.totalDeleted, 1)
        XCTAssertEqual(try fixture.ids("profile"), [2])
        try fixture.assertNoDanglingReferences()
    }

    func testOneToOneWhoseRequiredSideWouldBeEmptiedIsRefused() throws {
        // The key lives on Passport; Person.passport is required, so deleting a passport is refused.
        let yaml = """
        schema: S
        entities:
          Person:
            relationships:
              passport: { type: Passport, inverse: person }
          Passport:
            relationships:
              person: { type: Person?, inverse: passport, column: person_id }
        """
        let fixture = try DeletionFixture(yaml)
        try fixture.execute("INSERT INTO person (id) VALUES (1); INSERT INTO passport (id, person_id) VALUES (5, 1);")
        let refusal = try XCTUnwrap(try fixture.assertRefused("Passport", .ids([5])))
        XCTAssertEqual(refusal.blockers.first?.relationship, "Person.passport")
        XCTAssertEqual(refusal.blockers.first?.otherIDs, [1])
        // Deleting the person leaves the passport with no person (nullified).
        let report = try fixture.delete("Person", ids: 1)
        XCTAssertEqual(report.nullified, 1)
        try fixture.assertNoDanglingReferences()
    }

    func testManyToManyJoinRowsAreRemovedWhateverTheRule() throws {
        let yaml = """
        schema: School
        entities:
          Student:
            relationships:
              courses: { type: [Course], inverse: students, deleteRule: noAction }
          Course:
            relationships:
              students: { type: [Student], inverse: courses }
        """
        let fixture = try DeletionFixture(yaml)
        try fixture.execute("""
            INSERT INTO student (id) VALUES (1), (2);
            INSERT INTO course (id) VALUES (1), (2);
            INSERT INTO course_students (course_id, student_id) VALUES (1, 1), (2, 1), (1, 2);
            """)
        let report = try fixture.delete("Student", ids: 1)
        XCTAssertEqual(report.joinRowsRemoved, 2)
        XCTAssertEqual(report.nullified, 0, "join rows are not nullified references")
        XCTAssertEqual(try fixture.ids("course"), [1, 2])
        XCTAssertEqual(try fixture.value("SELECT count(*) FROM course_students"), .integer(1))
        try fixture.assertNoDanglingReferences()
    }

    func testReferenceWithoutInverseIsNullifiedOrRefusedWhenRequired() throws {
        let yaml = """
        schema: S
        entities:
          Tag:
            attributes:
              name: String
          Post:
            relationships:
              tag: { type: Tag? }
          Pin:
            relationships:
              tag: { type: Tag }
        """
        let fixture = try DeletionFixture(yaml)
        try fixture.execute("INSERT INTO tag (id, name) VALUES (1, 'a'), (2, 'b'); INSERT INTO post (id, tag_id) VALUES (1, 1); INSERT INTO pin (id, tag_id) VALUES (1, 2);")
        XCTAssertEqual(try fixture.delete("Tag", ids: 1).nullified, 1)
        _ = try fixture.assertRefused("Tag", .ids([2]))
        try fixture.assertNoDanglingReferences()
    }

    func testCascadeOnAToOneDeletesTheParentAndNullifiesItsOtherChildren() throws {
        let yaml = """
        schema: S
        entities:
          Team:
            relationships:
              members: { type: [Member], inverse: team }
          Member:
            relationships:
              team: { type: Team?, inverse: members, deleteRule: cascade }
        """
        let fixture = try DeletionFixture(yaml)
        try fixture.execute("INSERT INTO team (id) VALUES (1); INSERT INTO member (id, team_id) VALUES (1, 1), (2, 1);")
        let report = try fixture.delete("Member", ids: 1)
        XCTAssertEqual(report.deletedCount(of: "Team"), 1)
        XCTAssertEqual(report.deletedCount(of: "Member"), 1)
        XCTAssertEqual(report.nullified, 1, "member 2 survives without a team")
        try fixture.assertNoDanglingReferences()
    }

    func testReferenceCycleOfOptionalKeysIsDetachedBeforeDeleting() throws {
        let yaml = """
        schema: S
        entities:
          A:
            relationships:
              b: { type: B?, inverse: a, deleteRule: cascade }
          B:
            relationships:
              a: { type: A?, inverse: b, deleteRule: cascade }
              next: { type: B?, inverse: previous, deleteRule: cascade }
              previous: { type: B?, inverse: next }
        """
        let fixture = try DeletionFixture(yaml)
        try fixture.execute("""
            INSERT INTO a (id) VALUES (1);
            INSERT INTO b (id, a_id) VALUES (1, 1), (2, NULL), (3, NULL);
            UPDATE b SET previous_id = 1 WHERE id = 2;
            UPDATE b SET previous_id = 2 WHERE id = 3;
            """)
        XCTAssertEqual(DeletionPlanner(schema: fixture.schema).plan(for: "A").detachments.map(\.column), ["previous_id"])
        let report = try fixture.delete("A", ids: 1)
        XCTAssertEqual(report.deletedCount(of: "A"), 1)
        XCTAssertEqual(report.deletedCount(of: "B"), 3)
        try fixture.assertNoDanglingReferences()
    }

    func testDryRunReportsExactlyWhatTheRealRunDoesAndChangesNothing() throws {
        let fixture = try DeletionFixture(parentKids(rule: "nullify"))
        try seedParentKids(fixture)
        let before = try fixture.snapshot()
        let dryRun = try fixture.delete("Parent", ids: 1, 2, dryRun: true)
        XCTAssertTrue(dryRun.isDryRun)
        XCTAssertEqual(try fixture.snapshot(), before)
        let real = try fixture.delete("Parent", ids: 1, 2)
        XCTAssertEqual(dryRun.deleted.map(\.entity), real.deleted.map(\.entity))
        XCTAssertEqual(dryRun.deleted.map(\.count), real.deleted.map(\.count))
        XCTAssertEqual(dryRun.nullified, real.nullified)
        XCTAssertEqual(dryRun.json, real.json.replacingOccurrences(of: "\"dryRun\": false", with: "\"dryRun\": true"))
    }

    func testDryRunOfARefusedDeleteIsRefused() throws {
        let fixture = try DeletionFixture(parentKids(rule: "deny"))
        try seedParentKids(fixture)
        XCTAssertThrowsError(try fixture.delete("Parent", .ids([1]), dryRun: true)) { XCTAssertTrue($0 is DeletionRefused) }
    }

    func testMissingIdsAreReportedAndIgnored() throws {
        let fixture = try DeletionFixture(parentKids(rule: "cascade"))
        try seedParentKids(fixture)
        let report = try fixture.delete("Parent", ids: 2, 77, 78)
        XCTAssertEqual(report.missingIDs, [77, 78])
        XCTAssertEqual(report.totalDeleted, 2)
    }

    func testDeleteWhereWithAPredicate() throws {
        let fixture = try DeletionFixture(try String(contentsOf: TestSupport.schemasDirectory.appendingPathComponent("Countries.yaml"), encoding: .utf8))
        try fixture.execute("INSERT INTO country (id, name, visited) VALUES (1, 'France', 1), (2, 'Peru', 0), (3, 'Japan', 1);")
        let entity = try XCTUnwrap(fixture.schema.entity(named: "Country"))
        let condition = try WhereClauseTranslator.translate("$0.visited", entity: entity, schema: fixture.schema).get()
        var renderer = PredicateSQLRenderer(dialect: .sqlite, table: entity.tableName)
        let report = try fixture.delete("Country", .matching(condition: renderer.condition(condition), bindings: renderer.bindings))
        XCTAssertEqual(report.deletedCount(of: "Country"), 2)
        XCTAssertEqual(try fixture.ids("country"), [2])
    }

    func testDeletingEverythingEmptiesTheTablesDirectlyWhenNothingHangsLoose() throws {
        let fixture = try DeletionFixture(try String(contentsOf: TestSupport.schemasDirectory.appendingPathComponent("FitIQ.yaml"), encoding: .utf8))
        let plan = DeletionPlanner(schema: fixture.schema).plan(for: "SDUserProfile")
        XCTAssertEqual(plan.wholeTableParentKeys?.map(\.column), ["user_profile_id", "user_profile_id", "user_profile_id", "user_profile_id", "user_profile_id", "session_id"])
        try fixture.execute(FitIQWorkload.insertSQL(profiles: 3))
        let dryRun = try fixture.delete("SDUserProfile", .all, dryRun: true)
        XCTAssertEqual(dryRun.totalDeleted, 3 * FitIQWorkload.rowsPerProfile)
        XCTAssertEqual(try fixture.value("SELECT count(*) FROM sd_sleep_stage"), .integer(3 * 500), "a dry run changes nothing")
        let report = try fixture.delete("SDUserProfile", .all)
        XCTAssertEqual(report.totalDeleted, 3 * FitIQWorkload.rowsPerProfile)
        XCTAssertEqual(report.statementsExecuted, 6 + 7, "orphan counts, then one DELETE per table")
        XCTAssertEqual(try fixture.value("SELECT count(*) FROM sd_outbox_event"), .integer(Int64(FitIQWorkload.outboxEvents)))
        XCTAssertEqual(try fixture.value("PRAGMA foreign_keys"), .integer(1), "checks are off only while the tables are emptied")
        try fixture.assertNoDanglingReferences()

        // A stage that hangs from no session survives, so the general plan runs instead.
        try fixture.execute(FitIQWorkload.insertSQL(profiles: 2).replacingOccurrences(of: "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 9999) INSERT INTO sd_outbox_event (id, event_type, payload, created_at) SELECT i + 1, 'sync', X'00', i FROM n;", with: ""))
        try fixture.execute("INSERT INTO sd_sleep_stage (id, stage, start_date, end_date, session_id) VALUES (999999, 'loose', 0, 1, NULL)")
        let general = try fixture.delete("SDUserProfile", .all)
        XCTAssertEqual(general.totalDeleted, 2 * FitIQWorkload.rowsPerProfile)
        XCTAssertEqual(try fixture.ids("sd_sleep_stage"), [999999])
        try fixture.assertNoDanglingReferences()
    }

    func testTheFastPathIsNotPlannedWhenSomethingOutsideRefersIn() throws {
        let fixture = try DeletionFixture(parentKids(rule: "nullify"))
        XCTAssertNil(DeletionPlanner(schema: fixture.schema).plan(for: "Parent").wholeTableParentKeys)
        XCTAssertNotNil(DeletionPlanner(schema: fixture.schema).plan(for: "Kid").wholeTableParentKeys)
    }

    func testStatementCountDependsOnTheSchemaNotTheData() throws {
        let small = try DeletionFixture(try String(contentsOf: TestSupport.schemasDirectory.appendingPathComponent("FitIQ.yaml"), encoding: .utf8))
        let large = try DeletionFixture(try String(contentsOf: TestSupport.schemasDirectory.appendingPathComponent("FitIQ.yaml"), encoding: .utf8))
        for (fixture, profiles) in [(small, 2), (large, 60)] {
            var sql = ""
            for profile in 1...profiles {
                sql += "INSERT INTO sd_user_profile (id, user_id, name, created_at) VALUES (\(profile), 'u\(profile)', 'n', 0);\n"
                for session in 0..<5 {
                    let id = profile * 10 + session
                    sql += "INSERT INTO sd_sleep_session (id, start_date, end_date, user_profile_id) VALUES (\(id), 0, 1, \(profile));\n"
                    sql += "INSERT INTO sd_sleep_stage (stage, start_date, end_date, session_id) VALUES ('deep', 0, 1, \(id)), ('rem', 0, 1, \(id));\n"
                }
            }
            try fixture.execute(sql)
        }
        let smallReport = try small.delete("SDUserProfile", .all)
        let largeReport = try large.delete("SDUserProfile", .all)
        XCTAssertEqual(largeReport.deletedCount(of: "SDSleepStage"), 600)
        XCTAssertEqual(smallReport.statementsExecuted, largeReport.statementsExecuted)
    }

    /// A 2,000-entity cascade chain: planned in time linear in the chain (the order used to be
    /// found by rescanning every pending entity, cubic in the closure, and collection steps by
    /// scanning every edge per component), deepest entity first.
    func testALongCascadeChainIsDeletedDeepestFirst() throws {
        var yaml = "schema: Chain\nentities:\n"
        for index in 0..<2_000 {
            yaml += "  E\(index):\n    attributes:\n      name: String\n    relationships:\n"
            if index > 0 { yaml += "      parent: { type: E\(index - 1), inverse: child }\n" }
            if index < 1_999 { yaml += "      child: { type: E\(index + 1)?, inverse: parent, deleteRule: cascade }\n" }
        }
        let (schema, diagnostics) = ModelGen.load(path: "Chain.yaml", bytes: Array(yaml.utf8))
        let model = try XCTUnwrap(schema, diagnostics.prefix(3).map(\.description).joined(separator: "\n"))
        let plan = DeletionPlanner(schema: model).plan(for: "E0")
        XCTAssertEqual(plan.closure.count, 2_000)
        XCTAssertEqual(plan.deletionOrder, (0..<2_000).reversed().map { "E\($0)" })
    }
}

extension DeletionTests {
    /// A cycle of rows whose required keys name rows of their own table, nullified from the other
    /// side, goes in one delete as a save runs it (in its transaction, enforcement on, the schema's
    /// own ON DELETE SET NULL): each key is pointed at its own row first, since SQLite would empty
    /// it, against NOT NULL, as it deletes the row it names.
    func testACycleOfRequiredKeysToTheirOwnTableIsDeletedAsASaveRunsIt() throws {
        let fixture = try DeletionFixture("""
            schema: S
            entities:
              Node:
                attributes:
                  name: String
                relationships:
                  followers: { type: "[Node]", inverse: leader, deleteRule: nullify }
                  leader: { type: Node, inverse: followers, deleteRule: cascade }
            """)
        try fixture.execute("""
            PRAGMA foreign_keys = OFF;
            INSERT INTO node (id, name, leader_id) VALUES (1, 'a', 2), (2, 'b', 1), (3, 'c', 3), (4, 'd', 4);
            PRAGMA foreign_keys = ON;
            """)
        try fixture.execute("BEGIN IMMEDIATE; PRAGMA defer_foreign_keys = ON")
        let report = try fixture.delete("Node", ids: 1, 3)
        try fixture.execute("COMMIT")
        XCTAssertEqual(report.deletedCount(of: "Node"), 3)
        XCTAssertEqual(try fixture.ids("node"), [4])
        try fixture.assertNoDanglingReferences()
    }
}
