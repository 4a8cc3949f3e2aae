import Foundation
import ModelGenRuntime

/// Work an app does object by object on long lists, at N and 8N objects, to show that its cost
/// grows linearly: each workload's time at each size, per object, and its growth from the size
/// before (linear is the ratio of the sizes, 8 by default). In process, median of the repetitions,
/// each run in a fresh store (Bookshelf schema).
enum ChurnBenchmark {
    enum Workload: String, CaseIterable {
        /// N saved books of one writer, each given another writer (`book.writer = other`), one save.
        case move
        /// N new books of one writer, inserted, each deleted before any save.
        case discard
        /// N saved books with one tag, whose `volumes` are loaded, each untagged (`book.tags = []`), one save.
        case untag
        /// N new books appended one at a time to a saved writer's loaded books (`writer.books.append(book)`,
        /// the list changed in place through the accessor's `_modify`), one save.
        case append
        /// N saved books of one writer (its `books` loaded), each taken off the end of the list in turn
        /// (`writer.books.removeLast()`: the book's writer becomes nil), one save.
        case detach
    }

    static func run(sizes: [Int], repetitions: Int, directory: URL) throws {
        print("Object-by-object work on long lists (Bookshelf); median of \(repetitions), each run in a fresh store;")
        print("growth = time / time at the size before (linear: the ratio of the sizes).")
        print(pad(["workload", "N", "seconds", "µs/object", "growth"], [9, 8, 9, 10, 7]))
        for workload in Workload.allCases {
            var previous: (size: Int, seconds: Double)?
            for size in sizes {
                var times: [Double] = []
                for _ in 0..<repetitions { times.append(try measure(workload, size, directory: directory)) }
                let seconds = median(times)
                let growth = previous.map { String(format: "%.1f (×%d)", seconds / $0.seconds, size / max(1, $0.size)) } ?? "-"
                print(pad([workload.rawValue, String(size), format(seconds), String(format: "%.2f", seconds / Double(size) * 1e6), growth], [9, 8, 9, 10, 7]))
                previous = (size, seconds)
            }
        }
    }

    /// Seconds the timed part of `workload` takes with `size` books.
    private static func measure(_ workload: Workload, _ size: Int, directory: URL) throws -> Double {
        let url = directory.appendingPathComponent("churn.sqlite")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        let container = try ModelContainer(for: Bookshelf.self, configurations: ModelConfiguration(url: url))
        let context = container.mainContext
        let writer = Writer(name: "first"), other = Writer(name: "second"), tag = Label(name: "tag")
        let books = (0..<size).map { Volume(title: "book\($0)", price: Double($0 % 100)) }
        if workload == .append {
            context.insert(writer)
            try context.save()
            precondition(writer.books.isEmpty)
        } else {
            for book in books {
                book.writer = writer
                if workload == .untag { book.tags = [tag] }
                context.insert(book)
            }
            if workload != .discard {
                try context.save()
                precondition(writer.books.count == size && (workload != .untag || tag.volumes.count == size))
            }
        }
        let start = DispatchTime.now()
        switch workload {
        case .move:
            for book in books { book.writer = other }
            try context.save()
        case .discard:
            for book in books { context.delete(book) }
        case .untag:
            for book in books { book.tags = [] }
            try context.save()
        case .append:
            for book in books { writer.books.append(book) }
            try context.save()
        case .detach:
            for _ in books { writer.books.removeLast() }
            try context.save()
        }
        let seconds = Measure.elapsed(since: start)
        switch workload {
        case .move: precondition(writer.books.isEmpty && other.books.count == size)
        case .discard:
            precondition(writer.books.isEmpty && context.insertedModelsArray.count == 1)
            context.rollback()
        case .untag: precondition(tag.volumes.isEmpty)
        case .append: precondition(writer.books.count == size && books.allSatisfy { $0.writer === writer } && context.insertedModelsArray.isEmpty)
        case .detach: precondition(writer.books.isEmpty && books.allSatisfy { $0.writer == nil } && !context.hasChanges)
        }
        return seconds
    }
}
