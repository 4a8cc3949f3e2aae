import ModelGenProgram
import ModelGenQuery
import ModelGenSchema

/// One PL/pgSQL function per entity, `<table>_safe_delete(ids bigint[]) RETURNS jsonb`, that runs
/// the entity's deletion plan and returns `{"deleted": {"Entity": count, …}, "nullified": n}`.
/// A refused delete raises `restrict_violation` naming every blocker; being one statement, the
/// call then changes nothing.
public struct PostgreSQLDeletionFunctions: Sendable {
    public let schema: ModelSchema
    /// One plan per entity, in schema order (`DeletionPlanner.plans()`).
    public let plans: [DeletionPlan]

    public init(schema: ModelSchema, plans: [DeletionPlan]) {
        self.schema = schema
        self.plans = plans
    }

    /// The whole `<Base>.postgresql.sql`: `tables` (the DDL, ending in a line break), then the
    /// functions two line breaks apart.
    public func render(after tables: String) -> String {
        Self.fileParts(tables: tables, functions: functions()).concatenated()
    }

    /// `<Base>.postgresql.sql` in pieces, not joined: `tables` (the DDL, ending in a line break),
    /// then `functions` (the functions' texts), two line breaks apart.
    public static func fileParts(tables: String, functions: [String]) -> [String] {
        var parts = [tables, "\n"]
        parts.reserveCapacity(2 * functions.count + 2)
        for (index, function) in functions.enumerated() {
            if index > 0 { parts.append("\n\n") }
            parts.append(function)
        }
        parts.append("\n")
        return parts
    }

    /// One `CREATE OR REPLACE FUNCTION` per entity, in schema order (rendered on every core).
    public func functions() -> [String] {
        let tableRenderer = DeletionSQLRenderer(schema: schema, dialect: .postgresql)
        let arrayRenderer = DeletionSQLRenderer(schema: schema, dialect: .postgresql, closureStorage: .arrays)
        // The schema's part of every function's locked entities, found once.
        let referenced = Set(schema.foreignKeys.map(\.target) + schema.joinTables.flatMap { [$0.entity, $0.target] })
        let holdingKeys = Set(schema.foreignKeys.map(\.entity))
        return Array(zip(schema.entities, plans)).concurrentMap { entity, plan in
            let arrays = arrayRenderer.configured(for: plan), tables = tableRenderer.configured(for: plan)
            return function(for: entity, locking: lockedEntities(plan, referenced: referenced, holdingKeys: holdingKeys),
                            small: Path(renderer: arrays, program: arrays.program(for: plan), collectionTargets: arrays.collectionTargets(of: plan),
                                        brokenLinks: arrays.brokenLinks(of: plan), linkLocks: arrays.linkLocks(of: plan)),
                            general: Path(renderer: tables, program: tables.program(for: plan), collectionTargets: tables.collectionTargets(of: plan),
                                          brokenLinks: tables.brokenLinks(of: plan), linkLocks: tables.linkLocks(of: plan)))
        }
    }

    /// The entities whose collected rows a delete locks: those another session could change
    /// what the delete reads about — a reference to them (a foreign key or join table points at
    /// their table), or a key they hold that the plan reads: one it follows (a cascade through a
    /// parent's key, or through a child's) or, when the plan checks anything, any (a one-to-one
    /// stored on the deleted side is found through it). Other rows can neither gain a reference
    /// nor change one.
    private func lockedEntities(_ plan: DeletionPlan, referenced: Set<String>, holdingKeys: Set<String>) -> Set<String> {
        let followedKeys = plan.edges.compactMap { edge -> String? in
            switch edge.link {
            case .subjectColumn: edge.subject
            case .otherColumn: edge.other
            case .joinTable: nil
            }
        }
        return referenced.union(followedKeys).union(plan.checks.isEmpty ? [] : holdingKeys)
    }

    /// `<table>_safe_delete` (`SQLNames.safeDeleteFunction`), quoted as needed.
    public static func functionName(for entity: Entity) -> String {
        SQLDialect.postgresql.quote(SQLNames.safeDeleteFunction(of: entity.tableName))
    }

