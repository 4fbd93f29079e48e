import Foundation
import Magpie

let url = URL(string: CommandLine.arguments.dropFirst().first ?? "https://example.com/photo.jpg")!
let thumbnail = ResizingImageProcessor(referenceSize: PixelSize(width: 256, height: 256), mode: .aspectFit)
    |> RoundCornerImageProcessor(cornerRadius: 16)
let manager = ImageManager.shared  // memory → disk ($XDG_CACHE_HOME/magpie/default) → network
let result = try await manager.retrieveImage(with: url, options: [.processor(thumbnail)])
print(result.image.width, result.image.height, result.cacheType)  // e.g. "256 171 none"; run again: "… disk"
try result.image.mg.pngRepresentation()?.write(to: URL(fileURLWithPath: "thumbnail.png"))

// Kingfisher's shapes work as written: a trailing closure is always the completion handler.
let task = manager.retrieveImage(with: url, options: [.processor(thumbnail)]) { result in
    if case .success(let value) = result { print(value.cacheType) }  // "memory"
}
await task.wait()
await manager.shutdown()  // wait for the disk writes before the process exits
