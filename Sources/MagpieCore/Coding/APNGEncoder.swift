#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes an animated image as APNG: every frame full-canvas, dispose none, blend source.
struct APNGEncoder {
    var compressionLevel: Int

    func encode(_ image: Image) throws -> Data {
        let still = PNGCoder(compressionLevel: compressionLevel)
        let opaque = image.frames.allSatisfy { $0.pixels.isOpaque }
        var output = PNGChunks.signature
        var sequence: UInt32 = 0
        for (index, frame) in image.frames.enumerated() {
            let encoded = try still.encodeStill(frame.pixels, dropAlpha: opaque)
            let (chunks, _) = PNGChunks.read(encoded)
            if index == 0 {
                guard let ihdr = chunks.first(where: { $0.type == "IHDR" }) else {
                    throw MagpieError.encodingFailed(reason: .encoderFailed(.png, message: "libpng wrote no IHDR"))
                }
                PNGChunks.write("IHDR", ihdr.data, to: &output)
                var actl = Data()
                PNGChunks.appendUInt32(UInt32(image.frames.count), to: &actl)
                // A file without a loop count plays once; APNG expresses that as num_plays = 1.
                PNGChunks.appendUInt32(UInt32(clamping: image.loopCount ?? 1), to: &actl)
                PNGChunks.write("acTL", actl, to: &output)
            }
            PNGChunks.write("fcTL", frameControl(sequence, frame, image.pixelSize), to: &output)
            sequence += 1
            for chunk in chunks where chunk.type == "IDAT" {
                if index == 0 {
                    PNGChunks.write("IDAT", chunk.data, to: &output)
                } else {
                    var fdat = Data()
                    PNGChunks.appendUInt32(sequence, to: &fdat)
                    fdat.append(chunk.data)
                    PNGChunks.write("fdAT", fdat, to: &output)
                    sequence += 1
                }
            }
        }
        PNGChunks.write("IEND", Data(), to: &output)
        return output
    }

    private func frameControl(_ sequence: UInt32, _ frame: ImageFrame, _ size: PixelSize) -> Data {
        var data = Data()
        PNGChunks.appendUInt32(sequence, to: &data)
        PNGChunks.appendUInt32(UInt32(size.width), to: &data)
        PNGChunks.appendUInt32(UInt32(size.height), to: &data)
        PNGChunks.appendUInt32(0, to: &data)
        PNGChunks.appendUInt32(0, to: &data)
        let ms = frame.duration.components.seconds * 1000 + frame.duration.components.attoseconds / 1_000_000_000_000_000
        let (numerator, denominator): (Int64, UInt16) = ms <= 65535 ? (ms, 1000) : (min(ms / 1000, 65535), 1)
        PNGChunks.appendUInt16(UInt16(max(0, numerator)), to: &data)
        PNGChunks.appendUInt16(denominator, to: &data)
        data.append(contentsOf: [0, 0])  // dispose none, blend source
        return data
    }
}
