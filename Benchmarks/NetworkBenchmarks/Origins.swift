// The image set and the servers the benchmark downloads from: nginx in its own process when it
// is installed (so the origin does not compete inside the measured process), otherwise
// MagpieOrigin's ImageOrigin in this process.
import Dispatch
import Foundation
import Magpie
import MagpieBenchSupport
import MagpieOrigin
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// 1,000 distinct JPEGs on disk and their sizes (the byte counts every download is checked against).
struct ImageSet: Sendable {
    static let width = 320
    static let height = 240
    /// Written next to the images: a set made with other parameters is regenerated, not reused.
    static let recipe = "magpie-net-bench images v1: 320x240, gradient + noise 0..<\(noise), JPEG q85"
    /// Noise amplitude: tuned so the mean file is ~50 KB (pure noise gives ~110 KB, a pure gradient ~5 KB).
    static let noise = 200

    let folder: String
    let names: [String]
    let sizes: [Int]

    var totalBytes: Int { sizes.reduce(0, +) }
    var meanBytes: Double { Double(totalBytes) / Double(max(1, sizes.count)) }

    /// Reuses `folder` when it holds `count` images of the current recipe, else writes them (a few seconds).
    static func prepare(folder: String, count: Int) throws -> ImageSet {
        // Absolute: nginx resolves a relative `root` against its prefix, not the bench's working directory.
        let folder = URL(fileURLWithPath: folder).standardizedFileURL.path
        let files = FileManager.default
        let names = (0..<count).map { String(format: "%05d.jpg", $0) }
        let recipePath = folder + "/recipe.txt"
        let reusable = (try? String(contentsOfFile: recipePath, encoding: .utf8)) == recipe
            && names.allSatisfy { files.fileExists(atPath: folder + "/" + $0) }
        if !reusable {
            try? files.removeItem(atPath: folder)
            try files.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for (index, name) in names.enumerated() {
                let data = try ImageCoderRegistry.shared.encode(
                    makeImage(seed: UInt64(index)), as: .jpeg, options: ImageEncodingOptions(quality: 85))
                try data.write(to: URL(fileURLWithPath: folder + "/" + name))
            }
            try recipe.write(toFile: recipePath, atomically: true, encoding: .utf8)
        }
        let sizes = try names.map { name -> Int in
            let attributes = try files.attributesOfItem(atPath: folder + "/" + name)
            return (attributes[.size] as? NSNumber)?.intValue ?? 0
        }
        return ImageSet(folder: folder, names: names, sizes: sizes)
    }

    /// A diagonal two-colour gradient (colours from the seed) plus per-pixel noise: every image differs.
    private static func makeImage(seed: UInt64) throws -> Image {
        var random = SplitMix64(seed: seed)
        let from = (0..<3).map { _ in Int(random.next() % 256) }
        let to = (0..<3).map { _ in Int(random.next() % 256) }
        var rgba = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let t = (x + y) * 256 / (width + height)
                let offset = (y * width + x) * 4
                let bits = random.next()
                for channel in 0..<3 {
                    let base = from[channel] + (to[channel] - from[channel]) * t / 256
                    let jitter = Int((bits >> (UInt64(channel) * 16)) & 0xffff) % noise - noise / 2
                    rgba[offset + channel] = UInt8(clamping: base + jitter)
                }
            }
        }
        return try Image(width: width, height: height, rgba: rgba)
    }
}


/// The running nginx, for the interrupt handler: an orphaned nginx would keep its port after a Ctrl-C.
let runningNginx = Atomic<Int32>(0)

/// On SIGINT/SIGTERM: stop nginx, remove `workDir`, exit. The sources must stay alive, so the caller keeps them.
func handleInterrupts(workDir: String) -> [any DispatchSourceSignal] {
    [SIGINT, SIGTERM].map { number in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler {
            let pid = runningNginx.load(ordering: .relaxed)
            if pid > 0 { kill(pid, SIGTERM) }
            try? FileManager.default.removeItem(atPath: workDir)
            exit(128 + number)
        }
        source.resume()
        return source
    }
}

/// nginx serving the image folder from its own process: one process (`master_process off`), keep-alive.
final class NginxServer: Sendable {
    let pid: pid_t
    let port: Int
    let version: String

    private init(pid: pid_t, port: Int, version: String) {
        self.pid = pid
        self.port = port
        self.version = version
    }

    func url(_ name: String) -> String { "http://127.0.0.1:\(port)/\(name)" }

