import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

struct PixelBufferTests {
    @Test func rawRGBARoundTripsThroughImage() throws {
        let bytes: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
        let image = try Image(width: 2, height: 2, rgba: bytes)
        #expect(image.pixels.rgbaBytes == bytes)
        #expect(image.pixels[1, 1] == RGBAColor(red: 13, green: 14, blue: 15, alpha: 16))
        #expect(image.cost == 16)
        #expect(!image.isAnimated)
    }

    @Test func wrongByteCountIsATypedError() {
        #expect(throws: MagpieError.self) { try PixelBuffer(width: 2, height: 2, rgba: [UInt8](repeating: 0, count: 15)) }
        #expect(throws: MagpieError.self) { try PixelBuffer(width: 0, height: 2) }
    }

    @Test func copiesShareStorageUntilMutated() throws {
        let original = try PixelBuffer(width: 4, height: 4, fill: .white)
        var copy = original
        #expect(copy.storage === original.storage)
        copy[0, 0] = .black
        #expect(copy.storage !== original.storage)
        #expect(original[0, 0] == .white)
        #expect(copy[0, 0] == .black)
    }

    @Test func opacityIsDetectedFromAlpha() throws {
        var pixels = try PixelBuffer(width: 3, height: 3, fill: .white)
        #expect(pixels.isOpaque)
        pixels[2, 2] = RGBAColor(red: 0, green: 0, blue: 0, alpha: 254)
        #expect(!pixels.isOpaque)
    }

    @Test func oneTranslucentPixelAnywhereMakesABufferNotOpaque() throws {
        // 5×3: the check reads four pixels at a time, then the rest one by one; every position of both is tried.
        let opaque = try PixelBuffer(width: 5, height: 3, fill: RGBAColor(red: 0, green: 0, blue: 0))
        #expect(opaque.isOpaque)
        for index in 0..<15 {
            var pixels = opaque
            pixels[index % 5, index / 5] = RGBAColor(red: 255, green: 255, blue: 255, alpha: 254)
            #expect(!pixels.isOpaque, "pixel \(index)")
        }
    }

    @Test func animatedImageCostCountsEveryFrame() throws {
        let frame = ImageFrame(pixels: try PixelBuffer(width: 10, height: 10), duration: .milliseconds(50))
        let image = try Image(frames: [frame, frame, frame], loopCount: 0)
        #expect(image.cost == 3 * 400)
        #expect(image.duration == .milliseconds(150))
        #expect(image.firstFrameOnly.frames.count == 1)
    }

    @Test func framesOfDifferentSizesAreRejected() throws {
        let a = ImageFrame(pixels: try PixelBuffer(width: 10, height: 10))
        let b = ImageFrame(pixels: try PixelBuffer(width: 11, height: 10))
        #expect(throws: MagpieError.self) { try Image(frames: [a, b]) }
        #expect(throws: MagpieError.self) { try Image(frames: []) }
    }

    @Test func pointSizeDividesByScale() throws {
        let image = Image(pixels: try PixelBuffer(width: 200, height: 100), scale: 2)
        #expect(image.size.width == 100 && image.size.height == 50)
    }
}
