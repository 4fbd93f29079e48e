import ArgumentParser
import Magpie

/// `--retry N` and `--retry-wait S` for the commands that download: retries of transient failures.
struct RetryOptions: ParsableArguments {
    @Option(help: "Retry a download that failed transiently (timeout, lost connection, cut-short body, 408, 429, 5xx) up to N times (0...10).")
    var retry = 0

    @Option(name: .customLong("retry-wait"), help: """
        Seconds before the first retry; the n-th retry waits n times as long. A longer Retry-After from \
        the server wins, up to 60 s (beyond that the URL fails).
        """)
    var retryWait: Double = 1

    func validate() throws {
        guard (0...10).contains(retry) else { throw ValidationError("--retry must be between 0 and 10") }
        guard retryWait >= 0, retryWait <= 600 else { throw ValidationError("--retry-wait must be between 0 and 600 seconds") }
    }

    /// The downloader's retry strategy; nil (no retries) without `--retry`. On the downloader rather than
    /// per retrieval, so repeated URLs still share one request.
    var strategy: (any RetryStrategy)? {
        guard retry > 0 else { return nil }
        return DelayRetryStrategy(maxRetryCount: retry, retryInterval: .accumulated(retryWait))
    }
}
