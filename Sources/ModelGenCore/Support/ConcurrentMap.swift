import Foundation

extension Array where Element: Sendable {
    /// `map` spread over the machine's cores. Elements are transformed independently and the
    /// results keep their positions, so the output is exactly `map`'s: generation stays
    /// deterministic however the work is scheduled.
    func concurrentMap<Result: Sendable>(_ transform: @escaping @Sendable (Element) -> Result) -> [Result] {
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

/// One slot per result. Unchecked `Sendable`: every slot is written by exactly one worker, and
/// read only after `concurrentPerform` has returned.
private final class ResultSlots<Result>: @unchecked Sendable {
    private var slots: [Result?]

    init(count: Int) {
        slots = Array(repeating: nil, count: count)
    }

    func store(_ result: Result, at index: Int) {
        slots.withUnsafeMutableBufferPointer { $0[index] = result }
    }

    func results() -> [Result] {
        slots.map { $0! }
    }
}
