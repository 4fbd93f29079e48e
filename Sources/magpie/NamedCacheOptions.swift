import ArgumentParser
import Magpie

/// `--cache-dir`, `--name` and `--size-limit`: the named cache that `fetch` and `prefetch` fill. One group so that
/// both commands offer the same flags with the same help, in the same place.
struct NamedCacheOptions: ParsableArguments {
    @OptionGroup var cacheFolder: CacheFolderOptions

    @Option(help: "The cache's name (its folder below --cache-dir).")
    var name = "default"

    @Option(name: .customLong("size-limit"), parsing: .unconditional, help: ArgumentHelp(
        "The disk cache's size limit for this run, e.g. 500MB, 2GiB, 1048576 (bytes); 0 for none (the default).",
        valueName: "size"))
    var sizeLimit: ByteCount?

    /// The cache ``name`` with ``sizeLimit``, holding at most `memoryLimit` bytes of decoded images in memory (the
    /// library's default when nil); memory-only with `diskError` set when its folder cannot be used.
    func openCache(memoryLimit: Int? = nil) -> ImageCache {
        cacheFolder.openCache(named: name, memoryLimit: memoryLimit, sizeLimit: sizeLimit)
    }
}
