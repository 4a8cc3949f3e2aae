import Foundation

/// SplitMix64: a small seeded generator, so every run of a seeded test draws the same values and
/// a failure that names its seed reproduces. With `MODELGEN_TEST_SEED_SALT=n` in the environment
/// every seed draws another stream (the same for the same `n`), so the seeded tests of every test
/// target run again on inputs no earlier run saw; the salt and the seed reproduce a failure.
public struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed ^ Self.salt }

    /// What `MODELGEN_TEST_SEED_SALT` mixes into every seed: 0 (the seeds as written) when it is unset.
    public static let salt: UInt64 = ProcessInfo.processInfo.environment["MODELGEN_TEST_SEED_SALT"]
        .flatMap { UInt64($0) }.map { $0 &* 0x9E37_79B9_7F4A_7C15 } ?? 0

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound` (0 when `bound` is not positive).
    public mutating func below(_ bound: Int) -> Int { bound <= 0 ? 0 : Int(next() % UInt64(bound)) }
}