    /// Starts nginx on a free loopback port and returns once it accepts connections.
    static func start(executable: String, root: String, workDir: String) async throws -> NginxServer {
        let port = try freePort()
        let temp = workDir + "/nginx"
        try FileManager.default.createDirectory(atPath: temp, withIntermediateDirectories: true)
        // Temp paths are set so nginx never touches /var/lib/nginx; `types` so no mime.types file is needed.
        let config = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(temp)/nginx.pid;
            error_log \(temp)/error.log warn;
            events { worker_connections 1024; }
            http {
                access_log off;
                sendfile on;
                tcp_nopush on;
                keepalive_requests 100000;
                keepalive_timeout 60s;
                client_body_temp_path \(temp)/body;
                proxy_temp_path \(temp)/proxy;
                fastcgi_temp_path \(temp)/fastcgi;
                uwsgi_temp_path \(temp)/uwsgi;
                scgi_temp_path \(temp)/scgi;
                types { image/jpeg jpg; }
                default_type application/octet-stream;
                server {
                    listen 127.0.0.1:\(port);
                    root \(root);
                }
            }
            """
        try config.write(toFile: temp + "/nginx.conf", atomically: true, encoding: .utf8)
        let versionPath = temp + "/version.txt"
        _ = await waitForExit(try spawn(executable, ["-v"], stderr: versionPath))
        let version = ((try? String(contentsOfFile: versionPath, encoding: .utf8)) ?? "nginx")
            .replacingOccurrences(of: "nginx version: ", with: "").trimmingCharacters(in: .whitespacesAndNewlines)
        let pid = try spawn(executable, ["-p", temp, "-e", temp + "/error.log", "-c", temp + "/nginx.conf"],
                            stderr: temp + "/stderr.log")
        runningNginx.store(pid, ordering: .relaxed)
        let server = NginxServer(pid: pid, port: port, version: version)
        let deadline = ContinuousClock.now + .seconds(5)
        while !canConnect(port: port) {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid || ContinuousClock.now > deadline {
                await server.stop()
                let log = ["/error.log", "/stderr.log"].compactMap { try? String(contentsOfFile: temp + $0, encoding: .utf8) }.joined(separator: "\n")
                throw BenchError("nginx (\(executable)) did not start: \(log.trimmingCharacters(in: .whitespacesAndNewlines))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return server
    }

    /// Moves nginx (one process: `master_process off`) to `core` alone, with taskset, so a pinned client has the
    /// other core to itself.
    func pin(toCore core: Int) async throws {
        guard let taskset = findExecutable("taskset") else { throw BenchError("--origin-core: taskset is not installed") }
        let status = await waitForExit(try spawn(taskset, ["-p", "-c", "\(core)", "\(pid)"])).code
        guard status == 0 else { throw BenchError("taskset -p -c \(core) \(pid) failed (status \(status))") }
    }

    /// User + system CPU time nginx has used so far (from /proc, 10 ms resolution).
    var cpuTime: Duration? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // Fields 14 and 15 of the file (utime, stime); fields[0] is field 3 (the state).
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return .milliseconds((user + system) * 1000 / sysconf(Int32(_SC_CLK_TCK)))
    }

    /// SIGTERM, then SIGKILL if nginx is still there after 2 s.
    func stop() async {
        kill(pid, SIGTERM)
        let pid = pid
        let killer = Task {
            try await Task.sleep(for: .seconds(2))
            kill(pid, SIGKILL)
        }
        _ = await waitForExit(pid)
        killer.cancel()
        runningNginx.store(0, ordering: .relaxed)
    }
}

// MARK: Processes and sockets

/// Starts a process with posix_spawn (Foundation's Process costs ~50 ms per spawn on this machine, which
/// would show in a ~0.2 s curl run). stdout/stderr go to the given files, or /dev/null.
func spawn(_ path: String, _ arguments: [String], stdout: String? = nil, stderr: String? = nil) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdout ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, stderr ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
    let environment = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (argv + environment).forEach { free($0) } }
    // Swift's worker threads block signals and children inherit the mask: without this, nginx ignores SIGTERM.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var signals = sigset_t()
    sigemptyset(&signals)
    posix_spawnattr_setsigmask(&attributes, &signals)
    sigfillset(&signals)
    posix_spawnattr_setsigdefault(&attributes, &signals)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var pid: pid_t = 0
    let result = posix_spawn(&pid, path, &actions, &attributes, argv, environment)
    guard result == 0 else { throw BenchError("cannot start \(path): \(String(cString: strerror(result)))") }
    return pid
}

/// Waits for `pid` on a Dispatch thread (never blocking the cooperative pool, where an in-process origin
/// may be serving); returns the exit code (or 128 + signal) and the child's CPU time.
func waitForExit(_ pid: pid_t) async -> (code: Int32, cpu: Duration) {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            var status: Int32 = 0
            var usage = rusage()
            while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
            let cpu = Duration.microseconds(
                (Int64(usage.ru_utime.tv_sec) + Int64(usage.ru_stime.tv_sec)) * 1_000_000
                    + Int64(usage.ru_utime.tv_usec) + Int64(usage.ru_stime.tv_usec))
            let signal = status & 0x7f
            continuation.resume(returning: (signal == 0 ? (status >> 8) & 0xff : 128 + signal, cpu))
        }
    }
}

/// A loopback port nobody listens on right now (bound to port 0, then released).
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw BenchError("socket() failed") }
    defer { close(fd) }
    var address = loopback(port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else { throw BenchError("cannot bind a loopback port") }
    return Int(UInt16(bigEndian: address.sin_port))
}

func canConnect(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = loopback(port: port)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}

private func loopback(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
    return address
}

/// The first executable called `name` on PATH or in the sbin folders (where Debian puts nginx).
func findExecutable(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    let folders = path.split(separator: ":").map(String.init) + ["/usr/local/sbin", "/usr/sbin", "/sbin"]
    return folders.map { $0 + "/" + name }.first { access($0, X_OK) == 0 }
}
