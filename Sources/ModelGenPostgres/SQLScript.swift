/// A script of SQL statements split at the semicolons that end them (not those inside quotes,
/// dollar-quoted function bodies or comments): PostgreSQL's extended protocol, which PostgresNIO
/// speaks, takes one statement at a time.
enum SQLScript {
    static func statements(_ script: String) -> [String] {
        let characters = Array(script.unicodeScalars)
        var statements: [String] = [], current = String.UnicodeScalarView()
        var index = 0
        func flush() {
            let statement = String(current).trimmingWhitespace()
            if !statement.isEmpty { statements.append(statement) }
            current = String.UnicodeScalarView()
        }
        while index < characters.count {
            let character = characters[index]
            switch character {
            case "-" where index + 1 < characters.count && characters[index + 1] == "-":
                // A line comment: dropped.
                while index < characters.count && characters[index] != "\n" { index += 1 }
                continue
            case "'", "\"":
                // A quoted literal or identifier ('' and "" inside stay within it).
                current.append(character)
                index += 1
                while index < characters.count {
                    current.append(characters[index])
                    index += 1
                    if characters[index - 1] == character { break }
                }
                continue
            case "$":
                // A dollar quote: $tag$ … $tag$.
                var end = index + 1
                while end < characters.count, characters[end] == "_" || characters[end].properties.isAlphabetic || ("0"..."9").contains(characters[end]) { end += 1 }
                if end < characters.count, characters[end] == "$" {
                    let tag = Array(characters[index...end])
                    current.append(contentsOf: tag)
                    index = end + 1
                    while index < characters.count {
                        if characters[index] == "$", index + tag.count <= characters.count, Array(characters[index..<index + tag.count]) == tag {
                            current.append(contentsOf: tag)
                            index += tag.count
                            break
                        }
                        current.append(characters[index])
                        index += 1
                    }
                    continue
                }
            case ";":
                flush()
                index += 1
                continue
            default:
                break
            }
            current.append(character)
            index += 1
        }
        flush()
        return statements
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }), let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(scalars[first...last])
    }
}
