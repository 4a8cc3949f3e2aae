extension ModelContextError {
    /// A save wrote no value where the schema requires one (a required relationship still nil), in
    /// the schema's words, the same on either backend: `property` is `Entity.property`.
    ///
    ///     .constraintViolation("Loan.book is required and was nil; set it, or delete the object, before saving")
    @_spi(Backend) public static func missingValue(_ property: String) -> ModelContextError {
        .constraintViolation("\(property) is required and was nil; set it, or delete the object, before saving")
    }
}
