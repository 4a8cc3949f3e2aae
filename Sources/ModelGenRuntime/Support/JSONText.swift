import Foundation

extension String {
    /// The text as a JSON string literal: quotes, backslashes and control characters escaped.
    /// The reports' `json` forms build their objects by hand, in a fixed key order, with it.
    var jsonQuoted: String {
        var result = "\""
        for scalar in unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
