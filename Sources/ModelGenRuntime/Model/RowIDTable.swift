/// A hash table from row ids to the backing data of registered objects, for a context's identity
/// map (unretained: the context removes an entry before its backing data goes).
///
/// Open addressing with linear probing, where an id's first slot is the id itself (masked): rows
/// fetched in id order land side by side, so registering, finding and forgetting tens of thousands
/// of objects walks memory in order instead of hashing each id to a random place. The table fills
/// to 1/2: the ids of a fetch are mostly some of a range of ids, and once the range is wider than
/// the table, ids a table's size apart share a first slot; at 1/2, a fetch of half a table's rows
/// (in any order) finds each entry in one probe, where at 7/8 it walked runs of ids that collide
/// (a cache miss each, for every object made and freed). Should ids crowd into few slots (a stride
/// that is a large power of two), the table switches to scrambled slots (Fibonacci hashing) for good.
struct RowIDTable {
    private struct Entry {
        var id: Int64
        var backing: Unmanaged<ModelBackingData>?

        static var empty: Entry { Entry(id: 0, backing: nil) }
    }

    private var entries = [Entry](repeating: .empty, count: 16)
    private var shift = 60
    private var scrambled = false
    /// The farthest any entry sits from its first slot (an upper bound): a removal looks no
    /// further for entries to move back, so removing from a run of consecutive ids is O(1).
    private var longestProbe = 0
    private(set) var count = 0

    /// A probe longer than this makes the table scramble its slots.
    private static let longProbe = 32

    private var mask: Int { entries.count - 1 }

    private func home(_ id: Int64) -> Int {
        let bits = UInt64(bitPattern: id)
        return scrambled ? Int(truncatingIfNeeded: (bits &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift)) : Int(truncatingIfNeeded: bits) & mask
    }

    private func slot(of id: Int64) -> Int? {
        var index = home(id)
        for _ in 0...longestProbe {
            guard entries[index].backing != nil else { return nil }
            if entries[index].id == id { return index }
            index = (index + 1) & mask
        }
        return nil
    }

    subscript(id: Int64) -> ModelBackingData? {
        slot(of: id).flatMap { entries[$0].backing?.takeUnretainedValue() }
    }

    /// Every entry, in no particular order.
    var all: [(id: Int64, backing: ModelBackingData)] {
        entries.compactMap { entry in entry.backing.map { (entry.id, $0.takeUnretainedValue()) } }
    }

    /// Registers `backing` for `id`, replacing the entry there was.
    mutating func insert(_ backing: ModelBackingData, for id: Int64) {
        _ = registered(id, replacing: { _ in true }, orMake: { backing })
    }

    /// The backing data registered for `id`; when there is none (or `replacing` says to replace
    /// the one there is), the one `make` returns, registered for `id`. One probe finds the entry or
    /// the empty slot where it goes: a row a fetch reads is looked up and registered in one walk.
    /// `make` must not use the table.
    mutating func registered(_ id: Int64, replacing: (ModelBackingData) -> Bool = { _ in false }, orMake make: () -> ModelBackingData) -> ModelBackingData {
        // Grown first, so that the empty slot the probe ends at is where the entry goes.
        if (count + 1) * 2 > entries.count { rehash(capacity: entries.count * 2) }
        var index = home(id), probes = 0
        while let found = entries[index].backing {
            if entries[index].id == id {
                let backing = found.takeUnretainedValue()
                guard replacing(backing) else { return backing }
                let made = make()
                entries[index].backing = .passUnretained(made)
                return made
            }
            index = (index + 1) & mask
            probes += 1
        }
        let made = make()
        entries[index] = Entry(id: id, backing: .passUnretained(made))
        count += 1
        longestProbe = max(longestProbe, probes)
        if longestProbe > Self.longProbe, !scrambled {
            scrambled = true
            rehash(capacity: entries.count)
        }
        return made
    }

    private mutating func place(_ entry: Entry) {
        var index = home(entry.id), probes = 0
        while entries[index].backing != nil {
            index = (index + 1) & mask
            probes += 1
        }
        entries[index] = entry
        count += 1
        longestProbe = max(longestProbe, probes)
    }

    /// Removes the entry for `id`.
    mutating func remove(_ id: Int64) {
        guard let found = slot(of: id) else { return }
        remove(at: found)
    }

    /// Removes the entry for `id` if it names the backing data at `address` (which may be freed:
    /// only the address is compared).
    mutating func remove(_ id: Int64, ifItIs address: UnsafeMutableRawPointer) {
        guard let found = slot(of: id), entries[found].backing?.toOpaque() == address else { return }
        remove(at: found)
    }

    private mutating func remove(at found: Int) {
        // Backward-shift deletion: a later entry of the run moves into the hole unless its first
        // slot lies after the hole, so every remaining id stays reachable from its first slot.
        // Entries more than `longestProbe` slots past the hole are at or after their first slot.
        var hole = found
        entries[hole].backing = nil
        var index = (hole + 1) & mask
        while entries[index].backing != nil, (index - hole) & mask <= longestProbe {
            let first = home(entries[index].id)
            if (index - first) & mask >= (index - hole) & mask {
                entries[hole] = entries[index]
                entries[index].backing = nil
                hole = index
            }
            index = (index + 1) & mask
        }
        count -= 1
    }

    private mutating func rehash(capacity: Int) {
        let old = entries
        entries = [Entry](repeating: .empty, count: capacity)
        shift = 64 - capacity.trailingZeroBitCount
        count = 0
        longestProbe = 0
        for entry in old where entry.backing != nil { place(entry) }
    }
}
