import Testing

@testable import magpie

/// `--size-limit`'s value parser.
struct ByteCountTests {
    @Test func decimalUnitsArePowersOf1000BinaryUnitsOf1024AndUnitLettersIgnoreCase() {
        let cases: [(String, Int)] = [
            ("1048576", 1_048_576), ("0", 0), ("500MB", 500_000_000), ("2GiB", 2_147_483_648), ("1.5GB", 1_500_000_000),
            ("10kB", 10_000), ("10KB", 10_000), ("1KiB", 1024), ("3 mb", 3_000_000), ("2gib", 2_147_483_648),
            ("1MiB", 1_048_576), ("1TB", 1_000_000_000_000), ("512B", 512), ("0.5KiB", 512),
        ]
        for (text, bytes) in cases {
            #expect(ByteCount(argument: text)?.bytes == bytes, "\(text)")
        }
    }

    @Test func negativesGarbageAndOverflowAreRefused() {
        for text in ["-1", "-5MB", "abc", "", "MB", ".", "1.2.3", "5XB", "1e3", "inf", "nan", "12 34", "1,5GB", "99999999999TB"] {
            #expect(ByteCount(argument: text) == nil, "\(text)")
        }
    }
}
