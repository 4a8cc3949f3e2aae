/// `AND` and `OR`, joining conditions whose number grows with a schema or a predicate.
///
/// SQLite parses a chain of N terms (`a OR b OR c …`) as a tree N deep and refuses a statement
/// deeper than 1,000 (`SQLITE_MAX_EXPR_DEPTH`: "Expression tree is too large"), where a schema
/// may give a table a thousand foreign keys. Past 64 terms, `join` nests the two halves in
/// parentheses, so the depth grows with the logarithm of the number of terms:
///
///     (a OR b OR … (64 terms)) OR (… OR z)
public enum SQLConnective: String, Sendable {
    case and = "AND"
    case or = "OR"

    /// The most terms written as one flat chain.
    public static let longestChain = 64

    /// `terms` joined by this connective (none when empty: the caller decides what that means).
    public func join(_ terms: some Collection<String>) -> String {
        guard terms.count > Self.longestChain else { return terms.joined(separator: " \(rawValue) ") }
        let middle = terms.index(terms.startIndex, offsetBy: terms.count / 2)
        return "(\(join(terms[..<middle]))) \(rawValue) (\(join(terms[middle...])))"
    }
}
