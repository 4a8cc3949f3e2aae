import Foundation
import ModelGenRuntime
import XCTest

/// Entities named `Date`, `Data`, `URL` and `Error`, and keyword names, compile and work.
final class FoundationNamedEntityTests: XCTestCase {
    func testFoundationNamedEntitiesAndKeywordsRoundTrip() throws {
        let container = try ModelGenRuntime.ModelContainer(for: NameClashes.self)
        let context = container.mainContext
        let date = NameClashes_Date(when: Foundation.Date(timeIntervalSince1970: 100))
        let data = NameClashes_Data(bytes: Foundation.Data([1, 2]), link: Foundation.URL(string: "https://example.com"), id2: Foundation.UUID())
        data.date = date
        context.insert(date)
        let order = Order(group: "g", class: "c")
        let select = Select(where: "w")
        select.order = order
        context.insert(order)
        try context.save()

        let reader = ModelGenRuntime.ModelContext(container)
        let loaded = try XCTUnwrap(try reader.fetch(FetchDescriptor<NameClashes_Date>()).first)
        XCTAssertEqual(loaded.kind, .default)
        XCTAssertEqual(loaded.when, Foundation.Date(timeIntervalSince1970: 100))
        XCTAssertEqual(loaded.data.first?.bytes, Foundation.Data([1, 2]))
        XCTAssertEqual(loaded.data.first?.amount, Foundation.Decimal(string: "1.50"))
        let loadedOrder = try XCTUnwrap(try reader.fetch(FetchDescriptor<Order>()).first)
        XCTAssertEqual(loadedOrder.default, 0)
        XCTAssertEqual(loadedOrder.select.first?.where, "w")
        XCTAssertEqual(loadedOrder.select.first?.cached, 7, "a loaded object gets its transient default")

        context.delete(date)
        context.delete(order)
        try context.save()
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor<NameClashes_Data>()), 0)
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor<Select>()), 0)

        // Entities named like the runtime's own types: generated code names those through the module.
        let program = DeletionProgram(sql: "DROP TABLE x")
        let named = ModelContext()
        named.program = program
        XCTAssertEqual(named.entity, .Type, "an enum case named Type, and an attribute named entity beside the static entity")
        context.insert(named)
        for empty in [EntityDescription() as any ModelGenRuntime.PersistentModel, ModelBackingData(), ModelSchemaDefinition(), PersistentModel(), DeletionRefused()] {
            XCTAssertNil(empty.modelContext)
        }
        try context.save()
        let second = ModelGenRuntime.ModelContext(container)
        let reloaded = try XCTUnwrap(try second.fetch(FetchDescriptor<ModelContext>()).first)
        XCTAssertEqual(reloaded.program?.sql, "DROP TABLE x")
        XCTAssertEqual(reloaded.entity, .Type)
        try context.delete(model: DeletionProgram.self)
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor<ModelContext>()), 0)
    }
}

/// The generated `Date` and `Data` classes, named apart from Foundation's in this file.
typealias NameClashes_Date = NameClashTests.Date
typealias NameClashes_Data = NameClashTests.Data
