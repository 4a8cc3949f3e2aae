import Foundation
@_spi(Backend) import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// A deleted object's delete rules follow the relationships it has when the save runs, as
/// SwiftData's do, on both backends: random saves relink tickets to other holders (or none) and
/// delete tickets, whose deletion cascades to the holder they have now — not to one they let go
/// of before their deletion, which must survive; a new ticket deleted before it was ever saved
/// is discarded with its holder if that is new too.
extension BothBackendsTests {
    func testDeleteRulesFollowTheRelationshipsObjectsHaveNow() async throws {
        try await onBothBackends(Seats.self, seeds: UInt64(1)...4, deleteTickets)
    }

    /// An object to delete whose required relationship the app emptied first (the loan's book)
    /// still goes: the key its row cannot be without stays as stored until the row goes.
    func testARequiredRelationshipEmptiedBeforeTheDeleteDoesNotBlockIt() async throws {
        try await onBothBackends(Lending.self) { flow in
            let context = flow.makeContext()
            let book = Book(title: "Dune"), loan = Loan(borrower: "ann")
            loan.book = book
            context.insert(loan)
            try await context.save()
            loan.book = nil
            context.delete(loan)
            try await context.save()
            try await assertEqual(await context.fetchCount(FetchDescriptor<Loan>()), 0, flow.name)
            try await assertEqual(await context.fetchCount(FetchDescriptor<Book>()), 1, flow.name)
        }
    }

    /// One run: guests and tickets, then saves of relinks and deletions, checked against a model.
    private func deleteTickets(seed: UInt64, on flow: SeedFlowBackend) async throws {
        let (backend, makeContext) = ("\(flow.name), seed \(seed)", flow.makeContext)
        var random = SeededRandom(seed: seed)
        var guests: Set<String> = []
        var tickets: [Int: String?] = [:]               // number: holder
        var nextGuest = 0, nextTicket = 0
        func stored() async throws -> (Set<String>, [Int: String?]) {
            let reader = makeContext()
            let storedGuests = try await reader.fetch(FetchDescriptor<Guest>())
            let storedTickets = try await reader.fetch(FetchDescriptor<Ticket>())
            try await reader.load(\.holder, of: storedTickets)
            return (Set(storedGuests.map(\.name)), Dictionary(uniqueKeysWithValues: storedTickets.map { ($0.number, $0.holder?.name) }))
        }
        for round in 0..<40 {
            let context = makeContext()
            // New guests and tickets now and then, so that there is always something to delete.
            while guests.count < 4 {
                nextGuest += 1
                context.insert(Guest(name: "g\(nextGuest)"))
                guests.insert("g\(nextGuest)")
            }
            try await context.save()
            let heldGuests = try await context.fetch(FetchDescriptor<Guest>())
            try await context.load(\.tickets, of: heldGuests)
            while tickets.count < 5 {
                nextTicket += 1
                let ticket = Ticket(number: nextTicket)
                let holder = heldGuests.randomElement(using: &random)
                ticket.holder = holder
                context.insert(ticket)
                tickets[nextTicket] = .some(holder?.name)
            }
            try await context.save()
            let heldTickets = try await context.fetch(FetchDescriptor<Ticket>())
            try await context.load(\.holder, of: heldTickets)
            var log: [String] = []
            var deleted: Set<Int> = []
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                guard let ticket = heldTickets.filter({ !deleted.contains($0.number) }).randomElement(using: &random) else { break }
                if Bool.random(using: &random) {
                    let holder = Bool.random(using: &random) ? heldGuests.filter({ guests.contains($0.name) }).randomElement(using: &random) : nil
                    ticket.holder = holder
                    tickets[ticket.number] = .some(holder?.name)
                    log.append("ticket \(ticket.number).holder = \(holder?.name ?? "nil")")
                }
                if Bool.random(using: &random) {
                    context.delete(ticket)
                    deleted.insert(ticket.number)
                    log.append("delete ticket \(ticket.number)")
                }
            }
            // A new ticket deleted before it is saved is discarded with its holder when that is
            // new too; a saved holder stays (its row never referred to the ticket).
            if Bool.random(using: &random) {
                nextTicket += 1
                let ticket = Ticket(number: nextTicket)
                let holder: Guest?
                if Bool.random(using: &random) {
                    nextGuest += 1
                    holder = Guest(name: "g\(nextGuest)")
                } else {
                    holder = heldGuests.filter({ guests.contains($0.name) }).randomElement(using: &random)
                }
                ticket.holder = holder
                context.insert(ticket)
                context.delete(ticket)
                log.append("insert ticket \(nextTicket) held by \(holder?.name ?? "nobody"), delete it")
            }
            // The model: each deleted ticket takes its holder as it is now; the holder's other
            // tickets lose it (Guest.tickets nullifies).
            func holderGoes(_ holder: String?) {
                guard let holder, guests.remove(holder) != nil else { return }
                for (other, otherHolder) in tickets where otherHolder == holder { tickets[other] = .some(nil) }
            }
            for number in deleted {
                holderGoes(tickets[number]!)
                tickets[number] = nil
            }
            try await context.save()
            let (storedGuests, storedTickets) = try await stored()
            let trail = "\(backend), round \(round): \(log.joined(separator: "; "))"
            XCTAssertEqual(storedGuests, guests, trail)
            XCTAssertEqual(storedTickets, tickets, trail)
            if testRun?.failureCount ?? 0 > 0 { return }
        }
    }
}

extension BothBackendsTests {
    /// Deleting an object of a ring (each object the required `next` of one other, a one-to-one
    /// of the entity with itself, whose `previous` cascades) deletes its whole ring and no other, on
    /// both backends. (SQLite's plan points each key of the deleted set at its own row before the
    /// rows go, which a unique key refused row by row around a ring: the save threw
    /// `.uniqueViolation`; such keys now point at no row until the rows go.)
    func testDeletingAnObjectOfARingOfRequiredOneToOnesDeletesItsRing() async throws {
        for sizes in [[1], [2], [3, 2], [5, 1, 4]] {
            try await onBothBackends(Loop.self) { flow in
                let setup = flow.makeContext()
                for (ring, size) in sizes.enumerated() {
                    let objects = (0..<size).map { Ring(name: "r\(ring)-\($0)") }
                    for (index, object) in objects.enumerated() { object.next = objects[(index + 1) % size] }
                    setup.insert(objects[0])
                }
                try await setup.save()
                let context = flow.makeContext()
                let rings = try await context.fetch(FetchDescriptor<Ring>(predicate: #Predicate { $0.name == "r0-0" }))
                context.delete(rings[0])
                try await context.save()
                let left = try await flow.makeContext().fetch(FetchDescriptor<Ring>(sortBy: [SortDescriptor(\.name)])).map(\.name)
                let expected = sizes.enumerated().dropFirst().flatMap { ring, size in (0..<size).map { "r\(ring)-\($0)" } }
                XCTAssertEqual(left, expected, "\(flow.name), rings of \(sizes)")
            }
        }
    }
}
