/// Name rules shared by the resolver and the emitters.
public enum Naming {
    /// `AnimalCategory` → `animal_category`, `SDUserProfile` → `sd_user_profile`, `userID` → `user_id`.
    public static func snakeCase(_ name: String) -> String {
        let characters = Array(name)
        var result = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && (next?.isLowercase ?? false)) {
                    if !result.hasSuffix("_") { result.append("_") }
                }
            }
            result.append(contentsOf: character.lowercased())
        }
        return result
    }

    /// A Swift identifier: letters, digits and `_`, not starting with a digit.
    public static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first else { return false }
        func isLetter(_ scalar: Unicode.Scalar) -> Bool {
            (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || scalar == "_"
        }
        return isLetter(first) && name.unicodeScalars.allSatisfy { isLetter($0) || ($0 >= "0" && $0 <= "9") }
    }

    /// Swift keywords that must be written in backticks when used as names.
    public static let swiftKeywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init",
        "inout", "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public",
        "rethrows", "static", "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue",
        "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return",
        "throw", "switch", "where", "while", "Any", "as", "await", "false", "is", "nil", "self", "Self",
        "super", "throws", "true", "try", "_",
    ]

    /// The identifier, in backticks when it is a Swift keyword.
    public static func swiftIdentifier(_ name: String) -> String {
        swiftKeywords.contains(name) ? "`\(name)`" : name
    }
}
