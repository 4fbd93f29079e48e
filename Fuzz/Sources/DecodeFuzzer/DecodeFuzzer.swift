import Foundation
import FuzzDriver
import Magpie

// Limits small enough that libFuzzer's 2 GB RSS cap is never the thing that fails:
// a decoder must refuse a bigger declared size itself, before allocating.
let fuzzOptions = ImageDecodingOptions(limits: ImageDecodingLimits(
    maxPixelsPerFrame: 16_000_000, maxTotalBytes: 256 << 20, maxFrameCount: 500))
let thumbnailOptions = ImageDecodingOptions(targetSize: PixelSize(width: 64, height: 64), limits: fuzzOptions.limits)
let firstFrameOptions = ImageDecodingOptions(onlyFirstFrame: true, limits: fuzzOptions.limits)

/// Every input goes through the JPEG header probe and the public decode entry point (format
/// sniffing, then the coder: JPEG, PNG/APNG, GIF, WebP) three ways: at full size, as a
/// downsampled thumbnail (DCT or WebP scaling), and first frame only. Any crash, sanitizer
/// report, hang or untyped error is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecode(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    do {
        // The header probe (dimensions without decoding) is an entry point of its own.
        _ = try JPEGCoder().header(of: data)
    } catch is MagpieError {
    } catch {
        fatalError("untyped error \(error)")
    }
    for options in [fuzzOptions, thumbnailOptions, firstFrameOptions] {
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

/// SwiftPM links the executable with `--defsym main=DecodeFuzzer_main`.
@_cdecl("DecodeFuzzer_main")
public func decodeFuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzzDecode($0, $1) }
}
