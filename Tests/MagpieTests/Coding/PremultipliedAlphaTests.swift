import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

private let heifEnc = "/usr/bin/heif-enc"

/// Premultiplied-alpha AVIF and HEIF files, made by `heif-enc --premultiplied-alpha` (libheif-examples) from a PNG
/// whose colour is already multiplied by its alpha: both decoders must hand over straight alpha.
@Suite("Premultiplied alpha in AVIF and HEIF", .enabled(if: FileManager.default.isExecutableFile(atPath: heifEnc)))
struct PremultipliedAlphaTests {
    static let tool = heifEnc

    /// Encodes a 32x32 PNG of colour (100, 50, 25) at alpha 128 (straight: about (199, 100, 50)) with heif-enc.
    static func premultipliedFile(avif: Bool) throws -> Data {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-premul-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let rgba = [UInt8]((0..<32 * 32).flatMap { _ in [100, 50, 25, 128] as [UInt8] })
        let png = try PNGCoder().encode(Image(width: 32, height: 32, rgba: rgba), options: .default)
        let input = folder.appendingPathComponent("in.png")
        let output = folder.appendingPathComponent(avif ? "out.avif" : "out.heic")
        try png.write(to: input)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["--premultiplied-alpha", "-q", "95"] + (avif ? ["-A"] : ["-p", "chroma=444"])
            + [input.path, "-o", output.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return try Data(contentsOf: output)
    }

    static func expectStraight(_ image: Image) {
        let p = image.pixels.rgbaBytes
        #expect(p[3] == 128)
        #expect(abs(Int(p[0]) - 199) <= 4 && abs(Int(p[1]) - 100) <= 4 && abs(Int(p[2]) - 50) <= 4, "\(p.prefix(4))")
    }

    @Test("a premultiplied-alpha HEIF decodes to straight alpha")
    func heifIsUnpremultiplied() throws {
        let data = try Self.premultipliedFile(avif: false)
        #expect(ImageFormat(sniffing: data) == .heic)
        Self.expectStraight(try HEIFCoder().decode(data, options: .default))
    }

    @Test("a premultiplied-alpha AVIF decodes to straight alpha")
    func avifIsUnpremultiplied() throws {
        let data = try Self.premultipliedFile(avif: true)
        #expect(ImageFormat(sniffing: data) == .avif)
        Self.expectStraight(try AVIFCoder().decode(data, options: .default))
    }
}
