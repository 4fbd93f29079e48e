#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The standard `process_*` series a Prometheus client library exposes, read from `/proc` when `/metrics` is asked:
/// CPU time, resident and virtual memory, start time, open and maximum file descriptors.
struct ProcessMetrics {
    var cpuSeconds: Double?
    var residentBytes: Int?
    var virtualBytes: Int?
    var startTimeSeconds: Double?
    var openFileDescriptors: Int?
    var maximumFileDescriptors: Int?

    /// The values now; a value that cannot be read (no `/proc`) is left out of the exposition.
    static func current() -> ProcessMetrics {
        var metrics = ProcessMetrics()
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let page = sysconf(Int32(_SC_PAGESIZE))
        // The command name in /proc/self/stat is in parentheses and may contain spaces: fields start after the last ")".
        if let stat = read("/proc/self/stat"), let close = stat.lastIndex(of: ")") {
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            // After the name: state is field 3, so field N (1-based in proc(5)) is fields[N - 3].
            func field(_ number: Int) -> Double? { number - 3 < fields.count ? Double(fields[number - 3]) : nil }
            if let user = field(14), let system = field(15), ticks > 0 { metrics.cpuSeconds = (user + system) / ticks }
            if let start = field(22), ticks > 0, let boot = bootTime() { metrics.startTimeSeconds = boot + start / ticks }
            metrics.virtualBytes = field(23).map { Int($0) }
            metrics.residentBytes = field(24).map { Int($0) * page }
        }
        metrics.openFileDescriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.count
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 { metrics.maximumFileDescriptors = Int(limit.rlim_cur) }
        return metrics
    }

    /// Appends the series in the text exposition format.
    func emit(into buffer: inout [UInt8]) {
        var text = ""
        func series(_ name: String, _ type: String, _ help: String, _ value: String?) {
            guard let value else { return }
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name) \(value)\n"
        }
        series("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", cpuSeconds.map { "\($0)" })
        series("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", residentBytes.map(String.init))
        series("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", virtualBytes.map(String.init))
        series(
            "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
            startTimeSeconds.map { "\($0)" })
        series("process_open_fds", "gauge", "Number of open file descriptors.", openFileDescriptors.map(String.init))
        series("process_max_fds", "gauge", "Maximum number of open file descriptors.", maximumFileDescriptors.map(String.init))
        buffer.append(contentsOf: text.utf8)
    }

    /// Seconds since the epoch at which the machine booted (`btime` in /proc/stat).
    private static func bootTime() -> Double? {
        guard let stat = read("/proc/stat") else { return nil }
        for line in stat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst(6).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    private static func read(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
