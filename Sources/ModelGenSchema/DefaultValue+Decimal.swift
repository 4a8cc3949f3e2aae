import Foundation

extension DefaultValue {
    /// The digits the app stores for the `Decimal` that `text` spells (`Decimal.description`, the
    /// shortest: `12.50` → `12.5`, `-0.0` → `0`); nil when `Decimal(string:)` cannot read it (an
    /// exponent beyond `Decimal`'s). A `Decimal` default is kept in these digits (the resolver), so
    /// that a row its SQL default fills is the same text to a unique index as one the app saved.
    public static func decimalDigits(_ text: String) -> String? {
        Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))?.description
    }
}
