import ArgumentParser

/// `--timeout SECONDS` of the commands that download, validated in one place.
struct TimeoutOption: ParsableArguments {
    /// The largest timeout accepted: a day.
    static let maximum: Double = 86_400

    // Unconditional: `--timeout -1` reads -1 as the value (and meets the range check below) instead of an
    // unknown flag `-1`, so it gets the same message as `--timeout=-1`.
    @Option(parsing: .unconditional, help: "Download timeout in seconds, body included (more than 0, at most 86400).")
    var timeout: Double = 15

    func validate() throws {
        guard timeout > 0, timeout <= Self.maximum, timeout.isFinite else {
            throw ValidationError("--timeout must be more than 0 and at most 86400 seconds")
        }
    }
}
