/// The order in which a save runs the deletion plans of the entities it deletes objects of, one
/// plan per entity, so that its outcome does not depend on the order of the app's `delete` calls.
///
/// A save deletes its objects together (`SPEC.md` §3: a `deny` relationship refuses only when it
/// refers to an object that survives the save), but each plan checks the rows that remain when it
/// runs: deleting an author, whose books deny deletion while they are on loan, is refused while a
/// loan the same save deletes is still there. So a refused plan waits, and runs again once the
/// plans after it have run; the save is refused only when a whole round runs no plan, with the
/// first refusal of that round. A plan's success never makes another refuse (it only removes rows
/// and references), so the rounds end with every plan that can run, in any call order. A refusal
/// that only running two plans as one would lift (two entities whose `deny` relationships refer
/// to each other's objects, both deleted) stays one.
///
/// Shared by both contexts: `next()` gives the index of the next plan to run (nil when done),
/// `refused(_:_:)` records that it was refused (rolled back) and throws when no plan is left to run.
@_spi(Backend) public struct SaveDeletionOrder<Refusal: Error> {
    /// The plans of this round still to run (the next last), and those refused in it.
    private var queue: [Int]
    private var waiting: [Int] = []
    /// How many plans this round has given out, and its first refusal.
    private var givenOut = 0
    private var firstRefusal: Refusal?

    /// Plans `0..<count`, in that order (the order of the first deletion of each entity).
    @_spi(Backend) public init(count: Int) { queue = Array((0..<count).reversed()) }

    /// The plan to run next, or nil when every plan has run.
    @_spi(Backend) public mutating func next() -> Int? {
        if let index = queue.popLast() {
            givenOut += 1
            return index
        }
        guard !waiting.isEmpty else { return nil }
        // A new round: the plans refused in the last one, in which some other plan ran.
        (queue, waiting, givenOut, firstRefusal) = (waiting.reversed(), [], 0, nil)
        return next()
    }

    /// Plan `index` was refused with `refusal` (and rolled back): it waits for the next round,
    /// unless this round refused every plan it ran; then the save is refused, with the round's
    /// first refusal.
    @_spi(Backend) public mutating func refused(_ index: Int, _ refusal: Refusal) throws {
        waiting.append(index)
        if firstRefusal == nil { firstRefusal = refusal }
        if queue.isEmpty && waiting.count == givenOut { throw firstRefusal ?? refusal }
    }
}
