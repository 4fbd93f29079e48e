// swift-tools-version: 6.1
import Foundation
import PackageDescription

// ThreadSanitizer cannot see Synchronization.Mutex on Linux, so `scripts/sanitize thread` sets MAGPIE_TSAN_LOCKS=1 and
// MagpieCore swaps in a pthread-based lock TSan does see (Sources/MagpieCore/General/SanitizerMutex.swift), and the
// modules built with `sanitizerLocks` use it.
let sanitizerLocks: [SwiftSetting] =
    ProcessInfo.processInfo.environment["MAGPIE_TSAN_LOCKS"] == "1" ? [.define("MAGPIE_TSAN_LOCKS")] : []

// A product of a package dependency that only one trait brings in (see `traits` below).
func networking(_ product: String, _ package: String) -> Target.Dependency {
    .product(name: product, package: package, condition: .when(traits: ["Networking"]))
}
func server(_ product: String, _ package: String) -> Target.Dependency {
    .product(name: product, package: package, condition: .when(traits: ["Server"]))
}
func commandLine(_ product: String, _ package: String) -> Target.Dependency {
    .product(name: product, package: package, condition: .when(traits: ["CLI"]))
}

let package = Package(
    name: "Magpie",
    platforms: [.macOS(.v15)],
    products: [
        // The networking-free core: image model, codecs, processing, memory/disk caches and the ports.
        .library(name: "MagpieCore", targets: ["MagpieCore"]),
        // Everything: MagpieCore plus HTTP loading, the pipeline, the prefetcher and view binding.
        .library(name: "Magpie", targets: ["Magpie"]),
        // The image server (imgproxy-style signed URLs) as routes a Hummingbird application mounts; `magpie serve` runs it.
        .library(name: "MagpieServer", targets: ["MagpieServer"]),
        // The face detector plugin (OpenCV's cascade classifier), a shared library the codec layer opens on first use:
        // Sources/CImageCodecs/faces.c says why it is not linked. `swift build` puts it beside `magpie`.
        .library(name: "MagpieFaceDetection", type: .dynamic, targets: ["CFaceDetection"]),
        // No `.executable` product: a root package gets one per executable target anyway (`swift run magpie`
        // works here), and a library user has no use for it.
    ],
    // Traits keep a library user's build small: SwiftPM resolves, fetches and builds a package dependency only when
    // some target's use of it is enabled. A client of MagpieCore (`traits: []`) gets swift-collections, -log and
    // -metrics; one of Magpie (the default) adds AsyncHTTPClient and NIO; only `Server` brings Hummingbird and
    // swift-crypto (HMAC signatures), and only `CLI` ArgumentParser. This repository builds everything: `swift build --enable-all-traits`.
    traits: [
        .trait(name: "Networking", description: "The Magpie product: HTTP loading over AsyncHTTPClient and NIO, the pipeline, prefetcher and binding."),
        .trait(name: "Server", description: "The MagpieServer product and the test origin: Hummingbird, ServiceLifecycle, Prometheus.", enabledTraits: ["Networking"]),
        .trait(name: "CLI", description: "The magpie executable: ArgumentParser and swift-configuration.", enabledTraits: ["Server"]),
        .default(enabledTraits: ["Networking"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.3.0"),
    ],
    targets: [
        // The only C in the project: thin wrappers that turn the codec libraries'
        // setjmp/longjmp and callback errors into return codes Swift can handle.
        .target(
            name: "CImageCodecs",
            linkerSettings: [
                .linkedLibrary("jpeg"),
                .linkedLibrary("png16"),
                .linkedLibrary("gif"),
                .linkedLibrary("webp"),
                .linkedLibrary("webpdemux"),
                .linkedLibrary("webpmux"),
                .linkedLibrary("z"),
                .linkedLibrary("lcms2"),
                // libavif, libheif, libjxl, libtiff and librsvg are opened on first use, not linked:
                // Sources/CImageCodecs/lazy_library.h says why.
            ]
        ),

        // OpenCV's face detector behind a C ABI (include/mg_face_plugin.h); only the plugin product links OpenCV.
        // Debian puts OpenCV's headers under opencv4/, a folder no package setting but a flag can name.
        .target(
            name: "CFaceDetection",
            cxxSettings: [.unsafeFlags(["-I/usr/include/opencv4"])],
            linkerSettings: [
                .linkedLibrary("opencv_objdetect"),
                .linkedLibrary("opencv_imgproc"),
                .linkedLibrary("opencv_core"),
            ]
        ),

        // The system SQLite, for DiskStorage's index (module map only, no C sources).
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // Imports FoundationEssentials, never full Foundation, NIO or AsyncHTTPClient: a process that only
        // decodes, processes and caches links this and stays small.
        .target(
            name: "MagpieCore",
            dependencies: [
                "CImageCodecs",
                "CSQLite",
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: sanitizerLocks
        ),
        .target(
            name: "Magpie",
            dependencies: [
                "MagpieCore",
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                networking("AsyncHTTPClient", "async-http-client"),
                networking("Tracing", "swift-distributed-tracing"),
                networking("NIOCore", "swift-nio"),
                networking("NIOHTTP1", "swift-nio"),
                networking("NIOPosix", "swift-nio"),
                networking("NIOSSL", "swift-nio-ssl"),
            ],
            swiftSettings: sanitizerLocks
        ),
        // A local image origin (Hummingbird on 127.0.0.1) that serves images and misbehaves on request:
        // used by the tests, the network benchmark and the CLI's demo.
        .target(
            name: "MagpieOrigin",
            dependencies: [
                // HTTPDate: one HTTP-date parser for the pipeline and the origin's If-Modified-Since.
                "MagpieCore",
                server("Hummingbird", "hummingbird"),
                server("HummingbirdCore", "hummingbird"),
                server("HummingbirdTLS", "hummingbird"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                networking("NIOCore", "swift-nio"),
                networking("NIOSSL", "swift-nio-ssl"),
            ]
        ),
        // The image server: URL API and signatures, source policy, load shedding, result caching, metrics.
        .target(
            name: "MagpieServer",
            dependencies: [
                "Magpie",
                server("Hummingbird", "hummingbird"),
                server("HummingbirdCore", "hummingbird"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
                server("Crypto", "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                server("Prometheus", "swift-prometheus"),
                server("HTTPTypes", "swift-http-types"),
                networking("NIOCore", "swift-nio"),
                networking("NIOHTTP1", "swift-nio"),
                server("NIOHTTPTypes", "swift-nio-extras"),
            ],
            swiftSettings: sanitizerLocks
        ),
        // The `magpie` executable allocates with jemalloc (Debian's libjemalloc2) instead of glibc's malloc: under
        // `magpie serve`'s mixed load glibc's per-thread arenas kept growing for minutes (RSS +8 to +17 % between the
        // first and the tenth minute, free space malloc_trim cannot return), jemalloc's stays flat. Its settings, and
        // why: Sources/CMagpieAllocator/allocator.c. The library products keep whatever allocator their host uses.
        .target(name: "CMagpieAllocator", linkerSettings: [.linkedLibrary("jemalloc")]),
        // How the process's allocator returns memory (glibc's mmap threshold, malloc_trim). Not in a library product:
        // a library must not tune its host's allocator, so only executables link it (`magpie serve` hands
        // `releaseFreeMemory` to ImageServerService's hook). No CMagpieAllocator: magpie-allocator-check checks glibc.
        .target(name: "MagpieAllocatorPolicy"),
        .executableTarget(
            name: "magpie",
            dependencies: [
                "CMagpieAllocator",
                "Magpie",
                "MagpieAllocatorPolicy",
                "MagpieOrigin",
                "MagpieServer",
                commandLine("Configuration", "swift-configuration"),
                commandLine("ArgumentParser", "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                // `serve` bootstraps MetricsSystem, so the library's counters reach /metrics (LibraryMetrics.swift).
                .product(name: "Metrics", package: "swift-metrics"),
                server("Prometheus", "swift-prometheus"),
            ],
            swiftSettings: sanitizerLocks
        ),
        // The README's quick start, compiled as written (ReadmeQuickStartTests checks the README still shows it).
        .executableTarget(name: "magpie-quickstart", dependencies: ["Magpie"], path: "Examples/QuickStart"),
        .executableTarget(name: "magpie-kingfisher-habits", dependencies: ["Magpie"], path: "Examples/KingfisherHabits"),
        // What the benchmarks share: the rows they write for scripts/bench's chart and targets table.
        .target(name: "MagpieBenchSupport", path: "Benchmarks/Support"),
        .executableTarget(
            name: "magpie-bench",
            dependencies: ["MagpieBenchSupport", "Magpie"],
            path: "Benchmarks/MagpieBenchmarks",
            exclude: ["pillow_codec.py"]
        ),
        .executableTarget(
            name: "magpie-proc-bench",
            dependencies: ["MagpieBenchSupport", "Magpie"],
            path: "Benchmarks/ProcessingBenchmarks",
            exclude: ["pillow_processing.py"]
        ),
        .executableTarget(
            name: "magpie-bench-worker",
            dependencies: ["MagpieCore", "CImageCodecs"],
            path: "Benchmarks/BenchmarkWorker"
        ),
        // The wave-2 formats and colour rows (scripts/bench --formats-only): no Magpie module of its own, its Magpie
        // cells run in magpie-bench-worker through the generic coder API.
        .executableTarget(
            name: "magpie-format-bench",
            dependencies: ["MagpieBenchSupport"],
            path: "Benchmarks/FormatBenchmarks",
            exclude: ["pillow_formats.py"]
        ),
        .executableTarget(
            name: "magpie-cache-bench",
            dependencies: ["MagpieBenchSupport", "Magpie"],
            path: "Benchmarks/CacheBenchmarks"
        ),
        .executableTarget(
            name: "magpie-net-bench",
            dependencies: ["MagpieBenchSupport", "Magpie", "MagpieOrigin"],
            path: "Benchmarks/NetworkBenchmarks"
        ),
        // The HTTP caching rows (scripts/bench --http-only): spooled bodies' memory, resumed bytes, stale-while-revalidate.
        .executableTarget(
            name: "magpie-http-bench",
            dependencies: ["MagpieBenchSupport", "Magpie", "MagpieOrigin"],
            path: "Benchmarks/HTTPBenchmarks"
        ),
        // The HTTP stack's own cost of a cached answer (scripts/bench-cached-floor): one file from memory over NIO's
        // HTTP/1 pipeline alone and over Hummingbird's router, beside `magpie serve` and nginx.
        .executableTarget(
            name: "magpie-http-floor",
            dependencies: [
                server("Hummingbird", "hummingbird"),
                server("HTTPTypes", "swift-http-types"),
                networking("NIOCore", "swift-nio"),
                networking("NIOHTTP1", "swift-nio"),
                networking("NIOPosix", "swift-nio"),
            ],
            path: "Benchmarks/HTTPFloor"
        ),
        // The hostile-input soak: runs the built `magpie` against MagpieOrigin's misbehaving routes (scripts/soak).
        .executableTarget(
            name: "magpie-soak",
            dependencies: ["MagpieBenchSupport", "Magpie", "MagpieOrigin"],
            path: "Benchmarks/Soak"
        ),
        // Child process for DiskStorage's crash (SIGKILL) and two-process tests.
        .executableTarget(
            name: "magpie-cache-stress",
            dependencies: ["Magpie"],
            path: "Tests/CacheStressHelper"
        ),
        // Child process that retrieves one image and exits at once (ServerDefaultsTests: no lost writes).
        .executableTarget(name: "magpie-short-job", dependencies: ["Magpie"], path: "Tests/ShortJobHelper"),
        // Child process for AllocatorPolicyTests: the policy checked in a heap no other test has used.
        .executableTarget(name: "magpie-allocator-check", dependencies: ["MagpieAllocatorPolicy"], path: "Tests/AllocatorCheckHelper"),
        // Child process for LazyCodecLibraryTests: which codec libraries a fresh process has mapped, step by step.
        .executableTarget(name: "magpie-library-check", dependencies: ["MagpieCore"], path: "Tests/LibraryCheckHelper"),
        .testTarget(
            name: "MagpieTests",
            dependencies: [
                "Magpie",
                "MagpieCore",
                // The JPEG 1/8 decoder is compared with libjpeg's own output through the C entry point.
                "CImageCodecs",
                "MagpieServer",
                // ServerFixture runs ImageServerService with AllocatorPolicy's release as `magpie serve` does.
                "MagpieAllocatorPolicy",
                // The CLI's own value parsers (ByteCount) are unit-tested; the commands run as a subprocess.
                "magpie",
                server("Crypto", "swift-crypto"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                "MagpieOrigin",
                networking("AsyncHTTPClient", "async-http-client"),
                networking("NIOCore", "swift-nio"),
                networking("NIOHTTP1", "swift-nio"),
                networking("NIOPosix", "swift-nio"),
                networking("NIOSSL", "swift-nio-ssl"),
            ],
            swiftSettings: sanitizerLocks
        ),
    ],
    swiftLanguageModes: [.v6]
)
