import AsyncHTTPClient
import Dispatch
import Foundation
import MagpieOrigin
import MagpieServer
import NIOCore
import NIOHTTP1
import Testing

/// Whether nginx is on PATH or in Debian's /usr/sbin (outside the suite: its trait cannot read the suite's own members).
private let nginxInstalled: Bool = {
    let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
    return (path + ["/usr/sbin", "/usr/local/sbin"]).contains { FileManager.default.isExecutableFile(atPath: $0 + "/nginx") }
}()

/// `scripts/cluster`: real `magpie serve` processes (the debug build) behind a real nginx with
/// deploy/nginx/magpie.conf, fetching from the in-process test origin. Skipped when nginx is not installed
/// (`scripts/install-deps nginx-light`, which `scripts/test` runs, installs it).
@Suite(
    "magpie serve instances behind nginx", .serialized,
    .enabled(if: nginxInstalled, "nginx is not installed (scripts/install-deps nginx-light): cluster tests skipped"))
struct ClusterTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Sources the tests ask for: copies of the fixture PNG under distinct names, cacheable for 10 minutes, so an
    /// instance fetches each at most once (no revalidation) and the origin's counters count instances' fetches.
    static let sources: [String: OriginAsset] = Dictionary(
        uniqueKeysWithValues: (0..<40).map { ("s\($0).png", OriginAsset(bytes: OriginFixture.png, contentType: "image/png", maxAge: 600)) })

    // MARK: - Harness

    /// What `scripts/cluster status --json` says.
    struct Status: Decodable {
        struct Instance: Decodable {
            let index: Int
            let url: String
            let port: Int
            let pid: Int32
            let running: Bool
            let healthy: Bool
        }
        let front: String
        let nginxPid: Int32
        let nginxCacheBytes: Int
        let instances: [Instance]
    }

    /// One answer through nginx or from an instance.
    struct Answer: Sendable {
        let status: Int
        let headers: HTTPHeaders
        let body: Data
        func header(_ name: String) -> String? { headers.first(name: name) }
        /// The instance that answered last (`A, B` after a failover), nil for a cache hit.
        var upstream: String? {
            header("X-Magpie-Upstream").flatMap { $0.components(separatedBy: ", ").last }
        }
    }

    /// Bytes one Dispatch block writes and another reads after `DispatchGroup.wait()`, which orders the two.
    final class Collected: @unchecked Sendable {
        var data = Data()
    }

    /// A cluster started by `scripts/cluster up` in a private state folder, with a client and a signer.
    struct Cluster: Sendable {
        let stateDirectory: URL
        let origin: ImageOrigin
        let client: HTTPClient
        let signer: ImageURLSigner
        let front: String

        /// Runs `scripts/cluster ARGUMENTS --state-dir D` off the cooperative pool (the origin answers the instances
        /// from this process, on that pool); throws with its output when it fails.
        @discardableResult
        static func script(
            _ arguments: [String], stateDirectory: URL, accepting: Set<Int32> = [0], environment: [String: String] = [:]
        ) async throws -> String {
            try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async {
                    continuation.resume(with: Result {
                        let process = Process()
                        process.executableURL = ClusterTests.root.appendingPathComponent("scripts/cluster")
                        let split = arguments.firstIndex(of: "--") ?? arguments.endIndex
                        process.arguments = Array(arguments[..<split]) + ["--state-dir", stateDirectory.path]
                            + Array(arguments[split...])
                        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
                        let out = Pipe(), err = Pipe()
                        process.standardOutput = out
                        process.standardError = err
                        try process.run()
                        // Both pipes at once: a full stderr pipe must not stall the script while we read stdout.
                        let errors = Collected()
                        let group = DispatchGroup()
                        DispatchQueue.global().async(group: group) { errors.data = err.fileHandleForReading.readDataToEndOfFile() }
                        let output = out.fileHandleForReading.readDataToEndOfFile()
                        group.wait()
                        process.waitUntilExit()
                        let text = String(decoding: output, as: UTF8.self)
                        guard accepting.contains(process.terminationStatus) else {
                            throw CocoaError(.executableLoad, userInfo: [
                                NSLocalizedDescriptionKey:
                                    "scripts/cluster \(arguments.joined(separator: " ")) exited \(process.terminationStatus): "
                                    + text + String(decoding: errors.data, as: UTF8.self),
                            ])
                        }
                        return text
                    })
                }
            }
        }

        /// Starts `instances` instances and nginx, runs `body`, and always runs `scripts/cluster down` (and stops the
        /// origin and client, and removes the state folder), also when `body` throws.
        static func with(instances: Int, _ body: (Cluster) async throws -> Void) async throws {
            let origin = try await OriginFixture.start(extra: ClusterTests.sources)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-cluster-test-\(UUID().uuidString)")
            var configuration = HTTPClient.Configuration()
            // Enough connections for the concurrent-miss test to put all its requests on the wire at once.
            configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            func tearDown() async {
                _ = try? await script(["down"], stateDirectory: folder)
                try? await client.shutdown()
                await origin.stop()
                try? FileManager.default.removeItem(at: folder)
            }
            do {
                let magpie = try BuiltProducts.executable("magpie")
                let output = try await script(
                    [
                        "up", "--instances", String(instances), "--port", "0", "--magpie", magpie.path, "--",
                        "--allow-network", "127.0.0.0/8",
                    ], stateDirectory: folder,
                    // As docs/DEPLOYMENT.md says: keys in the environment, which every instance inherits, never on argv.
                    environment: ["MAGPIE_KEY": ServerFixture.key, "MAGPIE_SALT": ServerFixture.salt])
                let front = output.split(separator: "\n").first.map(String.init) ?? ""
                #expect(front.hasPrefix("http://127.0.0.1:"), "up prints the front URL first: \(output)")
                let cluster = Cluster(
                    stateDirectory: folder, origin: origin, client: client,
                    signer: try ImageURLSigner(hexPairs: [(key: ServerFixture.key, salt: ServerFixture.salt)]), front: front)
                try await body(cluster)
            } catch {
                await tearDown()
                throw error
            }
            await tearDown()
        }

        func status() async throws -> Status {
            // Exit status 1 means "not all healthy", which the failover test wants to see, not a failure.
            let text = try await Self.script(["status", "--json"], stateDirectory: stateDirectory, accepting: [0, 1])
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            return try decoder.decode(Status.self, from: Data(text.utf8))
        }

        func scale(to instances: Int) async throws {
            try await Self.script(["scale", "--instances", String(instances)], stateDirectory: stateDirectory)
        }

        /// The signed plain-URL path of origin asset `name` with `options` and an optional extension.
        func imagePath(_ name: String, options: [String] = [], extension ext: String? = nil) -> String {
            let source = origin.url("/img/\(name)").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let path = options.map { "/" + $0 }.joined() + "/plain/" + source + (ext.map { "@" + $0 } ?? "")
            return "/" + signer.signature(forPath: path) + path
        }

        /// The same path with a signature that is wrong (but well formed): the instance answers 403 at once, not
        /// cached (no-store), and nginx still routes it by its source.
        func badlySignedPath(source: String) -> String {
            "/" + String(repeating: "A", count: 43) + "/plain/" + source
        }

        func get(_ path: String, base: String? = nil, accept: String? = nil) async throws -> Answer {
            var request = HTTPClientRequest(url: (base ?? front) + path)
            if let accept { request.headers.add(name: "Accept", value: accept) }
            let response = try await client.execute(request, timeout: .seconds(60))
            let body = try await response.body.collect(upTo: 16 * 1024 * 1024)
            return Answer(status: Int(response.status.code), headers: response.headers, body: Data(body.readableBytesView))
        }

        /// Image requests an instance has answered, from its own /metrics (asked directly: nginx hides it).
        func imageRequests(at instanceURL: String) async throws -> Int {
            let text = try await get("/metrics", base: instanceURL).body
            return String(decoding: text, as: UTF8.self).split(separator: "\n")
                .filter { $0.hasPrefix(#"magpie_server_requests_total{route="image""#) }
                .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
                .reduce(0, +)
        }

        func imageRequestsByInstance() async throws -> [String: Int] {
            var counts: [String: Int] = [:]
            for instance in try await status().instances {
                counts[instance.url.replacingOccurrences(of: "http://", with: "")] = try await imageRequests(at: instance.url)
            }
            return counts
        }
    }

    // MARK: - Routing

    @Test func everyVariantOfOneSourceIsProcessedOnOneInstanceAndTheOriginSeesOneRequestPerSource() async throws {
        try await Cluster.with(instances: 3) { cluster in
            let variants: [(options: [String], ext: String?, accept: String?)] = [
                (["resize:20x20:fit"], "png", nil), (["resize:20x20:fit"], "webp", nil), (["resize:32x24:fill"], "jpeg", nil),
                (["blur:1"], nil, "image/avif,image/webp,*/*"), (["blur:1"], nil, "image/webp,*/*"), (["round:4"], nil, "*/*"),
            ]
            let names = (0..<6).map { "s\($0).png" }
            var routedTo: [String: Set<String>] = [:]
            var answeredBy: [String: Int] = [:]
            for name in names {
                for variant in variants {
                    let answer = try await cluster.get(
                        cluster.imagePath(name, options: variant.options, extension: variant.ext), accept: variant.accept)
                    #expect(answer.status == 200, "\(name) \(variant.options)")
                    let upstream = try #require(answer.upstream, "a first request is a miss and names its instance")
                    routedTo[name, default: []].insert(upstream)
                    answeredBy[upstream, default: 0] += 1
                }
            }
            for name in names {
                #expect(routedTo[name]?.count == 1, "\(name) went to \(routedTo[name] ?? [])")
                #expect(cluster.origin.requestCount(path: "/img/\(name)") == 1, "\(name): one origin fetch for all variants")
            }
            // The instances' own counters agree with the header: each processed exactly the variants routed to it.
            let counted = try await cluster.imageRequestsByInstance()
            for (instance, count) in counted { #expect(count == answeredBy[instance, default: 0], "\(instance)") }
            print("routing: \(names.count) sources x \(variants.count) variants, requests per instance: \(counted)")
        }
    }

    // MARK: - Failover

    /// Counts of a client loop through nginx.
    actor LoadCounts {
        var completed = 0
        var failed = 0
        var byInstance: [String: Int] = [:]
        var sourceRoute: [Int: Set<String>] = [:]
        /// Answers nginx got from a second instance after the first attempt failed.
        var retried = 0
        func record(source: Int, answer: Answer?) {
            completed += 1
            if answer?.header("X-Magpie-Upstream")?.contains(", ") == true { retried += 1 }
            guard let answer, answer.status == 200, let upstream = answer.upstream else {
                failed += 1
                return
            }
            byInstance[upstream, default: 0] += 1
            sourceRoute[source, default: []].insert(upstream)
        }
    }

    /// `total` requests through nginx from `clients` concurrent loops, each a new variant (nginx cache misses, so
    /// every one reaches an instance) of one of `sourceCount` sources. `onProgress` sees the completed count.
    static func load(
        _ cluster: Cluster, total: Int, clients: Int, sourceCount: Int, offset: Int, counts: LoadCounts
    ) async {
        await withTaskGroup(of: Void.self) { group in
            for client in 0..<clients {
                group.addTask {
                    var request = client
                    while request < total {
                        let n = offset + request
                        let source = n % sourceCount
                        let path = cluster.imagePath(
                            "s\(source).png", options: ["resize:\(8 + n % 50)x\(8 + n / 50):fill"], extension: "png")
                        await counts.record(source: source, answer: try? await cluster.get(path))
                        request += clients
                    }
                }
            }
        }
    }

    @Test func killingAnInstanceLosesAtMostItsRequestsInFlightAndItsRestartTakesBackItsShare() async throws {
        try await Cluster.with(instances: 3) { cluster in
            let sourceCount = 12, clients = 4
            // Before: which instance holds which source.
            let before = LoadCounts()
            await Self.load(cluster, total: 48, clients: clients, sourceCount: sourceCount, offset: 0, counts: before)
            #expect(await before.failed == 0)
            let routes = await before.sourceRoute
            #expect(routes.values.allSatisfy { $0.count == 1 }, "one instance per source: \(routes)")
            let status = try await cluster.status()
            // The victim: the instance holding source 0, so it surely has a share.
            let victimAddress = try #require(routes[0]?.first)
            let victim = try #require(status.instances.first(where: { $0.url == "http://" + victimAddress }))

            // During: a steady loop of `clients` requests at a time; the victim is killed once it is under way.
            let during = LoadCounts()
            async let loop: Void = Self.load(cluster, total: 240, clients: clients, sourceCount: sourceCount, offset: 1000, counts: during)
            while await during.completed < 60 { try await Task.sleep(for: .milliseconds(5)) }
            kill(victim.pid, SIGKILL)
            await loop
            let failed = await during.failed, completed = await during.completed
            let servedAfter = await during.byInstance, retried = await during.retried
            print(
                "failover: \(completed) requests under load, \(failed) failed, \(retried) answered by a second instance "
                    + "after the first attempt failed, \(clients) in flight at most; answered by \(servedAfter)")
            // nginx met the dead instance and routed around it (the victim holds source 0, asked every 12 requests).
            #expect(retried >= 1)
            // Nothing can be lost but what was on the wire to the victim, and no more than `clients` ever are.
            #expect(failed <= clients)
            #expect(completed == 240)
            let survivors = try await cluster.status().instances.filter { $0.pid != victim.pid && $0.healthy }
            #expect(survivors.count == 2)

            // After: `scale` restarts the dead instance on its port, so it takes back exactly its sources.
            try await cluster.scale(to: 3)
            let restarted = try #require(try await cluster.status().instances.first(where: { $0.index == victim.index }))
            #expect(restarted.healthy && restarted.pid != victim.pid && restarted.port == victim.port)
            let after = LoadCounts()
            await Self.load(cluster, total: 48, clients: clients, sourceCount: sourceCount, offset: 5000, counts: after)
            #expect(await after.failed == 0)
            let routesAfter = await after.sourceRoute
            #expect(routesAfter == routes, "every source back on its instance")
            let share = await after.byInstance[victimAddress, default: 0]
            print("failover: after the restart the instance answered \(share) of 48 requests (\(routes.filter { $0.value == [victimAddress] }.count) of \(sourceCount) sources)")
            #expect(share > 0)
        }
    }

    // MARK: - Rebalancing

    @Test func goingFromThreeToFourInstancesMovesAboutAQuarterOfSourcesAllToTheNewOneAndKeepsCachedResults() async throws {
        try await Cluster.with(instances: 3) { cluster in
            let count = 1200
            // Sources that do not exist: the badly signed request never reaches the origin, only the routing matters.
            let sources = (0..<count).map { "http%3A%2F%2F127.0.0.1%3A9%2Fimg%2Fphoto-\($0).jpg" }
            func routes() async throws -> [String] {
                try await withThrowingTaskGroup(of: (Int, String).self, returning: [String].self) { group in
                    var result = [String](repeating: "", count: count)
                    var next = 0
                    func add() {
                        let index = next
                        next += 1
                        group.addTask {
                            let answer = try await cluster.get(cluster.badlySignedPath(source: sources[index]))
                            #expect(answer.status == 403)
                            return (index, answer.upstream ?? "")
                        }
                    }
                    for _ in 0..<16 { add() }
                    while let (index, upstream) = try await group.next() {
                        result[index] = upstream
                        if next < count { add() }
                    }
                    return result
                }
            }
            // Results nginx holds before the change.
            let held = (0..<5).map { cluster.imagePath("s\($0).png", options: ["resize:16x16:fit"], extension: "webp") }
            for path in held { #expect(try await cluster.get(path).header("X-Cache-Status") == "MISS") }

            let before = try await routes()
            try await cluster.scale(to: 4)
            let newInstance = try #require(try await cluster.status().instances.first(where: { $0.index == 4 }))
            let after = try await routes()

            #expect(!before.contains("") && !after.contains(""))
            let moved = (0..<count).filter { before[$0] != after[$0] }
            let share = Double(moved.count) / Double(count)
            print("rebalancing 3 -> 4: \(moved.count) of \(count) sources moved (\(String(format: "%.3f", share)); ideal 0.25)")
            #expect(share > 0.15 && share < 0.35)
            // Consistent hashing: a source moves only to the new instance, never between old ones.
            #expect(moved.allSatisfy { after[$0] == "127.0.0.1:\(newInstance.port)" })
            // nginx's cache is keyed on the path, not the instance: what it held is still served.
            for path in held {
                let answer = try await cluster.get(path)
                #expect(answer.status == 200 && answer.header("X-Cache-Status") == "HIT")
            }
        }
    }

    // MARK: - Same bytes everywhere

    @Test func aResultIsByteIdenticalWhicheverInstanceMakesIt() async throws {
        try await Cluster.with(instances: 2) { cluster in
            let instances = try await cluster.status().instances.map(\.url)
            let requests: [(path: String, accept: String?)] = [
                (cluster.imagePath("s1.png", options: ["resize:24x18:fill"], extension: "png"), nil),
                (cluster.imagePath("s1.png", options: ["resize:24x18:fill", "quality:70"], extension: "jpeg"), nil),
                (cluster.imagePath("s1.png", options: ["round:6"], extension: "webp"), nil),
                (cluster.imagePath("s1.png", options: ["resize:24x18:fill"]), "image/avif,image/webp,*/*"),
            ]
            for (path, accept) in requests {
                // Each instance asked directly, bypassing nginx: both make the result from the source themselves.
                let first = try await cluster.get(path, base: instances[0], accept: accept)
                let second = try await cluster.get(path, base: instances[1], accept: accept)
                let front = try await cluster.get(path, accept: accept)
                #expect(first.status == 200 && second.status == 200 && front.status == 200)
                #expect(first.header("X-Magpie-Cache") != "memory" && second.header("X-Magpie-Cache") != "memory")
                #expect(first.body == second.body, "\(path)")
                #expect(front.body == first.body, "\(path)")
                #expect(first.header("ETag") == second.header("ETag"))
            }
        }
    }

    // MARK: - Cache tier

    @Test func aRepeatedRequestIsServedByNginxPerAcceptTokenWithTheRightTypeAndVary() async throws {
        try await Cluster.with(instances: 3) { cluster in
            let auto = cluster.imagePath("s2.png", options: ["resize:30x20:fit"])
            // Two spellings per token: the second must hit what the first stored.
            let tokens: [(first: String?, second: String?, type: String)] = [
                ("image/avif,image/webp,image/apng,*/*;q=0.8", "image/avif,*/*", "image/avif"),
                ("image/webp,*/*", "image/webp;q=0.9, image/avif;q=0", "image/webp"),
                (nil, "text/html,*/*;q=0.8", "image/png"),
            ]
            for token in tokens {
                let miss = try await cluster.get(auto, accept: token.first)
                #expect(miss.status == 200 && miss.header("X-Cache-Status") == "MISS")
                #expect(miss.header("Content-Type") == token.type)
                #expect(miss.header("Vary") == "Accept")
                // The instance's own layer on a miss; nothing on a hit: nginx does not replay the stored header.
                #expect(miss.header("X-Magpie-Cache") == "none" || miss.header("X-Magpie-Cache") == "original")
                let counters = try await cluster.imageRequestsByInstance()
                let hit = try await cluster.get(auto, accept: token.second)
                #expect(hit.header("X-Cache-Status") == "HIT", "\(token.second ?? "no Accept")")
                #expect(hit.header("X-Magpie-Cache") == nil)
                #expect(hit.upstream == nil)
                #expect(hit.header("Content-Type") == token.type)
                #expect(hit.header("Vary") == "Accept")
                #expect(hit.body == miss.body)
                #expect(try await cluster.imageRequestsByInstance() == counters, "the hit never reached an instance")
            }
            // A fixed format is stored once, whatever the token.
            let fixed = cluster.imagePath("s2.png", options: ["resize:30x20:fit"], extension: "webp")
            let first = try await cluster.get(fixed, accept: "image/avif,image/webp,*/*")
            let other = try await cluster.get(fixed, accept: "*/*")
            #expect(first.header("X-Cache-Status") == "MISS" && other.header("X-Cache-Status") == "HIT")
            #expect(other.header("Content-Type") == "image/webp" && other.header("Vary") == nil)
            // The query is neither signed nor used by Magpie: it must not split nginx's cache either.
            let withQuery = try await cluster.get(fixed + "?bust=1", accept: "*/*")
            #expect(withQuery.header("X-Cache-Status") == "HIT")
            // Instance metrics are not public.
            #expect(try await cluster.get("/metrics").status == 404)
            #expect(try await cluster.status().nginxCacheBytes > 0)
        }
    }

    @Test func fiftyConcurrentMissesForOneKeySendOneRequestToTheInstances() async throws {
        try await Cluster.with(instances: 3) { cluster in
            let path = cluster.imagePath("s3.png", options: ["resize:40x30:fill"], extension: "png")
            let countersBefore = try await cluster.imageRequestsByInstance().values.reduce(0, +)
            // The origin holds its answer, so the first request is still in flight while the others arrive.
            cluster.origin.hold("s3.png")
            let answers = try await withThrowingTaskGroup(of: Answer.self, returning: [Answer].self) { group in
                for _ in 0..<50 { group.addTask { try await cluster.get(path) } }
                while cluster.origin.requestCount(path: "/img/s3.png") == 0 { try await Task.sleep(for: .milliseconds(10)) }
                // Give the other 49 time to reach nginx and queue on the lock (any that come later are plain hits).
                try await Task.sleep(for: .milliseconds(500))
                cluster.origin.release("s3.png")
                return try await group.reduce(into: [Answer]()) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0.status == 200 })
            #expect(Set(answers.map(\.body)).count == 1)
            let statuses = Dictionary(grouping: answers, by: { $0.header("X-Cache-Status") ?? "-" }).mapValues(\.count)
            print("cache lock: 50 concurrent requests, nginx cache statuses \(statuses)")
            let countersAfter = try await cluster.imageRequestsByInstance().values.reduce(0, +)
            #expect(countersAfter - countersBefore == 1, "one request reached an instance")
            #expect(cluster.origin.requestCount(path: "/img/s3.png") == 1)
        }
    }
}
