import ArgumentParser
import Foundation
import Magpie

/// `--cache-dir`: where the named caches live. Only the commands that use a cache take it, so that
/// `info`, `convert` and `sample` do not offer an option that would do nothing.
struct CacheFolderOptions: ParsableArguments {
    @Option(name: .customLong("cache-dir"), help: "Parent folder of the caches (default $XDG_CACHE_HOME/magpie, else ~/.cache/magpie).")
    var cacheDirectory: String?

    /// The folder that holds the named caches.
    var cacheRoot: URL {
        cacheDirectory.map { URL(fileURLWithPath: $0) } ?? DiskStorage.Config.defaultDirectory
    }

    /// The cache `name` below `cacheRoot` (memory-only, with `diskError` set, when the folder cannot be used), holding
    /// at most `memoryLimit` bytes of decoded images in memory (the library's default when nil: a quarter of the memory, at most 512 MiB)
    /// and at most `sizeLimit` bytes on disk (the library's default when nil, none for 0).
    func openCache(named name: String, memoryLimit: Int? = nil, sizeLimit: ByteCount? = nil) -> ImageCache {
        let memory = memoryLimit.map { MemoryStorage.Config(totalCostLimit: $0) } ?? MemoryStorage.Config()
        var disk = DiskStorage.Config(name: name, directory: cacheRoot)
        if let sizeLimit { disk.sizeLimit = sizeLimit.bytes }
        return ImageCache(name: name, memoryConfig: memory, diskConfig: disk)
    }

    /// Whether a cache named `name` exists below `cacheRoot`: its folder holds the index DiskStorage keeps there.
    /// Checked before opening one, which would create it.
    func cacheExists(named name: String) -> Bool {
        FileManager.default.fileExists(atPath: cacheRoot.appendingPathComponent(name).appendingPathComponent("index.sqlite").path)
    }
}
