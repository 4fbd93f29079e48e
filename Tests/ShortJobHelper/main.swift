// magpie-short-job: a process that retrieves one image and exits at once, as a cron job or a script would.
//
//   magpie-short-job URL CACHE_DIR [--no-shutdown]
//
// Prints where the image came from (none, memory, disk). With --no-shutdown it exits without waiting for the
// background disk write, which is how a write gets lost.
import Foundation
import Magpie

let arguments = CommandLine.arguments
guard arguments.count >= 3, let url = URL(string: arguments[1]) else {
    FileHandle.standardError.write(Data("usage: magpie-short-job URL CACHE_DIR [--no-shutdown]\n".utf8))
    exit(2)
}
let cache = ImageCache(name: "short-job", cacheDirectoryURL: URL(fileURLWithPath: arguments[2]))
let manager = ImageManager(downloader: ImageDownloader(name: "short-job"), cache: cache)
do {
    let result = try await manager.retrieveImage(with: url, options: [.processor(BlurImageProcessor(blurRadius: 2))])
    print(result.cacheType)
} catch {
    print("error: \(error)")
    exit(1)
}
if !arguments.contains("--no-shutdown") { await manager.shutdown() }
exit(0)
