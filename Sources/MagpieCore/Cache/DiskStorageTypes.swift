#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DiskStorage {
    /// How a disk cache is set up.
    public struct Config: Sendable {
        /// The cache's name: its folder below `directory`.
        public var name: String
        /// The parent folder; default `$XDG_CACHE_HOME/magpie` (or `~/.cache/magpie`).
        public var directory: URL
        /// Most bytes of payload kept; 0 (the default) means unlimited. Exceeding it on a write evicts
        /// least-recently-used entries (expired first) down to half the limit.
        public var sizeLimit: Int
        /// Default lifetime of an entry. Default 7 days.
        public var expiration: StorageExpiration
        /// What a read does to the expiry date. Default ``ExpirationExtending/cacheTime``: restart the original
        /// expiration.
        public var accessExtending: ExpirationExtending
        /// Keep the key's path extension on file names (`<sha256>.jpg`) so files are browsable. Default false.
        public var keepsPathExtension: Bool
        /// Further cache folders searched on a miss and never written (for example one shipped with the
        /// application). Each is a cache's own folder, as ``DiskStorage/directoryURL``. Default none.
        public var readOnlyDirectories: [URL]
        /// fsync each entry before it becomes visible: survives power loss, not only a killed process.
        /// Slower writes; default false.
        public var syncsToDisk: Bool
        /// The source of "now" (injectable for tests). Default ``CacheClock/system``.
        public var clock: CacheClock
        /// Where the ``DataCaching`` methods run their SQLite and file I/O. Default ``BoundedExecutor/io``.
        public var ioExecutor: BoundedExecutor

        /// A configuration with the defaults above.
        ///
        /// - Parameters:
        ///   - name: The cache's folder name below `directory`.
        ///   - directory: The parent folder; nil (the default) for ``defaultDirectory``.
        ///   - sizeLimit: Most payload bytes, 0 for no limit.
        ///   - expiration: Default lifetime of an entry (7 days).
        ///   - accessExtending: What a read does to the expiry.
        ///   - keepsPathExtension: Keep the key's extension on file names.
        ///   - readOnlyDirectories: Cache folders searched on a miss, never written.
        ///   - syncsToDisk: fsync every entry.
        ///   - clock: The source of "now".
        ///   - ioExecutor: Where the async (``DataCaching``) methods run their blocking work.
        public init(
            name: String,
            directory: URL? = nil,
            sizeLimit: Int = 0,
            expiration: StorageExpiration = .days(7),
            accessExtending: ExpirationExtending = .cacheTime,
            keepsPathExtension: Bool = false,
            readOnlyDirectories: [URL] = [],
            syncsToDisk: Bool = false,
            clock: CacheClock = .system,
            ioExecutor: BoundedExecutor = .io
        ) {
            self.name = name
            self.directory = directory ?? Self.defaultDirectory
            self.sizeLimit = sizeLimit
            self.expiration = expiration
            self.accessExtending = accessExtending
            self.keepsPathExtension = keepsPathExtension
            self.readOnlyDirectories = readOnlyDirectories
            self.syncsToDisk = syncsToDisk
            self.clock = clock
            self.ioExecutor = ioExecutor
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