    /// The setting that bounds the small path: past this many collected objects of one entity
    /// (or with every object of the root asked for), a call collects into temporary tables.
    public static let arrayClosureLimitSetting = "modelgen.array_closure_limit"
    /// The bound when the setting is not set.
    public static let defaultArrayClosureLimit = 1_000
    /// The functions' `random_page_cost` (PostgreSQL's default is 4): the cost the planner gives a
    /// page read out of order, against 1 for one read in sequence. A function reads the rows it
    /// deletes by their keys' indexes just after it collected and locked them, so their pages are
    /// in memory, where PostgreSQL's documentation suggests a value near 1. With 4, a delete of a
    /// few thousand collected rows (the temporary-table path) scans whole child tables instead of
    /// probing their indexes: 40 FitIQ profiles took 2.5× PostgreSQL's own cascade.
    static let randomPageCost = "1.1"

    /// The label of the small path's loop, which it leaves for the general path.
    private static let smallPath = "modelgen_small_delete"

    private func literal(_ text: String) -> String { SQLDialect.postgresql.literal(text) }

    /// One way of running the plan: its statements over closures in arrays (the small path) or in
    /// temporary tables (the general path), with the entity each collection statement adds to.
    private struct Path {
        var renderer: DeletionSQLRenderer
        var program: DeletionProgram
        var collectionTargets: [[String]]
        /// Whether a collected row lost the link it was collected through (`DeletionSQLRenderer.brokenLinks`).
        var brokenLinks: String
        /// The locks on the join rows the closure was collected through (`DeletionSQLRenderer.linkLocks`).
        var linkLocks: [String]

        var storage: DeletionSQLRenderer.ClosureStorage { renderer.closureStorage }

        /// The target collecting `entity`'s ids.
        func target(_ entity: String) -> DeletionProgram.Target { program.targets.first { $0.entity == entity }! }
    }

    /// The function's variables, those its body uses only, each line indented and ended.
    private func declarations(small: Path, hasCycles: Bool, relocks: Bool) -> String {
        let program = small.program
        var variables = ["report jsonb;", "changed bigint;", "deleted jsonb := '{}'::jsonb;", "nullified bigint := 0;"]
        if hasCycles {
            variables += ["added bigint;", "modelgen_previous_round integer := 0;", "modelgen_current_round integer := 0;",
                          "collected bigint := 0;", "analyzed bigint := 1;"]
        }
        if !program.checks.isEmpty {
            variables += ["blocker record;", "blocked_entities text[] := '{}'::text[];", "blocked_ids bigint[] := '{}'::bigint[];",
                          "blocked_reasons text[] := '{}'::text[];", "path text;", "problems text := '';"]
            if !program.edges.isEmpty {
                variables += ["walk_entity text;", "walk_id bigint;", "walk_parent bigint;", "walk_edge integer;"]
            }
        }
        if relocks { variables += ["relocked bigint;", "relocking boolean;", "recollected boolean;"] }
        variables.append("\(DeletionSQLRenderer.arrayLimitVariable) integer;")
        for target in program.targets {
            for (array, _, type) in small.renderer.arrayColumns {
                variables.append("\(target.closureTable)_\(array) \(type) := '{}'::\(type);")
            }
            if relocks { variables.append("\(target.closureTable)_locked bigint[];") }
        }
        return variables.map { "    " + $0 + "\n" }.joined()
    }

    /// Whether `part` occurs in `text`, compared byte by byte in their UTF-8.
    private static func occurs(_ part: String, in text: inout String) -> Bool {
        var part = part
        return text.withUTF8 { haystack in
            part.withUTF8 { needle in
                guard let first = needle.first, needle.count <= haystack.count else { return needle.isEmpty }
                for start in 0...(haystack.count - needle.count) where haystack[start] == first {
                    if haystack[start..<start + needle.count].elementsEqual(needle) { return true }
                }
                return false
            }
        }
    }

