import ArgumentParser
import Foundation
import ModelGenCore
import ModelGenRuntime

struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate an SQLite database to a new version of its schema, or print the migration.",
        discussion: """
        modelgen migrate NEW.yaml --database FILE [--from OLD.yaml] [--dry-run] [--allow-data-loss] [--json]
          migrates FILE in place, in one transaction, from the schema recorded in it (or from OLD, for \
        a database built from OLD's plain DDL, which records none). Changes that would lose data are \
        refused with counts unless --allow-data-loss; rows that break a change refuse it. Exit 1 \
        when refused (nothing changed).
        modelgen migrate NEW.yaml --database FILE --check
          exit 0 when FILE records NEW, 1 otherwise.
        modelgen migrate OLD.yaml NEW.yaml --dialect sqlite
          prints the statements for review, with the checks --database would run as comments.
        """
    )

    @Argument(help: "NEW.yaml, or OLD.yaml NEW.yaml with --dialect.")
    var schemas: [String]

    @Option(help: "The SQLite database file to migrate.")
    var database: String?

    @Option(help: "The schema the database was built from, when it records none.")
    var from: String?

    @Option(help: "Print the migration from OLD to NEW for this dialect (sqlite).")
    var dialect: String?

    @Flag(help: "Report what the migration would do, with counts; change nothing.")
    var dryRun = false

    @Flag(help: "Allow removing entities, attributes and relationships that hold data.")
    var allowDataLoss = false

    @Flag(help: "Exit 0 when the database records NEW, 1 otherwise; change nothing.")
    var check = false

    @Flag(help: "Print the report as one JSON object.")
    var json = false

    func validate() throws {
        if dialect != nil {
            guard schemas.count == 2, database == nil else { throw ValidationError("--dialect prints the migration from OLD.yaml to NEW.yaml: give both, and no --database") }
        } else {
            guard schemas.count == 1, database != nil else { throw ValidationError("give NEW.yaml and --database FILE (or OLD.yaml NEW.yaml --dialect sqlite)") }
        }
    }

    func run() throws {
        if let dialect {
            try printMigration(dialect: dialect)
            return
        }
        guard let database else { return }
        let new = try SchemaInput.load(schemas[0])
        guard FileManager.default.fileExists(atPath: database) else {
            printError("error: database '\(database)' does not exist")
            throw ExitCode(ExitStatus.schemaError)
        }
        let connection = try SQLiteDatabase(path: database, create: false)
        let migrator = SQLiteMigrator(database: connection)
        let stored = try migrator.storedSchema()
        if check {
            guard stored?.hash == new.canonicalHash else {
                printError("error: \(database) is \(stored.map { "at schema \($0.hash)" } ?? "not recorded at any schema"), not at \(schemas[0]) (\(new.canonicalHash)); run 'modelgen migrate \(schemas[0]) --database \(database)'")
                throw ExitCode(1)
            }
            guard try migrator.floatingPointColumns(of: new) == .untyped else {
                printError("error: \(database) is at \(schemas[0]), but an earlier ModelGen declared its floating-point columns REAL (where -0.0 is stored as 0); run 'modelgen migrate \(schemas[0]) --database \(database)' to rebuild their tables")
                throw ExitCode(1)
            }
            return
        }
        let old: ModelSchema
        if let stored {
            old = try ModelSchema(canonicalJSON: stored.json)
            if let from, try SchemaInput.load(from).canonicalHash != stored.hash {
                printError("warning: \(database) records the schema it is at; --from \(from) differs from it and is ignored")
            }
        } else if let from {
            old = try SchemaInput.load(from)
            let differences = try migrator.differences(from: old)
            guard differences.isEmpty else {
                printError("error: \(database) was not built from \(from): \(differences.joined(separator: "; "))")
                throw ExitCode(ExitStatus.schemaError)
            }
        } else {
            printError("error: \(database) records no schema; give the schema it was built from with --from OLD.yaml")
            throw ExitCode(ExitStatus.schemaError)
        }
        try reportWarnings(MigrationPlanner.plan(from: old, to: new).warnings, in: schemas[0])
        do {
            let report = try migrator.migrate(from: old, to: new, allowDataLoss: allowDataLoss, dryRun: dryRun)
            print(json ? report.json : report.description)
        } catch let refused as MigrationRefused {
            if json { print(refused.report.json) }
            printError("error: \(refused)")
            throw ExitCode(ExitStatus.refused)
        } catch let error as SQLiteError {
            printError(databaseErrorMessage(error, database: database))
            throw ExitCode(ExitStatus.schemaError)
        }
    }

    /// Prints the plan's warnings located in the new schema file, as the compiler prints its diagnostics.
    private func reportWarnings(_ warnings: [MigrationPlan.Warning], in path: String) throws {
        guard !warnings.isEmpty else { return }
        SchemaInput.report(ModelGen.diagnostics(for: warnings, path: path, bytes: try SchemaInput.read(path)))
    }

    /// The statements from OLD to NEW, with the checks as comments.
    private func printMigration(dialect: String) throws {
        guard dialect == "sqlite" || dialect == "postgresql" else {
            printError("error: --dialect \(dialect): use 'sqlite' or 'postgresql'")
            throw ExitCode(ExitStatus.schemaError)
        }
        let old = try SchemaInput.load(schemas[0]), new = try SchemaInput.load(schemas[1])
        if dialect == "postgresql" {
            try printPostgreSQLMigration(from: old, to: new)
            return
        }
        let plan = MigrationPlanner.plan(from: old, to: new)
        try reportWarnings(plan.warnings, in: schemas[1])
        var lines = ["-- Migration of \(old.name) from \(plan.from) to \(plan.to), for SQLite.",
                     "-- For review: 'modelgen migrate NEW.yaml --database FILE' runs it with the checks below and refuses with counts."]
        guard !plan.isEmpty else {
            print((lines + ["-- Nothing to do."]).joined(separator: "\n"))
            return
        }
        for check in plan.checks {
            lines.append("-- \(check.kind == .refusal ? "refused when" : allowDataLoss ? "loses" : "refused (data loss) when") rows are found: \(check.message)")
            lines.append("--   \(check.countSQL)")
        }
        // The old indexes go and the new ones come (the migrator keeps those that are unchanged).
        let oldIndexes = DDLGenerator(schema: old, dialect: .sqlite).indexDefinitions().map { "DROP INDEX IF EXISTS \(SQLDialect.sqlite.quote($0.name));" }
        lines += ["PRAGMA foreign_keys = OFF;", "BEGIN IMMEDIATE;"] + oldIndexes + plan.statements + plan.indexes.map(\.sql)
        lines += plan.checkedTables.map { "SELECT * FROM pragma_foreign_key_check(\(SQLDialect.sqlite.literal($0)));  -- must return no row" }
        lines += ["COMMIT;", "PRAGMA foreign_keys = ON;"]
        print(lines.joined(separator: "\n"))
    }

    /// One transaction for PostgreSQL: the checks raise (so nothing changes) when the data breaks a
    /// step, then the tables change in place and the deletion functions are replaced.
    private func printPostgreSQLMigration(from old: ModelSchema, to new: ModelSchema) throws {
        try reportWarnings(MigrationPlanner.plan(from: old, to: new).warnings, in: schemas[1])
        let statements = MigrationPlanner.postgresqlStatements(from: old, to: new, allowDataLoss: allowDataLoss)
        var lines = ["-- Migration of \(old.name) from \(old.canonicalHash) to \(new.canonicalHash), for PostgreSQL: run it as it is (one transaction)."]
        guard !statements.isEmpty else {
            print((lines + ["-- Nothing to do."]).joined(separator: "\n"))
            return
        }
        lines.append("BEGIN;")
        lines += statements
        lines += PostgreSQLDeletionFunctions(schema: new, plans: DeletionPlanner(schema: new).plans()).functions()
        lines.append("COMMIT;")
        print(lines.joined(separator: "\n"))
    }
}
