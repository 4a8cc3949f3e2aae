import ArgumentParser
import Foundation
import ModelGenCore
import ModelGenRuntime

struct DeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Safely delete objects from an SQLite database built from the schema's DDL.",
        discussion: """
        Runs the entity's deletion plan in one transaction: cascades are followed, deny rules and \
        required references are checked, survivors' references are set to NULL, and rows are \
        deleted children first. A refused delete changes nothing and exits 1. --where takes a \
        predicate like the body of a Swift #Predicate, for example 'visited == true' or \
        'name.hasPrefix("A") && weight > 10'.
        """
    )

    @Argument(help: "The schema file (YAML).")
    var schema: String

    @Option(help: "The SQLite database file.")
    var database: String

    @Argument(help: "The entity to delete from.")
    var entity: String

    @Option(name: .customLong("id"), parsing: .unconditionalSingleValue, help: "An id to delete (repeatable; a negative one too: --id -5).")
    var ids: [Int64] = []

    @Flag(help: "Delete every object of the entity.")
    var all = false

    @Option(name: .customLong("where"), parsing: .unconditional, help: "Delete the objects matching this predicate.")
    var predicate: String?

    @Flag(help: "Report what would be deleted and nullified; change nothing.")
    var dryRun = false

    @Flag(help: "Print the report as one JSON object.")
    var json = false

    func validate() throws {
        let selectors = (ids.isEmpty ? 0 : 1) + (all ? 1 : 0) + (predicate == nil ? 0 : 1)
        guard selectors == 1 else {
            throw ValidationError("give exactly one of --id N (repeatable), --all or --where PREDICATE")
        }
    }

    func run() throws {
        let model = try SchemaInput.load(schema)
        let target = try SchemaInput.entity(named: entity, in: model)
        let seed: DeletionSeed
        if all {
            seed = .all
        } else if let predicate {
            switch WhereClauseTranslator.translate(predicate, entity: target, schema: model) {
            case let .success(condition):
                var renderer = PredicateSQLRenderer(dialect: .sqlite, table: target.tableName)
                seed = .matching(condition: renderer.condition(condition), bindings: renderer.bindings)
            case let .failure(failure):
                printError("error: invalid --where predicate: \(failure.message) (column \(failure.column))")
                throw ExitCode(ExitStatus.schemaError)
            }
        } else {
            seed = .ids(ids)
        }
        guard FileManager.default.fileExists(atPath: database) else {
            printError("error: database '\(database)' does not exist; create it from the generated .sqlite.sql first")
            throw ExitCode(ExitStatus.schemaError)
        }
        let program = DeletionSQLRenderer(schema: model, dialect: .sqlite).program(for: DeletionPlanner(schema: model).plan(for: target.name))
        let report: DeletionReport
        do {
            let connection = try SQLiteDatabase(path: database, create: false)
            // In a store the runtime keeps (it records its schema), the ids of the rows deleted are
            // not given to new objects again (see SQLiteDatabase.recordLargestIDs).
            let keptByRuntime = try SQLiteMigrator(database: connection).storedSchema() != nil
            report = try DeletionExecutor(database: connection,
                                          recordingLargestIDsOf: keptByRuntime ? model.entities.map { ($0.tableName, SQLDialect.sqlite.quote($0.tableName)) } : [])
                .run(program, seed: seed, dryRun: dryRun)
        } catch let refusal as DeletionRefused {
            printError("error: \(refusal)")
            throw ExitCode(ExitStatus.refused)
        } catch let error as SQLiteError {
            printError(databaseErrorMessage(error, database: database))
            throw ExitCode(ExitStatus.schemaError)
        }
        if !report.missingIDs.isEmpty {
            printError("warning: no \(target.name) with id \(report.missingIDs.map(String.init).joined(separator: ", ")); ignored")
        }
        if json {
            print(report.json)
        } else {
            let deleted = report.deleted.map { "\($0.count) \($0.entity)" }.joined(separator: ", ")
            print("\(dryRun ? "Would delete" : "Deleted") \(deleted.isEmpty ? "nothing" : deleted); \(report.nullified) reference(s) set to nil, \(report.joinRowsRemoved) join row(s) removed.")
        }
    }
}
