import Foundation
import Magpie
import MagpieOrigin

/// One image the demo's origin serves.
struct DemoSample: Sendable {
    /// The asset name, also the file name of its thumbnail.
    let name: String
    /// What it is, for the report.
    let kind: String
    /// The origin path it is fetched from (the slow one streams in pieces).
    let path: String
    /// The bytes and headers.
    let asset: OriginAsset
    /// True for the deliberately broken file: its failure is the expected outcome.
    var isCorrupt = false
}

/// The demo's images, generated here: photos in three formats and sizes, a translucent badge, one
/// animation as GIF, APNG and WebP, a photo served slowly, a truncated JPEG, and a poster used for
/// the burst of identical requests.
enum DemoSamples {
    /// The slow route's pacing: 16 kB every 80 ms (about a second for the slow photo).
    static let slowQuery = "?chunk=16384&delay=80"
    /// Paced so the burst's callers all arrive while the one download runs (about 200 ms), however loaded the machine.
    static let pacedQuery = "?chunk=65536&delay=50"

    static func make() throws -> [DemoSample] {
        let registry = ImageCoderRegistry.shared
        let photo = try SampleImages.photo(width: 1600, height: 1200)
        let animation = try SampleImages.animation(size: 96, frames: 8)
        func sample(_ name: String, _ kind: String, _ data: Data, path: String? = nil, corrupt: Bool = false) -> DemoSample {
            let format = ImageFormat(sniffing: data)
            let type = format == .unknown ? "image/jpeg" : format.mimeType
            return DemoSample(
                name: name, kind: kind, path: path ?? "/img/\(name)", asset: OriginAsset(bytes: data, contentType: type),
                isCorrupt: corrupt)
        }
        let jpeg = try registry.encode(photo, as: .jpeg, options: .init(quality: 88))
        return [
            sample("photo.jpg", "JPEG 1600x1200", jpeg),
            sample("photo.webp", "WebP 1600x1200, lossy", try registry.encode(photo, as: .webp, options: .init(quality: 80))),
            sample(
                "wide.jpg", "JPEG 2400x800, progressive",
                try registry.encode(try SampleImages.photo(width: 2400, height: 800, variant: 1), as: .jpeg,
                                    options: .init(quality: 85, progressive: true)),
                path: "/slow/wide.jpg" + pacedQuery),
            sample("portrait.png", "PNG 600x900", try registry.encode(try SampleImages.photo(width: 600, height: 900, variant: 2), as: .png)),
            sample("badge.png", "PNG 256x256, translucent", try registry.encode(try SampleImages.badge(size: 256), as: .png)),
            sample("spinner.gif", "GIF 96x96, 8 frames", try registry.encode(animation, as: .gif)),
            sample("spinner.png", "APNG 96x96, 8 frames", try registry.encode(animation, as: .png)),
            sample("spinner.webp", "WebP 96x96, 8 frames", try registry.encode(animation, as: .webp, options: .init(lossless: true))),
            sample(
                "slow.jpg", "JPEG 1200x900, served slowly",
                try registry.encode(try SampleImages.photo(width: 1200, height: 900, variant: 3), as: .jpeg, options: .init(quality: 92)),
                path: "/slow/slow.jpg" + slowQuery),
            sample("corrupt.jpg", "JPEG cut in half (corrupt)", jpeg.prefix(jpeg.count / 2), corrupt: true),
            sample(
                "poster.jpg", "JPEG 1024x1536",
                try registry.encode(try SampleImages.photo(width: 1024, height: 1536, variant: 4), as: .jpeg, options: .init(quality: 85)),
                path: "/slow/poster.jpg" + pacedQuery),
        ]
    }

    /// The badge in another colour under the same name: the origin's "changed upstream" version.
    static func changedBadge() throws -> OriginAsset {
        OriginAsset(bytes: try ImageCoderRegistry.shared.encode(try SampleImages.badge(size: 256, red: 60), as: .png), contentType: "image/png")
    }
}
