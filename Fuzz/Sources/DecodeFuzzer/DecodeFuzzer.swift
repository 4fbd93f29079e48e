import Foundation
import Magpie

// Limits small enough that libFuzzer's 2 GB RSS cap is never the thing that fails:
// a decoder must refuse a bigger declared size itself, before allocating.
let fuzzOptions = ImageDecodingOptions(limits: ImageDecodingLimits(
    maxPixelsPerFrame: 16_000_000, maxTotalBytes: 256 << 20, maxFrameCount: 500))
let thumbnailOptions = ImageDecodingOptions(targetSize: PixelSize(width: 64, height: 64), limits: fuzzOptions.limits)

/// Every input goes through the public decode entry point (format sniffing, then the
/// coder), at full size and as a downsampled thumbnail. Any crash, sanitizer report,
/// hang or untyped error is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecode(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    for options in [fuzzOptions, thumbnailOptions] {
        do {
            let image = try ImageCoderRegistry.shared.decode(data, options: options)
            precondition(image.frames.allSatisfy { $0.pixels.width == image.width && $0.pixels.height == image.height })
            precondition(image.width > 0 && image.height > 0)
            if options.targetSize != nil { _ = try image.firstFrameOnly.resized(toFit: PixelSize(width: 64, height: 64)) }
        } catch is MagpieError {
            // The expected outcome for most mutated inputs.
        } catch {
            fatalError("untyped error \(error)")
        }
    }
    return 0
}

// SwiftPM links an executable with `--defsym main=<Module>_main`, so the entry point must
// carry that name; it hands control to libFuzzer's driver instead of libFuzzer's own main.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

@_cdecl("DecodeFuzzer_main")
public func decodeFuzzerMain(
    _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> CInt {
    var count = argc
    var vector = argv
    return LLVMFuzzerRunDriver(&count, &vector) { fuzzDecode($0, $1) }
}