    /// The function: the small path, then the general one. A call with ids whose closure stays
    /// within the limit (`arrayClosureLimitSetting`, `defaultArrayClosureLimit` objects of any one
    /// entity) holds the ids it collects in array variables: it makes no table, and PL/pgSQL keeps
    /// its statements' plans from one transaction to the next (a statement naming a table made in
    /// this transaction is planned again in each). Any other call — every object asked for, or a
    /// closure that outgrows the limit while it is collected (nothing has changed yet; the rows
    /// locked stay locked) — collects into temporary tables, analyzed as they fill, so that the
    /// planner sees their sizes.
    private func function(for entity: Entity, locking locked: Set<String>, small: Path, general: Path) -> String {
        // The body's lines, each indented by four spaces and ended by a line break.
        var body = ""
        func line(_ text: String) {
            body += "    "
            body += text
            body += "\n"
        }
        // The round column serves cycles, collected round by round from each round's additions.
        let program = small.program
        let hasCycles = program.collections.contains { if case .untilStable = $0 { true } else { false } }
        // Without collections (nothing cascades from the entity) nothing can be added: one lock
        // suffices; collected top down, each level is locked as it is collected.
        let relocks = !program.collections.isEmpty && !small.renderer.collectsTopDown
        // A dry run is the delete itself, called in a block whose exception rolls it back. Only a dry
        // run enters that block: a block that catches exceptions starts a subtransaction, which
        // costs each call of a small delete a tenth of its time. A NULL `dry_run` (an optional the
        // caller left unset) is neither: refused before anything runs, rather than taken as false.
        line("IF dry_run IS NULL THEN")
        line("    RAISE EXCEPTION 'dry_run is NULL: pass true to report what the delete would do, false to delete' USING ERRCODE = 'null_value_not_allowed';")
        line("END IF;")
        line("IF dry_run THEN")
        line("    BEGIN")
        line("        report := \(Self.functionName(for: entity))($1, false);")
        line("        RAISE EXCEPTION USING ERRCODE = 'MGDRY';")
        line("    EXCEPTION WHEN SQLSTATE 'MGDRY' THEN")
        line("        RETURN jsonb_set(report, '{dryRun}', 'true'::jsonb);")
        line("    END;")
        line("END IF;")
        // The small path is a loop that runs once: it leaves (EXIT) with the report made, or without
        // one for the general path to run.
        line("<<\(Self.smallPath)>>")
        line("LOOP")
        emit(small, hasCycles: hasCycles, locked: locked, relocks: relocks, indent: "    ", line)
        line("    EXIT \(Self.smallPath);")
        line("END LOOP \(Self.smallPath);")
        line("IF report IS NULL THEN")
        emit(general, hasCycles: hasCycles, locked: locked, relocks: relocks, indent: "    ", line)
        line("END IF;")
        line("RETURN report;")
        // The body is dollar-quoted with a tag that does not occur in it, whatever the names hold
        // (searched as UTF-8 bytes: Foundation's `contains` goes through NSString on Linux, and
        // took 40 % of the generator's time on a schema of 2,000 entities).
        var tag = "$modelgen$"
        var suffix = 0
        while Self.occurs(tag, in: &body) {
            suffix += 1
            tag = "$modelgen\(suffix)$"
        }
        return """
        -- Safely deletes the \(entity.name) objects with these ids (all of them when ids is NULL), in the
        -- caller's transaction (ModelGen's plan for \(entity.name)); with dry_run, reports the same and
        -- changes nothing. Tables resolve in the schema the function was created in. The ids collected
        -- are held in arrays while there are at most \(Self.defaultArrayClosureLimit) of any entity (the setting
        -- \(Self.arrayClosureLimitSetting) changes the bound), in temporary tables past it.
        DROP FUNCTION IF EXISTS \(Self.functionName(for: entity))(bigint[]);
        CREATE OR REPLACE FUNCTION \(Self.functionName(for: entity))(ids bigint[], dry_run boolean DEFAULT false) RETURNS jsonb
        LANGUAGE plpgsql SET client_min_messages = warning SET search_path FROM CURRENT SET random_page_cost = \(Self.randomPageCost) AS \(tag)
        #variable_conflict use_column
        DECLARE
        \(declarations(small: small, hasCycles: hasCycles, relocks: relocks))BEGIN
        \(body)END
        \(tag);
        """
    }

