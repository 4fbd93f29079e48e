import Testing

@testable import MagpieCore

/// ``ImageProcessor/decodingTarget``: how small a source may be decoded without changing a processor's result.
struct DecodingTargetTests {
    @Test func aResizeAnswersItsSizeAndAChainItsFirstProcessors() throws {
        let fit = ResizingImageProcessor(referenceSize: PixelSize(width: 40, height: 30), mode: .aspectFit)
        let fill = ResizingImageProcessor(referenceSize: PixelSize(width: 40, height: 30), mode: .aspectFill)
        #expect(fit.decodingTarget?.size == PixelSize(width: 40, height: 30) && fit.decodingTarget?.mode == .aspectFit)
        #expect(fill.decodingTarget?.mode == .aspectFill)
        #expect((fit |> BlurImageProcessor(blurRadius: 2)).decodingTarget?.mode == .aspectFit)
        // Anything before the resize sees the source whole.
        #expect((BlurImageProcessor(blurRadius: 2) |> fit).decodingTarget == nil)
        #expect(DefaultImageProcessor.default.decodingTarget == nil)
    }
}
