import Foundation
@_spi(Backend) import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// Unique values moved between objects in one save, on both backends: random rounds swap codes,
/// ranks, labels, serial UUIDs and (aisle, place) pairs among seats, give a deleted seat's values
/// to a new one, rename a seat and give its old code to a new one, and reseat guests (a
/// one-to-one, from either side). Every such save must succeed whatever order its statements run in, and the store must
/// then hold exactly the model's seats; a fetch before the save must see them too. A round that
/// really gives two seats one code must be refused and change nothing.
extension BothBackendsTests {
    /// A seat as the model and the store hold it.
    private struct SeatRow: Hashable, CustomStringConvertible {
        var code: String, rank: Int, label: String?, serial: UUID, aisle: Int, place: Int, guest: String?
        var description: String { "\(code) #\(rank) \(label ?? "-") \(serial.uuidString.prefix(8)) \(aisle)/\(place) \(guest ?? "-")" }
    }

    func testUniqueValuesMoveBetweenObjectsInOneSave() async throws {
        try await onBothBackends(Seats.self, seeds: UInt64(1)...4, moveUniqueValues)
    }

    /// One run: six seats, four guests, then 60 rounds of moves, each saved by a new context.
    private func moveUniqueValues(seed: UInt64, on flow: SeedFlowBackend) async throws {
        let (backend, makeContext) = ("\(flow.name), seed \(seed)", flow.makeContext)
        var random = SeededRandom(seed: seed)
        var next = 0
        var model: [Int: SeatRow] = [:]              // by seat number
        func fresh() -> Int { next += 1; return next }
        func newRow() -> SeatRow {
            let n = fresh()
            let serial = UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, UInt8(n / 256), UInt8(n % 256)))
            return SeatRow(code: "c\(n)", rank: n * 10, label: Bool.random(using: &random) ? "l\(n)" : nil, serial: serial, aisle: n, place: n % 3, guest: nil)
        }
        func stored() async throws -> Set<SeatRow> {
            let reader = makeContext()
            let seats = try await reader.fetch(FetchDescriptor<Seat>())
            try await reader.load(\.guest, of: seats)
            return Set(seats.map { SeatRow(code: $0.code, rank: $0.rank, label: $0.label, serial: $0.serial, aisle: $0.aisle, place: $0.place, guest: $0.guest?.name) })
        }
        // Six seats, four of them taken.
        let setup = makeContext()
        for index in 0..<6 {
            let row = newRow()
            let seat = Seat(code: row.code, rank: row.rank, label: row.label, serial: row.serial, aisle: row.aisle, place: row.place)
            setup.insert(seat)
            model[index] = row
            if index < 4 {
                let guest = Guest(name: "g\(index)")
                seat.guest = guest
                model[index]!.guest = guest.name
            }
        }
        try await setup.save()
        for round in 0..<60 {
            let context = makeContext()
            let fetched = try await context.fetch(FetchDescriptor<Seat>())
            try await context.load(\.guest, of: fetched)
            try await context.load(\.seat, of: fetched.compactMap(\.guest))
            // The model's numbers for the seats now in the store.
            var seats: [Int: Seat] = [:]
            for seat in fetched { seats[model.first { $0.value.code == seat.code }!.key] = seat }
            let before = model
            var log: [String] = []
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let numbers = seats.keys.sorted()
                let chosen = Array(numbers.shuffled(using: &random).prefix(Int.random(in: 2...max(2, numbers.count), using: &random)))
                guard chosen.count >= 2 else { continue }
                // Each chosen seat takes the next one's value (a cycle: a swap for two), in the model
                // and on the object.
                func rotate<T>(_ row: WritableKeyPath<SeatRow, T>, _ seat: ReferenceWritableKeyPath<Seat, T>) {
                    let values = chosen.map { model[$0]![keyPath: row] }
                    for (position, number) in chosen.enumerated() {
                        let value = values[(position + 1) % values.count]
                        model[number]![keyPath: row] = value
                        seats[number]![keyPath: seat] = value
                    }
                }
                switch Int.random(in: 0..<8, using: &random) {
                case 7:
                    rotate(\.serial, \.serial)
                    log.append("rotate serials \(chosen)")
                case 0:
                    rotate(\.code, \.code)
                    log.append("rotate codes \(chosen)")
                case 1:
                    rotate(\.rank, \.rank)
                    log.append("rotate ranks \(chosen)")
                case 2:
                    rotate(\.label, \.label)
                    log.append("rotate labels \(chosen)")
                case 3:
                    // The same cycle on both: each seat takes the next one's aisle and place.
                    rotate(\.aisle, \.aisle)
                    rotate(\.place, \.place)
                    log.append("rotate places \(chosen)")
                case 4:
                    // Guests move round the chosen seats, set from either side.
                    let guests = chosen.map { seats[$0]!.guest }
                    let fromGuests = Bool.random(using: &random)
                    for (position, number) in chosen.enumerated() {
                        let guest = guests[(position + 1) % guests.count]
                        model[number]!.guest = guest?.name
                        if fromGuests, let guest { guest.seat = seats[number]! } else if !fromGuests { seats[number]!.guest = guest }
                    }
                    if fromGuests {
                        // A seat whose guest moved on and got nobody is empty.
                        for number in chosen where guests[(chosen.firstIndex(of: number)! + 1) % guests.count] == nil { seats[number]!.guest = nil }
                    }
                    log.append("rotate guests \(chosen) from \(fromGuests ? "guests" : "seats")")
                case 5:
                    // A seat goes; a new one takes all its values and its guest.
                    let gone = chosen[0]
                    let row = model[gone]!
                    let guest = seats[gone]!.guest
                    context.delete(seats[gone]!)
                    let seat = Seat(code: row.code, rank: row.rank, label: row.label, serial: row.serial, aisle: row.aisle, place: row.place)
                    context.insert(seat)
                    seat.guest = guest
                    let number = fresh()
                    model[gone] = nil
                    seats[gone] = nil
                    model[number] = row
                    seats[number] = seat
                    log.append("replace seat \(gone) by \(number)")
                default:
                    // A seat is renamed; a new one takes its old code (and its guest).
                    let renamed = chosen[0]
                    let old = model[renamed]!
                    var row = newRow()
                    row.code = old.code
                    let newCode = "c\(fresh())"
                    model[renamed]!.code = newCode
                    seats[renamed]!.code = newCode
                    let guest = seats[renamed]!.guest
                    let seat = Seat(code: row.code, rank: row.rank, label: row.label, serial: row.serial, aisle: row.aisle, place: row.place)
                    context.insert(seat)
                    seat.guest = guest
                    row.guest = guest?.name
                    model[renamed]!.guest = nil
                    let number = fresh()
                    model[number] = row
                    seats[number] = seat
                    log.append("rename seat \(renamed), new seat \(number) takes its code")
                }
            }
            let conflict = round % 7 == 6
            if conflict {
                let (a, b) = (seats.keys.sorted()[0], seats.keys.sorted()[1])
                seats[a]!.code = model[b]!.code
                log.append("seat \(a) takes seat \(b)'s code")
            }
            let trail = "\(backend), round \(round): \(log.joined(separator: "; "))"
            if Bool.random(using: &random) {
                // A fetch with a sort runs on the unsaved rows written: it must not collide either.
                do {
                    let sorted = try await context.fetch(FetchDescriptor<Seat>(sortBy: [SortDescriptor(\.rank)]))
                    if !conflict { XCTAssertEqual(sorted.map(\.rank), model.values.map(\.rank).sorted(), trail) }
                } catch {
                    XCTAssertTrue(conflict, "\(trail): the fetch threw \(error)")
                }
            }
            do {
                try await context.save()
                XCTAssertFalse(conflict, "\(trail): two seats were given one code")
            } catch {
                XCTAssertTrue(conflict, "\(trail): the save threw \(error)")
                XCTAssertTrue("\(error)".contains("code"), "\(trail): \(error)")
                model = before
            }
            try await assertEqual(await stored(), Set(model.values), trail)
            if testRun?.failureCount ?? 0 > 0 { return }
        }
    }

    /// A stand deleted (its seats go with it: cascade; one of them perhaps changed first) and
    /// replaced in the same save by a new stand whose seats take the old seats' unique values,
    /// column by column (a code, a rank, a label, a serial, an aisle and place), while a seat of
    /// another stand may take one too: the save must
    /// succeed whatever the values, and the store then hold exactly the model's stands. A round
    /// that gives a new seat the code of a seat that stays must be refused and change nothing.
    func testUniqueValuesOfRowsACascadeRemovesCanBeTakenInOneSave() async throws {
        try await onBothBackends(Seats.self, seeds: UInt64(1)...4, replaceStands)
    }

    /// One run: three stands of one to three seats, then 30 rounds, each replacing a stand.
    private func replaceStands(seed: UInt64, on flow: SeedFlowBackend) async throws {
        let backend = "\(flow.name), seed \(seed)"
        var random = SeededRandom(seed: seed)
        var next = 0
        var model: [String: [SeatRow]] = [:]             // by stand name
        func newRow() -> SeatRow {
            next += 1
            let serial = UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, UInt8(next / 256), UInt8(next % 256)))
            // Some codes decomposed ("e" and a combining acute): the precomposed spelling, which Swift
            // finds equal, is another value to the store, which a new seat may take beside it.
            let code = Bool.random(using: &random) ? "c\(next)" : "e\u{301}\(next)"
            return SeatRow(code: code, rank: next * 10, label: Bool.random(using: &random) ? "l\(next)" : nil, serial: serial, aisle: next, place: next % 3, guest: nil)
        }
        func seat(_ row: SeatRow) -> Seat {
            Seat(code: row.code, rank: row.rank, label: row.label, serial: row.serial, aisle: row.aisle, place: row.place)
        }
        func stored() async throws -> [String: Set<SeatRow>] {
            let reader = flow.makeContext()
            let stands = try await reader.fetch(FetchDescriptor<Stand>())
            try await reader.load(\.seats, of: stands)
            let seats = try await reader.fetchCount(FetchDescriptor<Seat>())
            XCTAssertEqual(seats, stands.map(\.seats.count).reduce(0, +), "\(backend): every seat is in a stand")
            return Dictionary(uniqueKeysWithValues: stands.map { stand in
                (stand.name, Set(stand.seats.map { SeatRow(code: $0.code, rank: $0.rank, label: $0.label, serial: $0.serial, aisle: $0.aisle, place: $0.place, guest: nil) }))
            })
        }
        for round in 0..<30 {
            let context = flow.makeContext()
            while model.count < 3 {
                next += 1
                let stand = Stand(name: "s\(next)")
                let rows = (0..<Int.random(in: 1...3, using: &random)).map { _ in newRow() }
                stand.seats = rows.map(seat)
                context.insert(stand)
                model[stand.name] = rows
            }
            try await context.save()
            var stands: [String: Stand] = [:]
            for stand in try await context.fetch(FetchDescriptor<Stand>()) { stands[stand.name] = stand }
            try await context.load(\.seats, of: Array(stands.values))
            let before = model
            let gone = model.keys.sorted().randomElement(using: &random)!
            let old = model[gone]!.shuffled(using: &random)
            // Now and then a seat of the old stand changes first, keeping its other unique values:
            // a changed object whose row the cascade removes frees them as an unchanged one does.
            if Bool.random(using: &random), let changed = stands[gone]!.seats.min(by: { $0.rank < $1.rank }) {
                next += 1
                changed.aisle = next
            }
            context.delete(stands[gone]!)
            // Seat i of the new stand takes values of old seat i, each column (or the aisle and
            // place together) at random: no two new seats take one value.
            var rows: [SeatRow] = []
            for index in 0..<Int.random(in: 1...3, using: &random) {
                var row = newRow()
                if index < old.count {
                    let source = old[index]
                    // Not a code a new seat took already: the twin added beside an earlier seat
                    // may be the very spelling another old seat holds.
                    if Bool.random(using: &random), !rows.contains(where: { $0.code.utf8.elementsEqual(source.code.utf8) }) { row.code = source.code }
                    if Bool.random(using: &random) { row.rank = source.rank }
                    if Bool.random(using: &random) { row.label = source.label }
                    if Bool.random(using: &random) { row.serial = source.serial }
                    if Bool.random(using: &random) { (row.aisle, row.place) = (source.aisle, source.place) }
                }
                rows.append(row)
                let twin = row.code.precomposedStringWithCanonicalMapping
                if twin.utf8.count != row.code.utf8.count, !rows.contains(where: { $0.code.utf8.elementsEqual(twin.utf8) }), Bool.random(using: &random) {
                    var other = newRow()
                    other.code = twin
                    rows.append(other)
                }
            }
            var log = ["replace \(gone) (\(old)) by \(rows)"]
            // A seat of a stand that stays takes a rank of the old stand's that no new seat took.
            let untaken = old.map(\.rank).filter { rank in !rows.contains { $0.rank == rank } }
            let staying = model.keys.sorted().filter { $0 != gone }
            if let rank = untaken.first, let other = staying.randomElement(using: &random), Bool.random(using: &random) {
                let moved = stands[other]!.seats.sorted { $0.code < $1.code }[0]
                moved.rank = rank
                model[other] = model[other]!.map { $0.code.utf8.elementsEqual(moved.code.utf8) ? SeatRow(code: $0.code, rank: rank, label: $0.label, serial: $0.serial, aisle: $0.aisle, place: $0.place, guest: nil) : $0 }
                log.append("\(moved.code) of \(other) takes rank \(rank)")
            }
            // Now and then a new seat takes the code of a seat that stays: a real collision.
            let conflict = round % 5 == 4
            if conflict, let other = staying.first { rows[0].code = model[other]![0].code }
            next += 1
            let replacement = Stand(name: "s\(next)")
            replacement.seats = rows.map(seat)
            context.insert(replacement)
            model[gone] = nil
            model[replacement.name] = rows
            let trail = "\(backend), round \(round): \(log.joined(separator: "; "))\(conflict ? ", a new seat takes a staying seat's code" : "")"
            do {
                try await context.save()
                XCTAssertFalse(conflict, "\(trail): two seats were given one code")
            } catch {
                XCTAssertTrue(conflict, "\(trail): the save threw \(error)")
                XCTAssertTrue("\(error)".contains("code"), "\(trail): \(error)")
                model = before
            }
            try await assertEqual(await stored(), model.mapValues(Set.init), trail)
            if testRun?.failureCount ?? 0 > 0 { return }
        }
    }

    /// The values a save sets aside never overflow nor collide with values it takes: seats whose
    /// ranks lie at the ends of `Int64`, rotating their ranks and codes (so every seat sets both
    /// aside) while new seats take the values a set-aside value would most likely be — the
    /// smallest rank less a seat's id, the largest plus one, a run of '~' as long as the longest
    /// code and a seat's id. Every save must succeed and the store hold the model's seats.
    func testValuesSetAsideNeverOverflowNorCollideWithValuesTaken() async throws {
        try await onBothBackends(Seats.self, seeds: UInt64(1)...4, setAsideBesideTakenValues)
    }

    /// One run: four seats, then 12 rounds of rotations and new seats, each saved by a new context.
    private func setAsideBesideTakenValues(seed: UInt64, on flow: SeedFlowBackend) async throws {
        var random = SeededRandom(seed: seed)
        var model: [String: Int] = [:]               // rank by code
        var next = 0
        func seat(code: String, rank: Int) -> Seat {
            next += 1
            return Seat(code: code, rank: rank, label: nil, serial: UUID(), aisle: next, place: 0)
        }
        // Ranks at the ends of Int64, or small ones (where a value set aside lies just below them).
        let extremes = [Int.min, Int.min + 1, Int.max, Int.max - 1, 0, -1]
        let setup = flow.makeContext()
        for rank in (Bool.random(using: &random) ? extremes : [10, 20, 30, 40, 50]).shuffled(using: &random).prefix(4) {
            let code = "c\(next)"
            setup.insert(seat(code: code, rank: rank))
            model[code] = rank
        }
        try await setup.save()
        for round in 0..<12 {
            let context = flow.makeContext()
            let seats = try await context.fetch(FetchDescriptor<Seat>(sortBy: [SortDescriptor(\.code)]))
            let ids = seats.map { Int($0.persistentModelID.id!) }
            let (low, high) = (model.values.min()!, model.values.max()!)
            let longest = model.keys.map(\.unicodeScalars.count).max()!
            // Every seat takes the next one's rank and code.
            let (ranks, codes) = (seats.map(\.rank), seats.map(\.code))
            for (position, seat) in seats.enumerated() {
                (seat.rank, seat.code) = (ranks[(position + 1) % seats.count], codes[(position + 1) % seats.count])
            }
            model = Dictionary(uniqueKeysWithValues: seats.map { ($0.code, $0.rank) })
            // New seats take what a set-aside value would be, where nothing holds it.
            var lookalikeRanks = extremes
            for id in ids {
                for (value, overflow) in [low.subtractingReportingOverflow(id), high.addingReportingOverflow(id)] where !overflow { lookalikeRanks.append(value) }
            }
            var log: [String] = []
            for _ in 0..<Int.random(in: 1...2, using: &random) {
                let lookalikeCodes = ids.map { String(repeating: "~", count: longest) + "#\($0)" }.filter { model[$0] == nil }
                guard let rank = lookalikeRanks.filter({ !model.values.contains($0) }).randomElement(using: &random),
                      let code = lookalikeCodes.randomElement(using: &random) else { continue }
                context.insert(seat(code: code, rank: rank))
                model[code] = rank
                log.append("new seat \(code) #\(rank)")
            }
            let trail = "\(flow.name), seed \(seed), round \(round): rotate \(zip(codes, ranks).map { "\($0) #\($1)" }); \(log.joined(separator: "; "))"
            do {
                try await context.save()
            } catch {
                XCTFail("\(trail): the save threw \(error)")
                return
            }
            let stored = try await flow.makeContext().fetch(FetchDescriptor<Seat>())
            XCTAssertEqual(Dictionary(uniqueKeysWithValues: stored.map { ($0.code, $0.rank) }), model, trail)
        }
    }

    /// A sync import, as apps write one: each record looked up by its unique code (a fetch that
    /// sees the objects the import made before it), then updated, or replaced by a new object
    /// (the old one deleted), or made; the objects the import no longer lists deleted; one save per
    /// import, whose ranks move between objects. Every save succeeds and the store holds the import.
    func testASyncImportByUniqueValuesSavesInOneGo() async throws {
        try await onBothBackends(Seats.self, seeds: UInt64(1)...8) { seed, flow in
            var random = SeededRandom(seed: seed)
            var model: [String: Int] = [:]      // code: rank
            var next = 0
            for round in 0..<15 {
                let context = flow.makeContext()
                var incoming: [String: Int] = [:]
                let codes = (0..<12).map { "k\($0)" }.shuffled(using: &random).prefix(Int.random(in: 3...9, using: &random))
                var ranks = Array(0..<40).shuffled(using: &random)
                for code in codes { incoming[code] = ranks.removeLast() }
                var log: [String] = []
                for (code, rank) in incoming.sorted(by: { $0.key < $1.key }).shuffled(using: &random) {
                    var lookup = FetchDescriptor<Seat>(predicate: #Predicate { $0.code == code })
                    lookup.fetchLimit = 1
                    if let seat = try await context.fetch(lookup).first, Bool.random(using: &random) {
                        seat.rank = rank
                        log.append("update \(code) #\(rank)")
                    } else {
                        if let seat = try await context.fetch(lookup).first {
                            context.delete(seat)
                            log.append("delete \(code) to replace it")
                        }
                        next += 1
                        context.insert(Seat(code: code, rank: rank, label: nil, serial: UUID(), aisle: next, place: 0))
                        log.append("insert \(code) #\(rank)")
                    }
                }
                for seat in try await context.fetch(FetchDescriptor<Seat>()) where incoming[seat.code] == nil {
                    context.delete(seat)
                    log.append("delete \(seat.code)")
                }
                do {
                    try await context.save()
                } catch {
                    XCTFail("\(flow.name), seed \(seed), round \(round): \(error) (\(log))")
                    return
                }
                model = incoming
                let stored = try await flow.makeContext().fetch(FetchDescriptor<Seat>())
                XCTAssertEqual(Dictionary(uniqueKeysWithValues: stored.map { ($0.code, $0.rank) }), model, "\(flow.name), seed \(seed), round \(round)")
            }
        }
    }
}
