/// Distinct objects in the order they were added (a to-many list, a context's inserted objects).
/// Once indexed, membership, appending and removal take constant time: a removed object's slot
/// stays in place and is skipped, and the slots are compacted when the removed ones outnumber
/// the kept, so removing each of n objects costs O(n) in all (shifting the array at each removal
/// cost O(n²)). Unindexed (a short list, or one never asked about membership), it is a plain
/// array, searched. Two words, as the array alone was: every object's relationship states hold
/// one per to-many relationship.
@_spi(Backend) public struct OrderedObjects {
    /// The objects, and while indexed some removed ones, which `positions` no longer names.
    private var slots: [any PersistentModel]
    /// Each kept object's slot; nil while not indexed.
    private var positions: [ObjectIdentifier: Int]?
    /// How many slots hold removed objects (none while not indexed).
    private var vacated: Int { positions.map { slots.count - $0.count } ?? 0 }
    /// Whether some slots hold removed objects (`compact()` drops them).
    var hasVacatedSlots: Bool { vacated > 0 }

    /// `objects`, which must be distinct, in their order; indexed or not.
    @_spi(Backend) public init(_ objects: [any PersistentModel] = [], indexed: Bool = false) {
        slots = objects
        if indexed { index() }
    }

    /// The objects, in order.
    @_spi(Backend) public var elements: [any PersistentModel] {
        guard vacated > 0, let positions else { return slots }
        return slots.indices.compactMap { positions[ObjectIdentifier(slots[$0])] == $0 ? slots[$0] : nil }
    }

    @_spi(Backend) public var count: Int { positions?.count ?? slots.count }
    @_spi(Backend) public var isEmpty: Bool { count == 0 }
    var isIndexed: Bool { positions != nil }

    @_spi(Backend) public func contains(_ object: AnyObject) -> Bool {
        if let positions { return positions[ObjectIdentifier(object)] != nil }
        return slots.contains { $0 === object }
    }

    /// The object `identity` names, if it is one of the objects (constant time once indexed).
    func element(identifiedBy identity: ObjectIdentifier) -> (any PersistentModel)? {
        if let positions { return positions[identity].map { slots[$0] } }
        return slots.first { ObjectIdentifier($0) == identity }
    }

    /// Where `object` comes in the order, as a number that sorts the kept objects in their order
    /// (nil for an object not kept, or when not indexed).
    func position(of object: AnyObject) -> Int? { positions?[ObjectIdentifier(object)] }

    /// Indexes the objects: from now on membership and removal take constant time.
    mutating func index() {
        guard positions == nil else { return }
        var positions = [ObjectIdentifier: Int](minimumCapacity: slots.count)
        for (slot, object) in slots.enumerated() { positions[ObjectIdentifier(object)] = slot }
        self.positions = positions
    }

    /// Appends `object`, which is not one of the objects.
    mutating func appendNew(_ object: any PersistentModel) {
        positions?[ObjectIdentifier(object)] = slots.count
        slots.append(object)
    }

    /// Removes `object`; false when it is not one of the objects.
    @discardableResult
    mutating func remove(_ object: AnyObject) -> Bool {
        guard positions != nil else {
            guard let slot = slots.firstIndex(where: { $0 === object }) else { return false }
            slots.remove(at: slot)
            return true
        }
        guard let slot = positions?.removeValue(forKey: ObjectIdentifier(object)) else { return false }
        if slot == slots.count - 1 {
            // The last object: its slot goes, and those of objects removed before it that are now
            // last, so that taking objects off the end leaves nothing to compact.
            slots.removeLast()
            while let last = slots.last, positions?[ObjectIdentifier(last)] != slots.count - 1 { slots.removeLast() }
        } else if vacated > slots.count / 2 {
            compact()
        }
        return true
    }

    /// Removes the objects `excluded` names.
    mutating func removeAll(in excluded: Set<ObjectIdentifier>) {
        guard !excluded.isEmpty else { return }
        let indexed = isIndexed
        self = OrderedObjects(elements.filter { !excluded.contains(ObjectIdentifier($0)) }, indexed: indexed)
    }

    /// Drops the slots of removed objects.
    mutating func compact() {
        self = OrderedObjects(elements, indexed: true)
    }
}