    /// The temporary table that holds, on the general path, the ids of a function's `position`th
    /// collecting entity (from 0) locked before the closure is collected again.
    public static func lockedTable(_ position: Int) -> String { "pg_temp.modelgen_locked_\(position + 1)" }

    /// One path of the function, from collecting the closure to making the report.
    private func emit(_ path: Path, hasCycles: Bool, locked: Set<String>, relocks: Bool, indent: String, _ emitLine: (String) -> Void) {
        let program = path.program, renderer = path.renderer, isSmall = path.storage == .arrays
        // Collected top down, the objects asked for are locked as they are read, and each level after.
        let topDown = renderer.collectsTopDown
        func line(_ text: String) { emitLine(indent + text) }
        // The small path leaves for the general one when a closure outgrows the limit.
        func leaveIfLarge(_ arrays: String, indent: String) {
            line(indent + "IF cardinality(\(arrays)_id) > \(DeletionSQLRenderer.arrayLimitVariable) THEN EXIT \(Self.smallPath); END IF;")
        }
        // The objects asked for, the start of the closure.
        func collectRoot(indent: String) {
            let root = program.root.closureTable
            // Locked as they are read, the rows come once each without DISTINCT (which FOR UPDATE does not allow).
            let select = topDown ? "SELECT t.id" : "SELECT DISTINCT t.id", lock = topDown ? " FOR UPDATE" : ""
            if isSmall {
                line(indent + "\(root)_id := ARRAY(\(select) FROM \(program.root.table) AS t WHERE t.id = ANY($1) ORDER BY t.id\(lock));")
                leaveIfLarge(root, indent: indent)
                if renderer.keepsPaths {
                    line(indent + "\(root)_parent := array_fill(NULL::bigint, ARRAY[cardinality(\(root)_id)]);")
                    line(indent + "\(root)_edge := array_fill(NULL::integer, ARRAY[cardinality(\(root)_id)]);")
                }
                if renderer.keepsRounds { line(indent + "\(root)_round := array_fill(0, ARRAY[cardinality(\(root)_id)]);") }
            } else {
                line(indent + "INSERT INTO \(root) (id) \(select) FROM \(program.root.table) AS t WHERE $1 IS NULL OR t.id = ANY($1)\(topDown ? " ORDER BY t.id" : "")\(lock);")
                line(indent + "ANALYZE \(root);")
            }
        }
        if isSmall {
            line("IF $1 IS NULL THEN EXIT \(Self.smallPath); END IF;")
            line("\(DeletionSQLRenderer.arrayLimitVariable) := coalesce(nullif(current_setting(\(literal(Self.arrayClosureLimitSetting)), true), '')::integer, \(Self.defaultArrayClosureLimit));")
        } else {
            for target in program.targets {
                line("CREATE TEMP TABLE IF NOT EXISTS \(target.closureTable) (id bigint PRIMARY KEY, parent_id bigint, edge integer, round integer NOT NULL DEFAULT 0) ON COMMIT DROP;")
                if hasCycles { line("CREATE INDEX IF NOT EXISTS \(DeletionProgram.roundIndex(of: target.closureTable)) ON \(target.closureTable) (round);") }
                line("DELETE FROM \(target.closureTable);")
            }
            if relocks {
                for position in program.targets.indices {
                    line("CREATE TEMP TABLE IF NOT EXISTS \(Self.lockedTable(position)) (id bigint PRIMARY KEY) ON COMMIT DROP;")
                }
            }
        }
        collectRoot(indent: "")
        // One collection statement, added to the closure (a table's rows, or its arrays); with
        // `counter`, the rows it adds are summed into that variable.
        func collectStatement(_ sql: String, into entity: String, round: String, analysis: Analysis, counter: String?, indent: String) {
            let target = path.target(entity)
            if isSmall {
                // The rows found are appended to the entity's arrays in one statement (`array_agg`
                // of no rows is NULL, and an array `|| NULL` is the array), their count to the counter.
                let arrays = target.closureTable
                let appended = renderer.arrayColumns.map { array, column, _ in
                    "\(arrays)_\(array) || array_agg(\(array == "round" ? round : "r." + column))"
                }
                let into = renderer.arrayColumns.map { "\(arrays)_\($0.array)" }
                let (count, counted) = counter.map { (", \($0) + count(*)", ", \($0)") } ?? ("", "")
                line(indent + "SELECT \(appended.joined(separator: ", "))\(count) INTO \(into.joined(separator: ", "))\(counted) FROM (\(sql)) AS r;")
                leaveIfLarge(arrays, indent: indent)
            } else {
                line(indent + sql + ";")
                switch analysis {
                case .never: break
                case .always: line(indent + "ANALYZE \(target.closureTable);")
                case .unlessRelocking: line(indent + "IF NOT relocking THEN ANALYZE \(target.closureTable); END IF;")
                }
                if let counter {
                    line(indent + "GET DIAGNOSTICS changed = ROW_COUNT;")
                    line(indent + "\(counter) := \(counter) + changed;")
                }
            }
        }
        // The collection statements; with `counter`, the rows they add are summed into it. With
        // `analysis`, each closure table gets statistics as soon as it is filled, so that the
        // statements reading it (the next level's collection, the checks, updates and deletes) probe
        // the indexes of large tables rather than scan them: a temporary table has no statistics
        // until analyzed, and the planner then guesses thousands of rows.
        func collect(counting counter: String? = nil, analysis: Analysis, indent: String) {
            for (collection, targets) in zip(program.collections, path.collectionTargets) {
                switch collection {
                case let .once(sql):
                    collectStatement(sql, into: targets[0], round: "0", analysis: analysis, counter: counter, indent: indent)
                case let .untilStable(statements):
                    // Temporary tables have no statistics; without them the planner scans whole tables each round.
                    if !isSmall { for target in program.targets { line(indent + "ANALYZE \(target.closureTable);") } }
                    line(indent + "modelgen_previous_round := 0;")
                    line(indent + "LOOP")
                    line(indent + "    modelgen_current_round := modelgen_current_round + 1;")
                    line(indent + "    added := 0;")
                    for (sql, target) in zip(statements, targets) {
                        collectStatement(sql, into: target, round: "modelgen_current_round", analysis: .never, counter: "added", indent: indent + "    ")
                    }
                    if let counter { line(indent + "    \(counter) := \(counter) + added;") }
                    line(indent + "    EXIT WHEN added = 0;")
                    if !isSmall {
                        // Plans made when the tables were small scan them whole: each time the rows
                        // collected double, new statistics make the planner use the indexes (log n times in all).
                        line(indent + "    collected := collected + added;")
                        line(indent + "    IF collected > 2 * analyzed THEN")
                        for target in program.targets { line(indent + "        ANALYZE \(target.closureTable);") }
                        line(indent + "        analyzed := collected;")
                        line(indent + "    END IF;")
                    }
                    line(indent + "    modelgen_previous_round := modelgen_current_round;")
                    line(indent + "END LOOP;")
                }
            }
        }
        // Lock, then check: every collected row is locked (FOR UPDATE) before any check runs, so a
        // concurrent insert of a reference to one (which takes a KEY SHARE lock on it) waits for this
        // transaction and then fails, and every reference committed before the lock is seen by the
        // checks and counts. Collected top down, the rows are locked as they are collected.
        func lock(indent: String) {
            for target in program.targets where locked.contains(target.entity) && !topDown {
                line(indent + "PERFORM 1 FROM \(target.table) AS t JOIN \(renderer.closure(target.entity, as: "c")) ON c.id = t.id ORDER BY t.id FOR UPDATE OF t;")
            }
        }
        guard relocks else {
            collect(analysis: .always, indent: "")
            lock(indent: "")
            emitChecksAndChanges(path, indent: indent, refusalRecollects: false, recollect: { _ in }, emitLine: emitLine)
            return
        }
        // Empties the closure but the objects asked for, which `collectRoot` reads again.
        func emptyClosures(indent: String) {
            for target in program.targets {
                let closure = target.closureTable
                if !isSmall {
                    line(indent + "DELETE FROM \(closure);")
                } else if target.entity != program.root.entity {
                    // The root's arrays are made anew by `collectRoot`.
                    for (array, _, type) in renderer.arrayColumns { line(indent + "\(closure)_\(array) := '{}'::\(type);") }
                }
            }
        }
        // Otherwise the closure is collected, then locked with the join rows it was collected
        // through (deleting a join row locks neither row it links), in a loop that collects once
        // per turn: while every collected row keeps the link it was collected through, what was
        // attached meanwhile is collected (`relocking`) and locked on the next turn, until nothing
        // new turns up. When a row lost its link (another session detached it before its lock),
        // the closure is collected again from the objects asked for (`recollected`), over the links
        // the locks hold still: the detached row is no longer reached and survives, as PostgreSQL's
        // own cascade would leave it; the loop ends when that closure is the one locked.
        var unchanged: [String] = []
        for (position, target) in program.targets.enumerated() {
            let closure = target.closureTable
            if isSmall {
                unchanged.append("ARRAY(SELECT unnest(\(closure)_id) ORDER BY 1) = ARRAY(SELECT unnest(\(closure)_locked) ORDER BY 1)")
            } else {
                let locked = Self.lockedTable(position)
                unchanged.append("(SELECT count(*) FROM \(closure)) = (SELECT count(*) FROM \(locked))")
                unchanged.append("NOT EXISTS (SELECT 1 FROM \(closure) AS c WHERE NOT EXISTS (SELECT 1 FROM \(locked) AS l WHERE l.id = c.id))")
            }
        }
        line("relocking := false;")
        line("recollected := false;")
        line("LOOP")
        line("    relocked := 0;")
        collect(counting: "relocked", analysis: isSmall ? .never : .unlessRelocking, indent: "    ")
        line("    EXIT WHEN relocking AND relocked = 0;")
        line("    IF recollected THEN")
        line("        EXIT WHEN " + unchanged.joined(separator: " AND ") + ";")
        line("    END IF;")
        lock(indent: "    ")
        for lock in path.linkLocks { line("    \(lock);") }
        line("    relocking := NOT (\(path.brokenLinks));")
        line("    recollected := NOT relocking;")
        line("    IF recollected THEN")
        for (position, target) in program.targets.enumerated() {
            let closure = target.closureTable
            if isSmall {
                line("        \(closure)_locked := \(closure)_id;")
            } else {
                let locked = Self.lockedTable(position)
                line("        DELETE FROM \(locked);")
                line("        INSERT INTO \(locked) (id) SELECT id FROM \(closure);")
            }
        }
        emptyClosures(indent: "        ")
        collectRoot(indent: "        ")
        line("    END IF;")
        line("END LOOP;")
        // A row keeps the cascade path of the turn that first collected it: one collected before
        // another session committed a shorter way to it (a link to an object asked for) keeps the
        // longer one. A refusal collects the closure once more, under the locks held (no row can
        // join or leave it now), so that each blocker's path is the one a serial run names.
        func recollect(_ extra: String) {
            emptyClosures(indent: extra)
            collectRoot(indent: extra)
            collect(analysis: isSmall ? .never : .always, indent: extra)
        }
        emitChecksAndChanges(path, indent: indent, refusalRecollects: true, recollect: recollect, emitLine: emitLine)
    }

