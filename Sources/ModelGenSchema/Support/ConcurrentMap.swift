import Foundation

extension Array where Element: Sendable {
    /// `map` spread over the machine's cores. Elements are transformed independently and the
    /// results keep their positions, so the output is exactly `map`'s: generation stays
    /// deterministic however the work is scheduled.
    package func concurrentMap<Result: Sendable>(_ transform: @escaping @Sendable (Element) -> Result) -> [Result] {
        guard count > 1, ProcessInfo.processInfo.activeProcessorCount > 1 else { return map(transform) }
        let elements = self
        let slots = ResultSlots<Result>(count: count)
        // Dispatch hands the iterations to its worker threads as they become free.
        DispatchQueue.concurrentPerform(iterations: count) { index in
            slots.store(transform(elements[index]), at: index)
        }
        return slots.results()
    }
}

/// One slot per result, in memory allocated once: workers write through the pointer, never
/// through a Swift array, whose mutating accessors would race (`withUnsafeMutableBufferPointer`
/// moves the array out of the property while its closure runs). Unchecked `Sendable`: every slot
/// is written by exactly one worker, and read only after `concurrentPerform` has returned.
private final class ResultSlots<Result>: @unchecked Sendable {
    private let slots: UnsafeMutableBufferPointer<Result?>

    init(count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: nil)
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    func store(_ result: Result, at index: Int) {
        slots[index] = result
    }

    func results() -> [Result] {
        slots.map { $0! }
    }
}
