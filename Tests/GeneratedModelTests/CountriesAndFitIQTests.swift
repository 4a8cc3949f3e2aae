import Foundation
import ModelGenRuntime
import XCTest

/// Delete-where on the Countries example and the FitIQ model's deletions with no manual
/// relationship breaking.
final class CountriesAndFitIQTests: XCTestCase {
    func testDeleteVisitedCountriesWithAPredicate() throws {
        let container = try ModelContainer(for: Countries.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = container.mainContext
        for (name, visited) in [("France", true), ("Peru", false), ("Japan", true)] {
            context.insert(Country(name: name, visited: visited))
        }
        try context.save()
        try context.delete(model: Country.self, where: #Predicate { $0.visited })
        XCTAssertEqual(try context.fetch(FetchDescriptor<Country>()).map(\.name), ["Peru"])
        try context.delete(model: Country.self)
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Country>()), 0)
    }

    func testDeletingAProfileWithAOneToOneNeedsNoManualBreaking() throws {
        let container = try ModelContainer(for: FitIQ.self)
        let context = container.mainContext
        let profile = SDUserProfile(userID: "u1", name: "Ada", createdAt: Date(timeIntervalSince1970: 0))
        let preferences = SDDietaryAndActivityPreferences(dailyCalorieGoal: 2_000)
        profile.dietaryAndActivityPreferences = preferences
        XCTAssertTrue(preferences.userProfile === profile)
        let session = SDSleepSession(startDate: Date(), endDate: Date())
        session.stages = [SDSleepStage(stage: "deep", startDate: Date(), endDate: Date())]
        profile.sleepSessions = [session]
        profile.progressEntries = [SDProgressEntry(userID: "u1", metric: "weight", value: 70, date: Date())]
        context.insert(profile)
        context.insert(SDOutboxEvent(eventType: "sync", payload: Data([1]), createdAt: Date()))
        try context.save()

        context.delete(profile)
        try context.save()
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<SDSleepStage>()), 0)
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<SDDietaryAndActivityPreferences>()), 0)
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<SDOutboxEvent>()), 1, "standalone events survive")
        XCTAssertNil(preferences.modelContext)

        context.insert(SDUserProfile(userID: "u2", name: "Bob", createdAt: Date()))
        try context.save()
        container.deleteAllData()
        XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<SDOutboxEvent>()), 0)
    }
}