    /// How a general path's collection statements give their closure table statistics.
    private enum Analysis {
        case never, always
        /// Except on the turns of the lock loop that collect what was attached meanwhile.
        case unlessRelocking
    }

    /// The rest of a path, once its closure is collected and locked: the checks, the
    /// nullifications, detachments and deletions, and the report. When `refusalRecollects`, a
    /// refusal collects the closure again (`recollect` emits that, at the extra indent it is
    /// given) before it walks the blockers' cascade paths.
    private func emitChecksAndChanges(_ path: Path, indent: String, refusalRecollects: Bool, recollect: (String) -> Void, emitLine: (String) -> Void) {
        let program = path.program, renderer = path.renderer, isSmall = path.storage == .arrays
        func line(_ text: String) { emitLine(indent + text) }
        // Every check's blockers first; then, once for all of them, the cascade path that reached
        // each, walked back through the closure's parent_id and edge (`Artist#3 → albums
        // (cascade) → Album#2`).
        for check in program.checks {
            // Each blocked object once, in id order, with the surviving objects in id order, in
            // the words of the SQLite executor's refusal (`CheckKind.reason`): its text around
            // the list of those objects.
            let placeholder = "\u{1}"
            let reason = check.reason(others: placeholder).components(separatedBy: placeholder).enumerated()
                .flatMap { index, text in (index == 0 ? [] : ["blocker.others"]) + (text.isEmpty ? [] : [literal(text)]) }
                .joined(separator: " || ")
            line("FOR blocker IN SELECT b.subject, string_agg(\(literal(check.other + "#")) || b.other, ', ' ORDER BY b.other) AS others FROM (\(check.sql)) AS b GROUP BY b.subject ORDER BY b.subject LOOP")
            line("    blocked_entities := blocked_entities || \(literal(check.subject))::text;")
            line("    blocked_ids := blocked_ids || blocker.subject::bigint;")
            line("    blocked_reasons := blocked_reasons || (\(reason));")
            line("END LOOP;")
        }
        if !program.checks.isEmpty {
            if refusalRecollects, !program.edges.isEmpty {
                line("IF coalesce(array_length(blocked_ids, 1), 0) > 0 THEN")
                recollect("    ")
                line("END IF;")
            }
            line("FOR blocked IN 1..coalesce(array_length(blocked_ids, 1), 0) LOOP")
            line("    path := blocked_entities[blocked] || '#' || blocked_ids[blocked];")
            // Without cascade edges every blocker is one of the ids given: its path is itself.
            if !program.edges.isEmpty {
                line("    walk_entity := blocked_entities[blocked]; walk_id := blocked_ids[blocked];")
                line("    FOR step IN 1..64 LOOP")
                line("        walk_parent := NULL;")
                line("        CASE walk_entity")
                for target in program.targets {
                    line("        WHEN \(literal(target.entity)) THEN SELECT c.parent_id, c.edge INTO walk_parent, walk_edge FROM \(renderer.closure(target.entity, as: "c")) WHERE c.id = walk_id;")
                }
                line("        ELSE NULL;")
                line("        END CASE;")
                line("        EXIT WHEN walk_parent IS NULL;")
                line("        CASE walk_edge")
                for (index, edge) in program.edges.enumerated() {
                    line("        WHEN \(index) THEN walk_entity := \(literal(edge.source)); path := \(literal(edge.source + "#")) || walk_parent || \(literal(" → \(edge.relationship) (cascade) → ")) || path;")
                }
                line("        ELSE EXIT;")
                line("        END CASE;")
                line("        walk_id := walk_parent;")
                line("    END LOOP;")
            }
            line("    problems := problems || format(\(literal("\n  %s cannot be deleted: %s")), path, blocked_reasons[blocked]);")
            line("END LOOP;")
            line("IF problems <> '' THEN")
            line("    RAISE EXCEPTION 'delete refused, nothing was changed:%', problems USING ERRCODE = 'restrict_violation';")
            line("END IF;")
        }
        for nullification in program.nullifications {
            line(nullification.sql + ";")
            line("GET DIAGNOSTICS changed = ROW_COUNT;")
            line("nullified := nullified + changed;")
        }
        for sql in program.detachments + program.joinRowRemovals {
            line(sql + ";")
        }
        for deletion in program.deletions {
            line(deletion.sql + ";")
            line("GET DIAGNOSTICS changed = ROW_COUNT;")
            line("IF changed > 0 THEN deleted := deleted || jsonb_build_object(\(literal(deletion.entity)), changed); END IF;")
        }
        if !isSmall {
            for target in program.targets {
                line("DELETE FROM \(target.closureTable);")
            }
        }
        line("report := jsonb_build_object('deleted', deleted, 'nullified', nullified, 'dryRun', dry_run);")
    }
}
