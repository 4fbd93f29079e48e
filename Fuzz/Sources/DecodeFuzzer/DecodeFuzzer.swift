import Foundation
import FuzzDriver
import MagpieCore

// Limits small enough that libFuzzer's 2 GB RSS cap is never the thing that fails:
// a decoder must refuse a bigger declared size itself, before allocating.
let fuzzOptions = ImageDecodingOptions(limits: ImageDecodingLimits(
    maxPixelsPerFrame: 16_000_000, maxTotalBytes: 256 << 20, maxFrameCount: 500))
// The thumbnail pass also converts to sRGB, so lcms2 parses whatever ICC profile, CICP or gAMA/cHRM the input carries.
let thumbnailOptions: ImageDecodingOptions = {
    var options = ImageDecodingOptions(targetSize: PixelSize(width: 64, height: 64), limits: fuzzOptions.limits)
    options.colorSpace = .sRGB
    return options
}()
let keepEverything: ImageEncodingOptions = {
    var options = ImageEncodingOptions.default
    options.metadata = .keep
    return options
}()
let firstFrameOptions = ImageDecodingOptions(onlyFirstFrame: true, limits: fuzzOptions.limits)

/// Every input goes through the header probes and the public decode entry point (format sniffing, then the
/// coder of whichever format it is) three ways: at full size, as a downsampled thumbnail converted to sRGB, and
/// first frame only; a decoded thumbnail is re-encoded as PNG with its profile and metadata kept and decoded
/// again. Any crash, sanitizer report, hang or untyped error is a finding.
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
    do {
        _ = try ImageCoderRegistry.shared.header(of: data)
    } catch is MagpieError {
    } catch {
        fatalError("untyped error \(error)")
    }
    if ImageFormat(sniffing: data) == .jpeg { checkFileDecode(data) }
    for options in [fuzzOptions, thumbnailOptions, firstFrameOptions] {
        do {
            let image = try ImageCoderRegistry.shared.decode(data, options: options)
            precondition(image.frames.allSatisfy { $0.pixels.width == image.width && $0.pixels.height == image.height })
            precondition(image.width > 0 && image.height > 0)
            if options.targetSize != nil {
                let small = try image.firstFrameOnly.resized(toFit: PixelSize(width: 64, height: 64))
                let png = try ImageCoderRegistry.shared.encode(small, as: .png, options: keepEverything)
                _ = try ImageCoderRegistry.shared.decode(png)
            }
        } catch is MagpieError {
            // The expected outcome for most mutated inputs.
        } catch {
            fatalError("untyped error \(error)")
        }
    }
    return 0
}

/// Where a JPEG input is written to be decoded from a file (one per fuzzing process).
let inputFile = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-fuzz-\(getpid()).jpg")

/// A JPEG is also decoded from a file, which the JPEG coder reads as it decodes (a pread source, a window per
/// thread at 1/8) instead of whole: at full size and as a thumbnail, it must give what the bytes give (the same
/// pixels and metadata, or the same kind of error), or fail as corrupt data (see below).
func checkFileDecode(_ data: Data) {
    do {
        try data.write(to: inputFile)
    } catch {
        fatalError("cannot write \(inputFile.path): \(error)")
    }
    defer { try? FileManager.default.removeItem(at: inputFile) }
    for options in [fuzzOptions, thumbnailOptions] {
        let fromBytes = Result { try ImageCoderRegistry.shared.decode(data, options: options) }
        let fromFile = Result { try ImageCoderRegistry.shared.decode(contentsOfFile: inputFile.path, options: options) }
        switch (fromBytes, fromFile) {
        case (.success(let expected), .success(let image)):
            precondition(image.pixels.rgbaBytes == expected.pixels.rgbaBytes, "a file decoded to other pixels")
            precondition(image.colorProfile == expected.colorProfile && image.metadata == expected.metadata)
        case (.failure(let expected as MagpieError), .failure(let error as MagpieError)):
            precondition(
                kind(error) == kind(expected) || kind(error) == "corruptData", "file: \(error), bytes: \(expected)")
        case (.success, .failure(let error as MagpieError)):
            // libjpeg-turbo's fast Huffman decoder, which runs while a whole MCU's worth of input is buffered (always,
            // for bytes in memory), turns a code no table has into zero silently; its slow one, near the end of a
            // buffer (a file read 64 KiB at a time, as djpeg reads), warns "bad Huffman code". So a damaged file may
            // fail where its bytes decode to garbage, as corrupt data; never the other way round.
            precondition(kind(error) == "corruptData", "file: \(error), bytes decoded")
        default:
            fatalError("bytes: \(fromBytes), file: \(fromFile)")
        }
    }
}

/// A decoding error's case without its format and message (the case name; the text for a case without them).
func kind(_ error: MagpieError) -> String {
    guard let reason = error.decodingReason else { return "not a decoding error: \(error)" }
    return Mirror(reflecting: reason).children.first?.label ?? "\(reason)"
}

/// SwiftPM links the executable with `--defsym main=DecodeFuzzer_main`.
@_cdecl("DecodeFuzzer_main")
public func decodeFuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzzDecode($0, $1) }
}
