extension Int {
    /// `self × other`, or `Int.max` when that overflows: for size estimates that are compared against limits, where
    /// "more than any limit" is the right answer to an overflow.
    func saturatingMultiply(_ other: Int) -> Int {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? .max : product
    }

    /// `self + other`, or `Int.max` when that overflows.
    func saturatingAdd(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}
