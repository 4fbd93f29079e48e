import Foundation
import FuzzDriver
import MagpieCore

/// A small two-frame image with translucent pixels: big enough for every processor to do real
/// work, small enough that a million runs stay fast.
let sample: Image = {
    var frames: [ImageFrame] = []
    for shift in [0, 97] {
        var bytes = [UInt8](repeating: 0, count: 9 * 7 * 4)
        for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 31 &+ shift) }
        frames.append(ImageFrame(pixels: try! PixelBuffer(width: 9, height: 7, rgba: bytes), duration: .milliseconds(50)))
    }
    return try! Image(frames: frames, loopCount: 0)
}()

/// Limits far below the defaults (100 MP per frame) so that a legal but huge upscale is refused
/// rather than spending seconds under AddressSanitizer; the limit check itself is what is fuzzed.
let fuzzOptions = ImageProcessingContext(decodingOptions: ImageDecodingOptions(limits: ImageDecodingLimits(
    maxPixelsPerFrame: 1_000_000, maxTotalBytes: 16 << 20, maxFrameCount: 100)))

/// Every input is a processor spec (`--processor`, and later the proxy's URL). A spec that parses
/// must round-trip through its identifier and must process the sample or fail with a typed
/// error; anything else (a trap, a sanitizer report, an untyped error, a hang) is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSpec(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    let processor: any ImageProcessor
    do {
        processor = try ImageProcessorSpec.parse(text)
    } catch is MagpieError {
        return 0
    } catch {
        fatalError("untyped error \(error)")
    }
    do {
        let again = try ImageProcessorSpec.parse(processor.identifier)
        precondition(again.identifier == processor.identifier, "\(processor.identifier) → \(again.identifier)")
    } catch {
        fatalError("identifier \(processor.identifier) of \(text.debugDescription) does not parse: \(error)")
    }
    do {
        _ = try processor.process(item: .image(sample), context: fuzzOptions)
    } catch is MagpieError {
        // Bad parameters and refused allocations are typed errors: expected.
    } catch {
        fatalError("untyped error \(error)")
    }
    return 0
}

/// SwiftPM links the executable with `--defsym main=SpecFuzzer_main`.
@_cdecl("SpecFuzzer_main")
public func specFuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzzSpec($0, $1) }
}
