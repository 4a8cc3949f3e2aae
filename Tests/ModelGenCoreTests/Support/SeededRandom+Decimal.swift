import Foundation
import ModelGenTestSupport

extension SeededRandom {
    /// A `Decimal` of up to 38 digits (what one holds) at any of its exponents, whose
    /// `description` spells it in up to 167 characters.
    mutating func decimalOfAnyExponent() -> Decimal {
        let digits = (0...below(38)).map { _ in String(below(10)) }.joined()
        return Decimal(sign: below(2) == 0 ? .plus : .minus, exponent: below(256) - 128,
                       significand: Decimal(string: digits, locale: Locale(identifier: "en_US_POSIX"))!)
    }
}
