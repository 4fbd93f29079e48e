import Foundation
import Testing

@testable import Magpie
@testable import MagpieCore

@Suite("MagpieError descriptions")
struct MagpieErrorTests {
    @Test func aCorruptJPEGSaysCorruptOnceAndKeepsLibjpegsDetail() throws {
        let coder = JPEGCoder()
        var bytes = [UInt8](try coder.encode(Image(pixels: try TestImages.gradient(width: 256, height: 256)), options: .init(quality: 90)))
        // A run of restart markers in the middle of the entropy-coded data: libjpeg warns "Corrupt JPEG data: …".
        let middle = bytes.count / 2
        for offset in 0..<64 { bytes[middle + offset] = offset.isMultiple(of: 2) ? 0xFF : 0xD3 }
        let reason = try #require(TestImages.decodingReason { try coder.decode(Data(bytes), options: .default) })
        #expect(reason.isCorrupt)
        let text = reason.description
        #expect(text.hasPrefix("corrupt JPEG data: "))
        #expect(text.lowercased().components(separatedBy: "corrupt jpeg data").count == 2, "\(text)")
        #expect(text.count > "corrupt JPEG data: ".count + 5, "libjpeg's detail is kept: \(text)")
    }

    @Test func aCodecMessageWithoutTheLeadIsKeptWhole() {
        #expect(MagpieError.DecodingFailureReason.corruptData(.png, message: "IDAT: invalid distance").description
            == "corrupt PNG data: IDAT: invalid distance")
        #expect(MagpieError.DecodingFailureReason.truncatedData(.jpeg, message: "Truncated JPEG data: 12 bytes").description
            == "truncated JPEG data: 12 bytes")
        // Only a whole lead followed by a colon is dropped.
        #expect(MagpieError.DecodingFailureReason.corruptData(.gif, message: "corrupt GIF database").description
            == "corrupt GIF data: corrupt GIF database")
    }
}
