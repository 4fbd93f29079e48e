// magpie-library-check: which of the codec libraries Magpie opens on first use (lazy_library.h in CImageCodecs) are
// mapped into a fresh process, after a JPEG round trip and then after each lazily opened format's own round trip.
//
//   magpie-library-check [HEIC-FILE]
//
// Last, `faces=`: after a face detection (OpenCV comes with the face detector plugin), and `faces-available=` true or
// false.
// (HEIC is decoded from the file given, when one is: Magpie does not encode it.)
// Prints one line per step, `STEP=LIB,LIB,...` (empty when none is mapped), e.g. `jpeg=` then `avif=libavif`.
import Foundation
import MagpieCore

let lazilyOpened = ["libavif", "libheif", "libjxl", "libtiff", "librsvg", "libopencv_objdetect"]

/// The lazily opened libraries this process has mapped now, from /proc/self/maps.
func mapped() -> String {
    // Read to the end through a handle: /proc files report size 0, and a read sized from that comes back short.
    let maps = String(decoding: FileHandle(forReadingAtPath: "/proc/self/maps")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
    let files = Set(maps.split(separator: "\n").compactMap { $0.split(separator: "/").last.map(String.init) })
    return lazilyOpened.filter { name in files.contains { $0.hasPrefix(name + ".so") || $0.hasPrefix(name + "-") } }.joined(separator: ",")
}

var rgba: [UInt8] = []
for y in 0..<32 { for x in 0..<32 { rgba += [UInt8(x * 8), UInt8(y * 8), 128, 255] } }
let image = try Image(width: 32, height: 32, rgba: rgba)
let registry = ImageCoderRegistry.shared
for format in [ImageFormat.jpeg, .avif, .jxl] {
    let data = try registry.encode(image, as: format)
    _ = try registry.decode(data)
    print("\(format.rawValue)=\(mapped())")
}
// TIFF and SVG are decode-only: a 1×1 grey baseline TIFF (little-endian, one uncompressed strip), written out here.
var tiff: [UInt8] = Array("II".utf8) + [42, 0, 8, 0, 0, 0, 9, 0]
for (tag, value) in [(256, 1), (257, 1), (258, 8), (259, 1), (262, 1), (273, 122), (277, 1), (278, 1), (279, 1)] {
    // Each entry: tag, type SHORT (3) or LONG (4), count 1, value.
    let long = tag == 273 || tag == 279
    tiff += [UInt8(tag & 0xff), UInt8(tag >> 8), long ? 4 : 3, 0, 1, 0, 0, 0, UInt8(value & 0xff), UInt8(value >> 8), 0, 0]
}
tiff += [0, 0, 0, 0, 200]
_ = try registry.decode(Data(tiff))
print("tiff=\(mapped())")
_ = try registry.decode(Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>"#.utf8))
print("svg=\(mapped())")
if CommandLine.arguments.count > 1 {
    _ = try registry.decode(try Data(contentsOf: URL(fileURLWithPath: CommandLine.arguments[1])))
    print("heic=\(mapped())")
}
let detector = FaceDetector()
_ = try? detector.focalRegions(in: image)
print("faces=\(mapped())")
print("faces-available=\(detector.isAvailable)")
