/// Finds the candidate a misspelt name was most likely meant to be.
public enum NearMiss {
    /// The closest candidate within a small edit distance, or nil when nothing is close.
    /// Ties go to the earliest candidate, so the answer is deterministic.
    public static func suggestion(for name: String, among candidates: [String]) -> String? {
        let lowered = name.lowercased()
        var best: (candidate: String, distance: Int)?
        for candidate in candidates where candidate != name {
            let distance = editDistance(lowered, candidate.lowercased())
            let limit = max(1, min(3, candidate.count / 3))
            guard distance <= limit || lowered == candidate.lowercased() else { continue }
            if best == nil || distance < best!.distance {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }

    /// `; did you mean 'X'?` or the empty string.
    public static func hint(for name: String, among candidates: [String]) -> String {
        suggestion(for: name, among: candidates).map { "; did you mean '\($0)'?" } ?? ""
    }

    /// Levenshtein distance with adjacent transpositions counted as one edit.
    static func editDistance(_ lhs: String, _ rhs: String) -> Int {
        let a = Array(lhs.unicodeScalars), b = Array(rhs.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        if abs(a.count - b.count) > 3 { return abs(a.count - b.count) }
        var previousPrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previousPrevious[j - 2] + 1)
                }
            }
            (previousPrevious, previous, current) = (previous, current, previousPrevious)
        }
        return previous[b.count]
    }
}
