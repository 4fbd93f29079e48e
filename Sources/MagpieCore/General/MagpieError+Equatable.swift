extension MagpieError: Equatable {
    /// Two errors are equal when their cases and reasons are. Binding failures compare what is cheap and
    /// meaningful: an empty source equals an empty source; a superseded task compares its source's cache key
    /// and the nested error (the result's image is not compared).
    public static func == (lhs: MagpieError, rhs: MagpieError) -> Bool {
        switch (lhs, rhs) {
        case (.decodingFailed(let a), .decodingFailed(let b)): a == b
        case (.encodingFailed(let a), .encodingFailed(let b)): a == b
        case (.imageCreationFailed(let a), .imageCreationFailed(let b)): a == b
        case (.processingFailed(let a), .processingFailed(let b)): a == b
        case (.cacheFailed(let a), .cacheFailed(let b)): a == b
        case (.requestFailed(let a), .requestFailed(let b)): a == b
        case (.responseFailed(let a), .responseFailed(let b)): a == b
        case (.imageSettingFailed(.emptySource), .imageSettingFailed(.emptySource)): true
        case (.imageSettingFailed(.notCurrentSourceTask(_, let a, let sourceA)),
            .imageSettingFailed(.notCurrentSourceTask(_, let b, let sourceB))):
            a == b && sourceA.cacheKey == sourceB.cacheKey
        default: false
        }
    }
}
