import Foundation
import ModelGenRuntime
import XCTest

// Relationships given new partners or members without their side read first: on PostgreSQL,
// which loads only on request, the old ones let go as a context that reads them lets go of them.

extension BothBackendsTests {
    /// A one-to-one partner taken leaves its old partner, whether the partner's side was loaded
    /// first or not (on PostgreSQL, which loads only on request; SQLite reads it as the link is
    /// set), and whether the context holds the old partner or reads it only later: in memory at
    /// once, in what a fetch and a count give before the save, in the store after it; a rollback
    /// gives it back. Taken by a new object through its key, or emptied from the partner's side.
    func testAOneToOnePartnerTakenLeavesItsOldPartnerOnBothBackends() async throws {
        for (loadsFirst, holdsOldPartner) in [(false, false), (false, true), (true, false), (true, true)] {
            for (throughKey, saves) in [(true, true), (true, false), (false, true), (false, false)] {
                try await onBothBackends(Seats.self) { flow in
                    let about = "\(flow.name), \(loadsFirst ? "loaded" : "not loaded"), old partner \(holdsOldPartner ? "held" : "not held"), "
                        + "\(throughKey ? "taken by a new guest" : "emptied from the seat"), \(saves ? "saved" : "rolled back")"
                    let setup = flow.makeContext()
                    let seat = Seat(code: "c1", rank: 1, label: nil, serial: UUID(), aisle: 1, place: 1)
                    let first = Guest(name: "g1")
                    first.seat = seat
                    setup.insert(first)
                    try await setup.save()

                    let context = flow.makeContext()
                    let seats = try await context.fetch(FetchDescriptor<Seat>())
                    let held = holdsOldPartner ? try await context.fetch(FetchDescriptor<Guest>()) : []
                    if loadsFirst { try await context.load(\.guest, of: seats) }
                    if throughKey {
                        let second = Guest(name: "g2")
                        second.seat = seats[0]
                        context.insert(second)
                    } else {
                        seats[0].guest = nil
                    }
                    let expected = throughKey ? ["g1:-", "g2:c1"] : ["g1:-"]
                    XCTAssertEqual(seats[0].guest?.name, throughKey ? "g2" : nil, about)
                    XCTAssertEqual(held.map { $0.seat?.code ?? "-" }, holdsOldPartner ? ["-"] : [], about)
                    let guests = try await context.fetch(FetchDescriptor<Guest>())
                    XCTAssertEqual(guests.map { "\($0.name):\($0.seat?.code ?? "-")" }, expected, about)
                    let withoutSeat = try await context.fetchCount(FetchDescriptor<Guest>(predicate: #Predicate { $0.seat == nil }))
                    XCTAssertEqual(withoutSeat, 1, about)

                    if saves {
                        try await context.save()
                        let reader = flow.makeContext()
                        let stored = try await reader.fetch(FetchDescriptor<Guest>())
                        try await reader.load(\.seat, of: stored)
                        XCTAssertEqual(stored.map { "\($0.name):\($0.seat?.code ?? "-")" }, expected, about)
                    } else {
                        context.rollback()
                        try await context.load(\.guest, of: seats)
                        XCTAssertEqual(guests.first?.seat?.code, "c1", about)
                        XCTAssertEqual(seats[0].guest?.name, "g1", about)
                    }
                    XCTAssertFalse(context.hasChanges, about)
                }
            }
        }
    }
}

extension BothBackendsTests {
    /// A one-to-many's list replaced leaves its old members, whether it was loaded first or not
    /// (on PostgreSQL, which loads only on request; SQLite reads it as it is replaced), and
    /// whether the context holds the old members or reads them only later: in memory at once, in
    /// what a fetch and a count give before the save, in the store after it; a rollback gives them
    /// back. A member taken from another list leaves that one; a new member joins. Where the old
    /// members' key is required, the save is refused alike and changes nothing.
    func testAOneToManyReplacedLeavesItsOldMembersOnBothBackends() async throws {
        for (loadsFirst, holdsOldMembers) in [(false, false), (false, true), (true, false), (true, true)] {
            for saves in [true, false] {
                try await onBothBackends(Lending.self) { flow in
                    let about = "\(flow.name), \(loadsFirst ? "loaded" : "not loaded"), old members \(holdsOldMembers ? "held" : "not held"), \(saves ? "saved" : "rolled back")"
                    let setup = flow.makeContext()
                    let (first, second) = (Author(name: "a1"), Author(name: "a2"))
                    for title in ["b1", "b2", "b3"] { Book(title: title).author = first }
                    Book(title: "b4").author = second
                    let loan = Loan(borrower: "l1")
                    loan.book = first.books.first { $0.title == "b1" }
                    setup.insert(first)
                    setup.insert(second)
                    try await setup.save()

                    let context = flow.makeContext()
                    let authors = try await context.fetch(FetchDescriptor<Author>(sortBy: [SortDescriptor(\.name)]))
                    let held = holdsOldMembers ? try await context.fetch(FetchDescriptor<Book>(predicate: #Predicate { $0.title == "b1" || $0.title == "b3" })) : []
                    if loadsFirst { try await context.load(\.books, of: authors) }
                    let kept = try await context.fetch(FetchDescriptor<Book>(predicate: #Predicate { $0.title == "b2" || $0.title == "b4" }, sortBy: [SortDescriptor(\.title)]))
                    authors[0].books = kept + [Book(title: "b5")]
                    XCTAssertEqual(authors[0].books.map(\.title), ["b2", "b4", "b5"], about)
                    XCTAssertEqual(held.map { $0.author?.name ?? "-" }, holdsOldMembers ? ["-", "-"] : [], about)
                    XCTAssertEqual(kept.map { $0.author?.name ?? "-" }, ["a1", "a1"], about)
                    let expected = ["b1:-", "b2:a1", "b3:-", "b4:a1", "b5:a1"]
                    let books = try await context.fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]))
                    XCTAssertEqual(books.map { "\($0.title):\($0.author?.name ?? "-")" }, expected, about)
                    try await assertEqual(await context.fetchCount(FetchDescriptor<Book>(predicate: #Predicate { $0.author == nil })), 2, about)
                    try await context.load(\.books, of: authors)
                    XCTAssertEqual(authors[1].books.map(\.title), [], about)

                    if saves {
                        try await context.save()
                        let reader = flow.makeContext()
                        let stored = try await reader.fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]))
                        try await reader.load(\.author, of: stored)
                        XCTAssertEqual(stored.map { "\($0.title):\($0.author?.name ?? "-")" }, expected, about)
                    } else {
                        context.rollback()
                        try await context.load(\.books, of: authors)
                        XCTAssertEqual(authors.map { $0.books.map(\.title).sorted() }, [["b1", "b2", "b3"], ["b4"]], about)
                        XCTAssertEqual(books.filter { $0.title != "b5" }.map { $0.author?.name ?? "-" }, ["a1", "a1", "a1", "a2"], about)
                    }
                    XCTAssertFalse(context.hasChanges, about)

                    // The loans' key is required: a book's loans replaced refuses the save, alike.
                    let other = flow.makeContext()
                    let lent = try await other.fetch(FetchDescriptor<Book>(predicate: #Predicate { $0.title == "b1" }))
                    if holdsOldMembers { _ = try await other.fetch(FetchDescriptor<Loan>()) }
                    if loadsFirst { try await other.load(\.loans, of: lent) }
                    lent[0].loans = []
                    do {
                        try await other.save()
                        XCTFail("\(about): a loan lost its required book")
                    } catch let ModelContextError.constraintViolation(message) {
                        XCTAssertTrue(message.hasPrefix("Loan.book is required and was nil"), "\(about): \(message)")
                    }
                    other.rollback()
                    let reader = flow.makeContext()
                    let loans = try await reader.fetch(FetchDescriptor<Loan>())
                    try await reader.load(\.book, of: loans)
                    XCTAssertEqual(loans.map { $0.book?.title }, ["b1"], about)
                }
            }
        }
    }
}

extension BothBackendsTests {
    /// A many-to-many's list replaced leaves its old members, whether it was loaded first or not
    /// (on PostgreSQL, which loads only on request, the save replaces the owner's join rows), and
    /// whether the context holds the old members with their side loaded or reads them only later:
    /// in memory at once, in what a fetch through the relationship and a load give before the
    /// save, in the store after it; a rollback gives them back.
    func testAManyToManyReplacedLeavesItsOldMembersOnBothBackends() async throws {
        for (loadsFirst, holdsOldMembers) in [(false, false), (false, true), (true, false), (true, true)] {
            for saves in [true, false] {
                try await onBothBackends(Lending.self) { flow in
                    let about = "\(flow.name), \(loadsFirst ? "loaded" : "not loaded"), old members \(holdsOldMembers ? "held" : "not held"), \(saves ? "saved" : "rolled back")"
                    let setup = flow.makeContext()
                    let (first, second) = (Book(title: "b1"), Book(title: "b2"))
                    let readers = ["r1", "r2", "r3", "r4"].map { Reader(name: $0) }
                    first.readers = Array(readers[0..<3])
                    second.readers = [readers[0], readers[3]]
                    setup.insert(first)
                    setup.insert(second)
                    try await setup.save()

                    let context = flow.makeContext()
                    let books = try await context.fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]))
                    let held = holdsOldMembers ? try await context.fetch(FetchDescriptor<Reader>(predicate: #Predicate { $0.name == "r1" || $0.name == "r3" }, sortBy: [SortDescriptor(\.name)])) : []
                    if holdsOldMembers { try await context.load(\.books, of: held) }
                    if loadsFirst { try await context.load(\.readers, of: books) }
                    let kept = try await context.fetch(FetchDescriptor<Reader>(predicate: #Predicate { $0.name == "r2" || $0.name == "r4" }, sortBy: [SortDescriptor(\.name)]))
                    books[0].readers = kept + [Reader(name: "r5")]
                    XCTAssertEqual(books[0].readers.map(\.name), ["r2", "r4", "r5"], about)
                    XCTAssertEqual(held.map { $0.books.map(\.title).sorted() }, holdsOldMembers ? [["b2"], []] : [], about)
                    let expected = ["r1:b2", "r2:b1", "r3:-", "r4:b1,b2", "r5:b1"]
                    let all = try await context.fetch(FetchDescriptor<Reader>(sortBy: [SortDescriptor(\.name)]))
                    try await context.load(\.books, of: all)
                    XCTAssertEqual(all.map { "\($0.name):\($0.books.map(\.title).sorted().joined(separator: ","))" }.map { $0.hasSuffix(":") ? $0 + "-" : $0 }, expected, about)
                    try await assertEqual(await context.fetchCount(FetchDescriptor<Reader>(predicate: #Predicate { $0.books.isEmpty })), 1, about)

                    if saves {
                        try await context.save()
                        let reader = flow.makeContext()
                        let stored = try await reader.fetch(FetchDescriptor<Reader>(sortBy: [SortDescriptor(\.name)]))
                        try await reader.load(\.books, of: stored)
                        XCTAssertEqual(stored.map { "\($0.name):\($0.books.map(\.title).sorted().joined(separator: ","))" }.map { $0.hasSuffix(":") ? $0 + "-" : $0 }, expected, about)
                    } else {
                        context.rollback()
                        try await context.load(\.readers, of: books)
                        XCTAssertEqual(books.map { $0.readers.map(\.name).sorted() }, [["r1", "r2", "r3"], ["r1", "r4"]], about)
                        let stored = all.filter { $0.name != "r5" }
                        try await context.load(\.books, of: stored)
                        XCTAssertEqual(stored.map { $0.books.map(\.title).sorted() }, [["b1", "b2"], ["b1"], ["b1"], ["b2"]], about)
                    }
                    XCTAssertFalse(context.hasChanges, about)
                }
            }
        }
    }
}

extension BothBackendsTests {
    /// A list replaced with its old members never read still has those members counted where a
    /// bound applies, alike on both backends: a coach whose only team drops it (a many-to-many,
    /// the coach not in memory) and a team whose players are all replaced by none refuse the
    /// save, which changes nothing.
    func testAListReplacedUnreadIsCountedOnBothBackends() async throws {
        for replacesCoaches in [true, false] {
            try await onBothBackends(Teams.self) { flow in
                let about = "\(flow.name), \(replacesCoaches ? "coaches" : "players") replaced"
                let setup = flow.makeContext()
                let team = Team(name: "t1")
                team.players = [Player(name: "p1")]
                team.coaches = [Coach(name: "c1")]
                setup.insert(team)
                try await setup.save()

                let context = flow.makeContext()
                let teams = try await context.fetch(FetchDescriptor<Team>())
                if replacesCoaches { teams[0].coaches = [] } else { teams[0].players = [] }
                do {
                    try await context.save()
                    XCTFail("\(about): the save left an object out of its bounds")
                } catch let ModelContextError.modelCountViolation(entity, _, relationship, count, _, _) {
                    XCTAssertEqual("\(entity).\(relationship) \(count)", replacesCoaches ? "Coach.teams 0" : "Team.players 0", about)
                }
                context.rollback()
                let reader = flow.makeContext()
                let coaches = try await reader.fetch(FetchDescriptor<Coach>())
                let players = try await reader.fetch(FetchDescriptor<Player>())
                try await reader.load(\.teams, of: coaches)
                try await reader.load(\.team, of: players)
                XCTAssertEqual(coaches.map { $0.teams.map(\.name) } + players.map { [$0.team?.name ?? "-"] }, [["t1"], ["t1"]], about)
            }
        }
    }
}

extension BothBackendsTests {
    /// An object whose row names two owners whose lists were replaced unread (a manager's reports
    /// and a department's staff emptied) and which the context reads only then lets go of both,
    /// and a rollback gives both back (on PostgreSQL the fetch runs on the rows with both keys
    /// emptied; it once restored only one of them to the object it made, so the other read as
    /// saved nil, and the rollback left that link out).
    func testARowNamingTwoOwnersReplacedUnreadLetsGoOfBothUntilTheRollback() async throws {
        for saves in [false, true] {
            try await onBothBackends(Catalog.self) { flow in
                let about = "\(flow.name), \(saves ? "saved" : "rolled back")"
                let setup = flow.makeContext()
                let boss = Employee(name: "boss"), worker = Employee(name: "worker")
                let department = Department(title: "works")
                worker.manager = boss
                worker.department = department
                setup.insert(worker)
                try await setup.save()

                let context = flow.makeContext()
                let bosses = try await context.fetch(FetchDescriptor<Employee>(predicate: #Predicate { $0.name == "boss" }))
                let departments = try await context.fetch(FetchDescriptor<Department>())
                bosses[0].reports = []
                departments[0].staff = []
                let workers = try await context.fetch(FetchDescriptor<Employee>(predicate: #Predicate { $0.name == "worker" }))
                XCTAssertNil(workers[0].manager, about)
                XCTAssertNil(workers[0].department, about)
                if saves {
                    try await context.save()
                    let reader = flow.makeContext()
                    let stored = try await reader.fetch(FetchDescriptor<Employee>(predicate: #Predicate { $0.name == "worker" }))
                    try await reader.load(\.manager, of: stored)
                    try await reader.load(\.department, of: stored)
                    XCTAssertNil(stored[0].manager, about)
                    XCTAssertNil(stored[0].department, about)
                } else {
                    context.rollback()
                    try await context.load(\.manager, of: workers)
                    try await context.load(\.department, of: workers)
                    XCTAssertEqual(workers[0].manager?.name, "boss", about)
                    XCTAssertEqual(workers[0].department?.title, "works", about)
                }
            }
        }
    }
}

extension BothBackendsTests {
    /// Many-to-many lists replaced unread, one after another, leave every list that held their
    /// owner, however that list came to hold it: a new object's, a list loaded before the first
    /// replacement, one loaded after it, one that gained the owner in memory after it (on
    /// PostgreSQL the context indexes the lists holding each owner at the first replacement and
    /// keeps the index up to date: `ListsHoldingOwners`).
    func testManyToManyListsReplacedUnreadOneAfterAnotherLeaveEveryListHoldingTheirOwner() async throws {
        try await onBothBackends(Catalog.self) { flow in
            let setup = flow.makeContext()
            let names = ["ann", "bob", "cy"], codes = ["p1", "p2", "p3", "p4"]
            let people = names.map { Employee(name: $0) }, projects = codes.map { Project(code: $0) }
            for (person, project) in zip(people, projects) { person.projects = [project] }
            people.forEach(setup.insert)
            setup.insert(projects[3])
            try await setup.save()

            let context = flow.makeContext()
            let employees = try await context.fetch(FetchDescriptor<Employee>(sortBy: [SortDescriptor(\.name)]))
            let held = try await context.fetch(FetchDescriptor<Project>(sortBy: [SortDescriptor(\.code)]))
            let (ann, bob) = (employees[0], employees[1])
            let (p1, p2, p3, p4) = (held[0], held[1], held[2], held[3])
            let dan = Employee(name: "dan")
            dan.projects = [p4]
            context.insert(dan)
            try await context.load(\.projects, of: [ann])
            // The first replacement: a new object's list and a loaded one let go.
            p4.members = []
            p1.members = []
            XCTAssertEqual(dan.projects.map(\.code), [], flow.name)
            XCTAssertEqual(ann.projects.map(\.code), [], flow.name)
            // A list loaded after it.
            try await context.load(\.projects, of: [bob])
            XCTAssertEqual(bob.projects.map(\.code), ["p2"], flow.name)
            p2.members = []
            XCTAssertEqual(bob.projects.map(\.code), [], flow.name)
            // A list that gains an owner whose side is not loaded, after it.
            ann.projects.append(p3)
            dan.projects.append(p3)
            p3.members = [employees[2]]
            XCTAssertEqual(ann.projects.map(\.code), [], flow.name)
            XCTAssertEqual(dan.projects.map(\.code), [], flow.name)

            try await context.save()
            let reader = flow.makeContext()
            let stored = try await reader.fetch(FetchDescriptor<Project>(sortBy: [SortDescriptor(\.code)]))
            try await reader.load(\.members, of: stored)
            XCTAssertEqual(stored.map { "\($0.code): \($0.members.map(\.name).sorted())" }, [#"p1: []"#, #"p2: []"#, #"p3: ["cy"]"#, #"p4: []"#], flow.name)
        }
    }
}
