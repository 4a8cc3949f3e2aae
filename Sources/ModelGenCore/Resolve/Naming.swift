/// Name rules shared by the resolver and the emitters.
public enum Naming {
    /// `AnimalCategory` → `animal_category`, `SDUserProfile` → `sd_user_profile`, `userID` → `user_id`.
    public static func snakeCase(_ name: String) -> String {
        if let ascii = asciiSnakeCase(name) { return ascii }
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

    /// `snakeCase` for ASCII names (nearly all of them), on bytes; nil for any other name.
    private static func asciiSnakeCase(_ name: String) -> String? {
        let bytes = Array(name.utf8)
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        func isUpper(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") }
        func isLower(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count + 4)
        for (index, byte) in bytes.enumerated() {
            if isUpper(byte), index > 0 {
                let previous = bytes[index - 1]
                let nextIsLower = index + 1 < bytes.count && isLower(bytes[index + 1])
                if isLower(previous) || isDigit(previous) || (isUpper(previous) && nextIsLower), result.last != UInt8(ascii: "_") {
                    result.append(UInt8(ascii: "_"))
                }
            }
            result.append(isUpper(byte) ? byte + 32 : byte)
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// A name a schema can use: ASCII letters, digits and `_`, not starting with a digit (a Swift
    /// identifier, and an SQL one that needs no Unicode rules).
    public static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first else { return false }
        func isLetter(_ scalar: Unicode.Scalar) -> Bool {
            (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || scalar == "_"
        }
        return isLetter(first) && name.unicodeScalars.allSatisfy { isLetter($0) || ($0 >= "0" && $0 <= "9") }
    }

    /// Swift keywords that must be written in backticks when used as names; `any`, `some` and
    /// `each` are contextual, but where a type is expected Swift reads them as its modifiers
    /// (`extension any {`, `let value: some?` do not parse), so they are written in backticks too.
    public static let swiftKeywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init",
        "inout", "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public",
        "rethrows", "static", "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue",
        "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return",
        "throw", "switch", "where", "while", "Any", "as", "await", "false", "is", "nil", "self", "Self",
        "super", "throws", "true", "try", "_", "Type", "Protocol", "any", "some", "each",
    ]

    /// The identifier, in backticks when it is a Swift keyword.
    public static func swiftIdentifier(_ name: String) -> String {
        swiftKeywords.contains(name) ? "`\(name)`" : name
    }

    /// Text as comments and diagnostics show it: control characters and line or paragraph
    /// separators written `\u{…}`, so a name or file name cannot end a comment line or start a
    /// statement, and a diagnostic stays one line.
    public static func printable(_ text: String) -> String {
        func isUnprintable(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator: true
            default: false
            }
        }
        guard text.unicodeScalars.contains(where: isUnprintable) else { return text }
        return text.unicodeScalars.map { isUnprintable($0) ? "\\u{\(String($0.value, radix: 16, uppercase: true))}" : String($0) }.joined()
    }
}
