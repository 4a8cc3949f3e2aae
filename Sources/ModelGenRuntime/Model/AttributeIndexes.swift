/// A set of attribute indexes (an object's changed attributes): a bit for each of the first 64,
/// a `Set` for any further ones. Changing an attribute of a loaded object records its index with
/// no allocation and no hashing, and an object that changes none holds nothing.
@_spi(Backend) public struct AttributeIndexes: Sequence {
    private var low: UInt64 = 0
    private var high: Set<Int> = []

    @_spi(Backend) public init() {}

    @_spi(Backend) public var isEmpty: Bool { low == 0 && high.isEmpty }

    @_spi(Backend) public func contains(_ index: Int) -> Bool {
        index < 64 ? low & (1 << UInt64(index)) != 0 : high.contains(index)
    }

    @_spi(Backend) public mutating func insert(_ index: Int) {
        if index < 64 { low |= 1 << UInt64(index) } else { high.insert(index) }
    }

    /// The indexes in ascending order.
    @_spi(Backend) public func makeIterator() -> IndexingIterator<[Int]> {
        ((0..<64).filter { low & (1 << UInt64($0)) != 0 } + high.sorted()).makeIterator()
    }
}
