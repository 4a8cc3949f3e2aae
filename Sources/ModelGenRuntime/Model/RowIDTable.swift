/// A hash table from row ids to the backing data of registered objects, for a context's identity
/// map (unretained: the context removes an entry before its backing data goes).
///
/// Open addressing with linear probing, where an id's first slot is the id itself (masked): rows
/// fetched in id order land side by side, so registering, finding and forgetting tens of thousands
/// of objects walks memory in order instead of hashing each id to a random place. Should ids
/// crowd into few slots (a stride that is a large power of two), the table switches to scrambled
/// slots (Fibonacci hashing) for good.
struct RowIDTable {
    private struct Entry {
        var id: Int64
        var backing: Unmanaged<ModelBackingData>?
        /// A removed entry: lookups go on past it, inserts may reuse it. (Removing by shifting
        /// later entries back would scan the whole run of consecutive ids each time.)
        var isRemoved = false

        static var empty: Entry { Entry(id: 0, backing: nil) }
        var isEmpty: Bool { backing == nil && !isRemoved }
    }

    private var entries = [Entry](repeating: .empty, count: 16)
    private var shift = 60
    private var scrambled = false
    private(set) var count = 0
    private var removed = 0

    /// A probe longer than this makes the table scramble its slots.
    private static let longProbe = 32

    private var mask: Int { entries.count - 1 }

    private func home(_ id: Int64) -> Int {
        let bits = UInt64(bitPattern: id)
        return scrambled ? Int(truncatingIfNeeded: (bits &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift)) : Int(truncatingIfNeeded: bits) & mask
    }

    /// The slot holding `id`, or nil and the slot where it would go, with the probe's length.
    private func find(_ id: Int64) -> (found: Int?, free: Int, probes: Int) {
        var index = home(id), free: Int?, probes = 0
        while !entries[index].isEmpty {
            if entries[index].isRemoved {
                if free == nil { free = index }
            } else if entries[index].id == id {
                return (index, index, probes)
            }
            index = (index + 1) & mask
            probes += 1
        }
        return (nil, free ?? index, probes)
    }

    subscript(id: Int64) -> ModelBackingData? {
        find(id).found.flatMap { entries[$0].backing?.takeUnretainedValue() }
    }

    /// Every entry, in no particular order.
    var all: [(id: Int64, backing: ModelBackingData)] {
        entries.compactMap { entry in entry.backing.map { (entry.id, $0.takeUnretainedValue()) } }
    }

    /// Registers `backing` for `id`, replacing the entry there was.
    mutating func insert(_ backing: ModelBackingData, for id: Int64) {
        var (found, free, probes) = find(id)
        if let found {
            entries[found].backing = .passUnretained(backing)
            return
        }
        if (count + removed + 1) * 4 > entries.count * 3 {
            rehash(capacity: count * 2 >= entries.count ? entries.count * 2 : entries.count)
            (_, free, probes) = find(id)
        }
        if entries[free].isRemoved { removed -= 1 }
        entries[free] = Entry(id: id, backing: .passUnretained(backing))
        count += 1
        if probes > Self.longProbe, !scrambled {
            scrambled = true
            rehash(capacity: entries.count)
        }
    }

    /// Removes the entry for `id` when `condition` holds for its backing data.
    mutating func remove(_ id: Int64, if condition: (ModelBackingData) -> Bool = { _ in true }) {
        guard let found = find(id).found, let backing = entries[found].backing, condition(backing.takeUnretainedValue()) else { return }
        entries[found] = Entry(id: 0, backing: nil, isRemoved: true)
        count -= 1
        removed += 1
        // Removed entries lengthen every probe that crosses them: once they fill a quarter of
        // the table, it is rebuilt (smaller, if fewer entries remain).
        if removed * 4 > entries.count {
            var capacity = 16
            while capacity < count * 2 { capacity *= 2 }
            rehash(capacity: capacity)
        }
    }

    private mutating func rehash(capacity: Int) {
        let old = entries
        entries = [Entry](repeating: .empty, count: capacity)
        shift = 64 - capacity.trailingZeroBitCount
        count = 0
        removed = 0
        for entry in old where entry.backing != nil {
            var index = home(entry.id)
            while !entries[index].isEmpty { index = (index + 1) & mask }
            entries[index] = entry
            count += 1
        }
    }
}
