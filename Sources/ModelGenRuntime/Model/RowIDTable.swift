/// A table from row ids to the backing data of registered objects, for a context's identity map
/// (unretained: the context removes an entry before its backing data goes).
///
/// Row ids are mostly a range with gaps (SQLite's rowids count up), so while the ids registered
/// span at most about four times their number, an id's entry is the slot `id - base` of an array
/// of references (`RangeOfRowIDs`): no probe, no id stored, 8 bytes a slot. Objects a fetch
/// sorted by title makes and frees in no order of ids, each touching its slot; that array of
/// 100,000 ids fits in a core's cache, where the hash table's entries (id and reference, the table
/// at most half full) took 2 MB, and each touch was a miss. Once ids spread wider, the table
/// turns into a hash table (`HashedRowIDs`), and back into an array when the ids registered
/// since then span at most about three times their number: a fetch sorted by anything but id
/// registers ids from all over the range at first (the second may be 90,000 from the first), and
/// fills it as it goes.
struct RowIDTable {
    /// The entries while the ids are close to a range; nil while they are spread out.
    private var range: RangeOfRowIDs? = RangeOfRowIDs()
    private var hashed = HashedRowIDs()
    /// The lowest and highest id registered since the entries moved to `hashed` (removals do not
    /// narrow them: the span they give is never too small).
    private var hashedSpan: ClosedRange<Int64>?

    var count: Int { range?.count ?? hashed.count }
    /// Whether the entries are in an array of slots now (else in the hash table).
    var isArrayOfSlots: Bool { range != nil }

    subscript(id: Int64) -> ModelBackingData? {
        if let range { return range[id] }
        return hashed[id]
    }

    /// Every entry, in no particular order.
    var all: [(id: Int64, backing: ModelBackingData)] { range?.all ?? hashed.all }

    /// Registers `backing` for `id`, replacing the entry there was.
    mutating func insert(_ backing: ModelBackingData, for id: Int64) {
        _ = registered(id, replacing: { _ in true }, orMake: { backing })
    }

    /// The backing data registered for `id`; when there is none (or `replacing` says to replace
    /// the one there is), the one `make` returns, registered for `id`. `make` must not use the table.
    mutating func registered(_ id: Int64, replacing: (ModelBackingData) -> Bool = { _ in false }, orMake make: () -> ModelBackingData) -> ModelBackingData {
        if range != nil {
            if range!.cover(id) { return range!.registered(id, replacing: replacing, orMake: make) }
            let all = range!.all
            hashed = HashedRowIDs(all)
            hashedSpan = all.isEmpty ? nil : all.lazy.map(\.id).min()!...all.lazy.map(\.id).max()!
            range = nil
        }
        let backing = hashed.registered(id, replacing: replacing, orMake: make)
        let span = hashedSpan.map { min($0.lowerBound, id)...max($0.upperBound, id) } ?? id...id
        hashedSpan = span
        if RangeOfRowIDs.fits(span, count: hashed.count) {
            range = RangeOfRowIDs(hashed.all, spanning: span)
            hashed = HashedRowIDs()
            hashedSpan = nil
        }
        return backing
    }

    /// Removes the entry for `id`.
    mutating func remove(_ id: Int64) {
        if range != nil { range!.remove(id) } else { hashed.remove(id) }
    }

    /// Removes the entry for `id` if it names the backing data at `address` (which may be freed:
    /// only the address is compared).
    mutating func remove(_ id: Int64, ifItIs address: UnsafeMutableRawPointer) {
        if range != nil { range!.remove(id, ifItIs: address) } else { hashed.remove(id, ifItIs: address) }
    }
}

/// Entries as slots of an array, the slot of `id` at `id - base`, while the ids span at most
/// `4 × count + 1,024` (the array is at most that long).
private struct RangeOfRowIDs {
    private var slots: [Unmanaged<ModelBackingData>?] = []
    private var base: Int64 = 0
    private(set) var count = 0

    /// Ids this far from 0 go to the hash table (the arithmetic here cannot overflow short of it).
    private static let farthest: UInt64 = 1 << 62

    init() {}

    /// Whether `count` ids in `span` are close enough to a range to go back to an array: the span
    /// is at most `3 × count + 512`, below the limit `cover` keeps to, so that a table goes back
    /// to hashing only after its span grew by a third of its count, and to an array again only
    /// after its count grew by a third (each change of form, O(count), is paid for by as many
    /// registrations).
    static func fits(_ span: ClosedRange<Int64>, count: Int) -> Bool {
        span.lowerBound.magnitude < farthest && span.upperBound.magnitude < farthest
            && span.upperBound - span.lowerBound < Int64(3 * count + 512)
    }

