#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DiskStorage {
    /// How a disk cache is set up.
    public struct Config: Sendable {
        /// The cache's name: its folder below `directory`. Fixed when the storage opens.
        public let name: String
        /// The parent folder; default `$XDG_CACHE_HOME/magpie` (or `~/.cache/magpie`). Fixed when the storage opens.
        public let directory: URL
        /// Most bytes of payload kept; 0 means unlimited. Default ``defaultSizeLimit(forFolder:)``: 10 % of the
        /// file system that holds the cache, at most 1 GiB. Exceeding it on a write evicts least-recently-used
        /// entries (expired first) down to half the limit.
        public var sizeLimit: Int
        /// Default lifetime of an entry. Default 7 days.
        public var expiration: StorageExpiration
        /// What a read does to the expiry date. Default ``ExpirationExtending/cacheTime``: restart the original
        /// expiration.
        public var accessExtending: ExpirationExtending
        /// Seconds between sweeps (expired entries removed, then the size limit enforced); zero or less: none.
        /// Default 3600. Sweeps are driven by use: one at open when the last one (by any process) is older than
        /// this, then one when a read or write comes after the interval, in the background; an idle cache costs
        /// nothing.
        public var sweepInterval: TimeInterval
        /// Keep the key's path extension on file names (`<sha256>.jpg`) so files are browsable. Default false.
        /// Fixed when the storage opens.
        public let keepsPathExtension: Bool
        /// Further cache folders searched on a miss and never written (for example one shipped with the
        /// application). Each is a cache's own folder, as ``DiskStorage/directoryURL``. Default none. Fixed when
        /// the storage opens.
        public let readOnlyDirectories: [URL]
        /// fsync each entry before it becomes visible: survives power loss, not only a killed process.
        /// Slower writes; default false. Fixed when the storage opens.
        public let syncsToDisk: Bool
        /// The source of "now" (injectable for tests). Default ``CacheClock/system``.
        public var clock: CacheClock
        /// Where the ``DataCaching`` methods run their SQLite and file I/O. Default ``BoundedExecutor/io``. Fixed
        /// when the storage opens.
        public let ioExecutor: BoundedExecutor

        /// A configuration with the defaults above.
        ///
        /// - Parameters:
        ///   - name: The cache's folder name below `directory`.
        ///   - directory: The parent folder; nil (the default) for ``defaultDirectory``.
        ///   - sizeLimit: Most payload bytes, 0 for no limit; nil (the default) for ``defaultSizeLimit(forFolder:)``
        ///     of `directory`.
        ///   - expiration: Default lifetime of an entry (7 days).
        ///   - sweepInterval: Seconds between use-driven sweeps (3600; 0 or less: none).
        ///   - accessExtending: What a read does to the expiry.
        ///   - keepsPathExtension: Keep the key's extension on file names.
        ///   - readOnlyDirectories: Cache folders searched on a miss, never written.
        ///   - syncsToDisk: fsync every entry.
        ///   - clock: The source of "now".
        ///   - ioExecutor: Where the async (``DataCaching``) methods run their blocking work.
        public init(
            name: String,
            directory: URL? = nil,
            sizeLimit: Int? = nil,
            expiration: StorageExpiration = .days(7),
            sweepInterval: TimeInterval = 3600,
            accessExtending: ExpirationExtending = .cacheTime,
            keepsPathExtension: Bool = false,
            readOnlyDirectories: [URL] = [],
            syncsToDisk: Bool = false,
            clock: CacheClock = .system,
            ioExecutor: BoundedExecutor = .io
        ) {
            self.name = name
            let directory = directory ?? Self.defaultDirectory
            self.directory = directory
            self.sizeLimit = sizeLimit ?? Self.defaultSizeLimit(forFolder: directory)
            self.expiration = expiration
            self.sweepInterval = sweepInterval
            self.accessExtending = accessExtending
            self.keepsPathExtension = keepsPathExtension
            self.readOnlyDirectories = readOnlyDirectories
            self.syncsToDisk = syncsToDisk
            self.clock = clock
            self.ioExecutor = ioExecutor
        }

        /// The default size limit of a cache in `folder`: 10 % of the file system that holds it (the nearest
        /// existing ancestor is measured when the folder does not exist yet), at most 1 GiB, at least 16 MiB.
        ///
        /// - Parameter folder: The cache's parent folder.
        /// - Returns: The limit in bytes.
        public static func defaultSizeLimit(forFolder folder: URL) -> Int {
            let cap = 1 << 30, floor = 16 << 20
            guard let capacity = LocalFileSystem.fileSystemCapacity(containing: folder.path) else { return cap }
            return min(cap, max(floor, capacity / 10))
        }

        /// Copies the settings that may change on a live storage from `other`.
        mutating func adoptAdjustableSettings(of other: Config) {
            sizeLimit = other.sizeLimit
            expiration = other.expiration
            accessExtending = other.accessExtending
            sweepInterval = other.sweepInterval
            clock = other.clock
        }

        /// `$XDG_CACHE_HOME/magpie`, else `$HOME/.cache/magpie`, else `/tmp/magpie` (empty variables are ignored).
        public static var defaultDirectory: URL {
            let environment = ProcessInfo.processInfo.environment
            if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty {
                return URL(fileURLWithPath: xdg).appendingPathComponent("magpie")
            }
            if let home = environment["HOME"], !home.isEmpty {
                return URL(fileURLWithPath: home).appendingPathComponent(".cache/magpie")
            }
            return URL(fileURLWithPath: "/tmp/magpie")
        }
    }

    /// The HTTP validators kept with an entry (``HTTPValidators``; the name wave 1 used).
    public typealias Validators = HTTPValidators

    /// What the index knows about one entry.
    public struct EntryMetadata: Sendable, Equatable {
        /// The key it was stored under.
        public var key: String
        /// Its file name (SHA-256 of the key in hex, plus the extension when kept).
        public var fileName: String
        /// Payload size in bytes.
        public var size: Int
        /// When it was stored or last revalidated (a `304` restarts its age).
        public var created: Date
        /// When it was last read or stored.
        public var lastAccess: Date
        /// When it expires (`Date.distantFuture` for entries that never do).
        public var expiration: Date
        /// CRC-32 of the payload, checked on every read.
        public var checksum: UInt32
        /// HTTP validators stored with it.
        public var validators: Validators
        /// Seconds a `.cacheTime` read extends the entry by (nil for `.never` and fixed dates).
        var lifetime: TimeInterval?

        /// True when ``expiration`` is not after `now`.
        ///
        /// - Parameter now: The time to compare with.
        public func isExpired(at now: Date) -> Bool { expiration <= now }

        /// What the data cache port tells about the entry (no file name or checksum: those are this backend's).
        public var dataCacheMetadata: DataCacheMetadata {
            DataCacheMetadata(
                key: key, size: size, created: created, lastAccess: lastAccess, expiration: expiration, validators: validators)
        }
    }

    /// Something that happened to the cache, published on ``DiskStorage/events()``.
    public enum Event: Sendable, Equatable {
        /// An entry was written: its key and payload size in bytes.
        case stored(key: String, size: Int)
        /// An entry was removed by ``DiskStorage/remove(forKey:)``.
        case removed(key: String)
        /// Entries were removed by ``DiskStorage/removeExpired()`` or ``DiskStorage/removeAll()``; their file names.
        case cleaned(fileNames: [String])
        /// Entries were evicted to respect the size limit; their file names.
        case evicted(fileNames: [String])
    }
}

/// A read's effect on an entry, waiting to be written to the index.
struct Touch: Sendable {
    var accessed: Date
    var expires: Date
    var checksum: UInt32
}

/// Pending `Touch`es and when they were last written.
struct TouchLog: Sendable {
    /// Flush after this many distinct entries were read...
    static let batchSize = 256
    /// ...or when the oldest unwritten read is this old.
    static let maximumDelay = Duration.seconds(1)

    var entries: [String: Touch] = [:]
    var lastFlush = ContinuousClock.now
}
