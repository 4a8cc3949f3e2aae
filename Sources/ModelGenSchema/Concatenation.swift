extension Array where Element == String {
    /// The strings one after another, `separator` between them, written into one allocation of
    /// the exact size. The standard `joined(separator:)` reserves about a byte per element and
    /// grows by doubling, which copies an output of a hundred megabytes several times over.
    public func concatenated(separator: String = "") -> String {
        guard let first else { return "" }
        var result = ""
        result.reserveCapacity(reduce(separator.utf8.count * (count - 1)) { $0 + $1.utf8.count })
        result += first
        for part in dropFirst() {
            result += separator
            result += part
        }
        return result
    }
}