    /// The entries of a hash table, whose ids lie in `span` (which `fits` them).
    init(_ entries: [(id: Int64, backing: ModelBackingData)], spanning span: ClosedRange<Int64>) {
        base = span.lowerBound
        slots = Array(repeating: nil, count: Int(span.upperBound - span.lowerBound + 1))
        for (id, backing) in entries { slots[Int(id - base)] = .passUnretained(backing) }
        count = entries.count
    }

    private func offset(_ id: Int64) -> Int? {
        guard id.magnitude < Self.farthest, id >= base, id - base < Int64(slots.count) else { return nil }
        return Int(id - base)
    }

    subscript(id: Int64) -> ModelBackingData? {
        offset(id).flatMap { slots[$0]?.takeUnretainedValue() }
    }

    var all: [(id: Int64, backing: ModelBackingData)] {
        slots.indices.compactMap { offset in slots[offset].map { (base + Int64(offset), $0.takeUnretainedValue()) } }
    }

    /// Makes room for `id` if the ids stay close enough to a range; false if they would not.
    mutating func cover(_ id: Int64) -> Bool {
        if offset(id) != nil { return true }
        guard id.magnitude < Self.farthest else { return false }
        guard !slots.isEmpty else {
            base = id
            slots = Array(repeating: nil, count: 64)
            return true
        }
        // Empty, the slots move to the id where they are: objects looked up one at a time by ids
        // far apart, each freed before the next, would otherwise turn the table into a hash table
        // and back (two new tables) for every lookup.
        if count == 0 {
            base = id
            return true
        }
        let lower = min(base, id), upper = max(base + Int64(slots.count), id + 1)
        let limit = Int64(4 * (count + 1) + 1_024)
        guard upper - lower <= limit else { return false }
        // Twice as long (as the limit allows), the new room below when growing down.
        let size = max(upper - lower, min(2 * Int64(slots.count), limit))
        let newBase = id < base ? upper - size : base
        var grown = [Unmanaged<ModelBackingData>?](repeating: nil, count: Int(size))
        let shift = Int(base - newBase)
        for offset in slots.indices { grown[shift + offset] = slots[offset] }
        slots = grown
        base = newBase
        return true
    }

    /// As `RowIDTable.registered`, for an id `cover` made room for.
    mutating func registered(_ id: Int64, replacing: (ModelBackingData) -> Bool, orMake make: () -> ModelBackingData) -> ModelBackingData {
        let offset = Int(id - base)
        if let found = slots[offset] {
            let backing = found.takeUnretainedValue()
            guard replacing(backing) else { return backing }
            let made = make()
            slots[offset] = .passUnretained(made)
            return made
        }
        let made = make()
        slots[offset] = .passUnretained(made)
        count += 1
        return made
    }

    mutating func remove(_ id: Int64) {
        guard let offset = offset(id), slots[offset] != nil else { return }
        slots[offset] = nil
        count -= 1
    }

    mutating func remove(_ id: Int64, ifItIs address: UnsafeMutableRawPointer) {
        guard let offset = offset(id), slots[offset]?.toOpaque() == address else { return }
        slots[offset] = nil
        count -= 1
    }
}

/// Entries in a hash table, for ids that spread out.
///
/// Open addressing with linear probing, where an id's first slot is the id itself (masked): rows
/// fetched in id order land side by side, so registering, finding and forgetting tens of thousands
/// of objects walks memory in order instead of hashing each id to a random place. The table fills
/// to 1/2: the ids of a fetch are mostly some of a range of ids, and once the range is wider than
/// the table, ids a table's size apart share a first slot; at 1/2, a fetch of half a table's rows
/// (in any order) finds each entry in one probe, where at 7/8 it walked runs of ids that collide
/// (a cache miss each, for every object made and freed). Should ids crowd into few slots (a stride
/// that is a large power of two), the table switches to scrambled slots (Fibonacci hashing) for good.
private struct HashedRowIDs {
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

    init() {}

    /// A table of `entries` (each id once).
    init(_ entries: [(id: Int64, backing: ModelBackingData)]) {
        var capacity = 16
        while capacity < entries.count * 2 + 2 { capacity *= 2 }
        rehash(capacity: capacity)
        for (id, backing) in entries { place(Entry(id: id, backing: .passUnretained(backing))) }
    }

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
