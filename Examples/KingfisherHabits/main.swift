import Foundation
import Magpie

let url = URL(string: CommandLine.arguments.dropFirst().first ?? "https://example.com/photo.jpg")!
let cache = ImageCache(name: "thumbs", cacheDirectoryURL: nil)  // its own folder, named once
cache.memoryStorage?.config.totalCostLimit = 64 << 20  // limits change on a live cache
cache.diskStorage?.config.sizeLimit = 500 << 20  // (diskStorage is nil when the folder is unusable)
let manager = ImageManager(downloader: .default, cache: cache)
let modifier = AnyModifier { request in
    var request = request
    request.setValue("Bearer token", forHTTPHeaderField: "Authorization")
    return request
}
let task = manager.retrieveImage(with: url, options: [.requestModifier(modifier)], progressBlock: { received, total in
    print("\(received) of \(total) bytes")
}) { result in
    switch result {
    case .success(let value): print(value.image.mg.jpegRepresentation(compressionQuality: 0.8)?.count ?? 0)
    case .failure(let error): print(error.statusCode ?? 0, error)  // the status of a remembered failure too
    }
}
await task.wait()
cache.retrieveImage(forKey: url.absoluteString) { result in print(result) }
print(try await cache.calculateDiskStorageSize())
await manager.shutdown()
