import FitIQWorkload
import Foundation
import ModelGenRuntime

/// The four ways of deleting that the benchmark compares, each run in a fresh child process.
enum Method: String, CaseIterable {
    /// SQLite's own `ON DELETE CASCADE`: one `DELETE` on the root table, foreign keys on.
    case sqliteCascade = "sqlite-cascade"
    /// The generated `FitIQ.deletionProgram(for:)` run by the runtime's `DeletionExecutor`.
    case runtime
    /// `container.mainContext.delete(model:)` / `deleteAllData()`-style whole-entity delete (scenario B only).
    case deleteModel = "delete-model"
    /// The same plan through the `modelgen delete` command-line tool (a process, timed from outside).
    case cli
    /// The deletion guide's per-object pattern through the runtime: fetch, break, delete, save.
    case perObject = "per-object"
}

/// A = one profile, B = all profiles, C = the profiles with even ids.
enum Scenario: String, CaseIterable {
    case one = "A", all = "B", even = "C"

    var sqlCondition: String {
        switch self {
        case .one: "id = 1"
        case .all: "1"
        case .even: "id % 2 = 0"
        }
    }

    /// Profiles that survive out of `profiles`.
    func survivors(of profiles: Int) -> Int {
        switch self {
        case .one: profiles - 1
        case .all: 0
        case .even: profiles - profiles / 2
        }
    }
}

/// What a child process reports.
struct Measurement {
    var seconds: Double
    var statements: Int?
    var peakKilobytes: Int?
}

/// Runs one method on one database file inside this (child) process.
enum Measure {
    static func run(_ method: Method, _ scenario: Scenario, database path: String) throws -> Measurement {
        switch method {
        case .sqliteCascade:
            let database = try SQLiteDatabase(path: path, create: false)
            let start = DispatchTime.now()
            try database.execute("DELETE FROM sd_user_profile WHERE \(scenario.sqlCondition)")
            return Measurement(seconds: elapsed(since: start), statements: 1, peakKilobytes: peakKilobytes())
        case .runtime:
            let database = try SQLiteDatabase(path: path, create: false)
            let program = FitIQ.deletionProgram(for: "SDUserProfile")!
            let before = database.statementsExecuted
            let start = DispatchTime.now()
            let seed: DeletionSeed = scenario == .all ? .all : .matching(condition: scenario.sqlCondition, bindings: [])
            _ = try DeletionExecutor(database: database).run(program, seed: seed)
            return Measurement(seconds: elapsed(since: start), statements: database.statementsExecuted - before, peakKilobytes: peakKilobytes())
        case .deleteModel:
            let container = try ModelContainer(for: FitIQ.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path), usesWriteAheadLog: false))
            let before = container.statementsExecuted
            let start = DispatchTime.now()
            try container.mainContext.delete(model: SDUserProfile.self)
            return Measurement(seconds: elapsed(since: start), statements: container.statementsExecuted - before, peakKilobytes: peakKilobytes())
        case .perObject:
            let container = try ModelContainer(for: FitIQ.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path), usesWriteAheadLog: false))
            let context = container.mainContext
            let before = container.statementsExecuted
            let start = DispatchTime.now()
            try deleteObjectByObject(scenario, context)
            return Measurement(seconds: elapsed(since: start), statements: container.statementsExecuted - before, peakKilobytes: peakKilobytes())
        case .cli:
            preconditionFailure("the CLI is timed from the parent process")
        }
    }

    /// The guide's `deleteAllUserData`, restricted to the scenario's profiles: deepest first,
    /// every child's parent set to nil before it is deleted, one save at the end.
    private static func deleteObjectByObject(_ scenario: Scenario, _ context: ModelContext) throws {
        var profiles = try context.fetch(FetchDescriptor<SDUserProfile>())
        switch scenario {
        case .one: profiles = profiles.filter { $0.persistentModelID.id == 1 }
        case .all: break
        case .even: profiles = profiles.filter { ($0.persistentModelID.id ?? 1) % 2 == 0 }
        }
        for profile in profiles {
            for session in profile.sleepSessions {
                for stage in session.stages {
                    stage.session = nil
                    context.delete(stage)
                }
                session.userProfile = nil
                context.delete(session)
            }
            for entry in profile.progressEntries {
                entry.userProfile = nil
                context.delete(entry)
            }
            for snapshot in profile.activitySnapshots {
                snapshot.userProfile = nil
                context.delete(snapshot)
            }
            for attribute in profile.physicalAttributes {
                attribute.userProfile = nil
                context.delete(attribute)
            }
            if let preferences = profile.dietaryAndActivityPreferences {
                preferences.userProfile = nil
                context.delete(preferences)
            }
            context.delete(profile)
        }
        try context.save()
    }

    static func elapsed(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }

    /// The process's peak resident memory (VmHWM), in kilobytes.
    static func peakKilobytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }
}
