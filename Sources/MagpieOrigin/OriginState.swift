import Synchronization

/// Everything the route handlers share and the tests inspect: the asset table, the counters and the stop flag.
///
/// One `Mutex` guards all of it; every critical section is a few dictionary operations, so contention is irrelevant
/// next to the network I/O around it.
final class OriginState: Sendable {
    private struct Values {
        var assets: [String: OriginAsset]
        var port = 0
        var stopping = false
        var totalRequests = 0
        var bodyBytesSent = 0
        var activeStreams = 0
        var requestsByPath: [String: Int] = [:]
        var requestsByURL: [String: Int] = [:]
        var headersByPath: [String: [String: String]] = [:]
        var held: Set<String> = []
        var waitingWhileHeld = 0
    }

    private let values: Mutex<Values>

    init(assets: [String: OriginAsset]) {
        values = Mutex(Values(assets: assets))
    }

    // MARK: Configuration

    var port: Int {
        get { values.withLock { $0.port } }
        set { values.withLock { $0.port = newValue } }
    }

    func asset(named name: String) -> OriginAsset? {
        values.withLock { $0.assets[name] }
    }

    func setAsset(_ asset: OriginAsset, forName name: String) {
        values.withLock { $0.assets[name] = asset }
    }

    /// Set once `stop()` begins; streaming loops poll it so graceful shutdown is not held up by stalled responses.
    var isStopping: Bool { values.withLock { $0.stopping } }

    func beginStopping() {
        values.withLock { $0.stopping = true }
    }

    // MARK: Holding responses

    func hold(_ name: String) { values.withLock { _ = $0.held.insert(name) } }
    func release(_ name: String) { values.withLock { _ = $0.held.remove(name) } }
    var waitingWhileHeld: Int { values.withLock { $0.waitingWhileHeld } }

    /// Returns once `name` is not held (or the origin stops), polling: a held response is a test's rare pause.
    func waitWhileHeld(_ name: String) async {
        guard values.withLock({ $0.held.contains(name) }) else { return }
        values.withLock { $0.waitingWhileHeld += 1 }
        defer { values.withLock { $0.waitingWhileHeld -= 1 } }
        while values.withLock({ $0.held.contains(name) && !$0.stopping }) {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    // MARK: Counters

    /// Counts a request under its path (no query) and remembers its headers.
    func recordRequest(path: String, headers: [String: String]) {
        values.withLock { values in
            values.totalRequests += 1
            values.requestsByPath[path, default: 0] += 1
            values.headersByPath[path] = headers
        }
    }

    /// Counts one more attempt at `url` (path and query) and returns the attempt number, starting at 1.
    /// Increment and read happen under one lock so concurrent flaky requests get distinct numbers.
    func nextAttempt(url: String) -> Int {
        values.withLock { values in
            values.requestsByURL[url, default: 0] += 1
            return values.requestsByURL[url, default: 0]
        }
    }

    func requestCount(path: String) -> Int {
        values.withLock { $0.requestsByPath[path] ?? 0 }
    }

    func lastRequestHeaders(path: String) -> [String: String] {
        values.withLock { $0.headersByPath[path] ?? [:] }
    }

    var totalRequests: Int { values.withLock { $0.totalRequests } }
    var bodyBytesSent: Int { values.withLock { $0.bodyBytesSent } }
    var activeStreams: Int { values.withLock { $0.activeStreams } }

    func addBodyBytes(_ count: Int) {
        values.withLock { $0.bodyBytesSent += count }
    }

    func streamStarted() {
        values.withLock { $0.activeStreams += 1 }
    }

    func streamEnded() {
        values.withLock { $0.activeStreams -= 1 }
    }

    /// Clears the counters, the recorded headers and the flaky routes' attempt counts (so a reset origin fails
    /// again like a fresh one); keeps the assets.
    func resetCounters() {
        values.withLock { values in
            values.totalRequests = 0
            values.bodyBytesSent = 0
            values.requestsByPath = [:]
            values.requestsByURL = [:]
            values.headersByPath = [:]
        }
    }
}
