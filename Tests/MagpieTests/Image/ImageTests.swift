import Foundation
import Testing

@testable import MagpieCore

/// `Image` as a value: what the file said (profile, metadata, source info) travels with copies and changes only
/// in the copy that is changed.
struct ImageTests {
    func image() throws -> Image { Image(pixels: try PixelBuffer(width: 4, height: 3, fill: RGBAColor(red: 9, green: 8, blue: 7))) }

    static let profile = ColorProfile(cicp: CICP(colorPrimaries: 12, transferCharacteristics: 13, matrixCoefficients: 0, fullRange: true))

    @Test func aChangeToACopysProfileOrMetadataLeavesTheOriginalAlone() throws {
        var original = try image()
        original.colorProfile = Self.profile
        original.metadata = ImageMetadata(exif: Data([1, 2, 3]))
        var copy = original
        copy.metadata.xmp = Data("<x/>".utf8)
        copy.colorProfile = nil
        copy.sourceInfo = ImageSourceInfo(bitDepth: 10, hasAlpha: true)
        #expect(original.colorProfile == Self.profile)
        #expect(original.metadata == ImageMetadata(exif: Data([1, 2, 3])))
        #expect(original.sourceInfo == nil)
        #expect(copy.colorProfile == nil && copy.metadata.exif == Data([1, 2, 3]) && copy.metadata.xmp == Data("<x/>".utf8))
        #expect(copy.sourceInfo?.bitDepth == 10)
        #expect(copy != original)
    }

    @Test func imagesWithTheSameContentAreEqualHoweverTheyWereMade() throws {
        let plain = try image()
        var cleared = try image()
        cleared.colorProfile = Self.profile
        cleared.metadata = ImageMetadata(exif: Data([1]))
        cleared.colorProfile = nil
        cleared.metadata = .none
        #expect(cleared == plain)
        var a = try image(), b = try image()
        a.colorProfile = Self.profile
        a.sourceInfo = ImageSourceInfo(hasAlpha: false)
        b.sourceInfo = ImageSourceInfo(hasAlpha: false)
        b.colorProfile = Self.profile
        #expect(a == b)
        b.sourceInfo = ImageSourceInfo(hasAlpha: true)
        #expect(a != b)
    }

    @Test func whatTheFileSaidSurvivesFrameMappingAndTheFirstFrameCopy() throws {
        var original = try image()
        original.colorProfile = Self.profile
        original.metadata = ImageMetadata(xmp: Data("<x/>".utf8))
        let mapped = try original.mapFrames { try PixelBuffer(width: 2, height: 2, fill: RGBAColor(red: $0[0, 0].red, green: 0, blue: 0)) }
        #expect(mapped.colorProfile == Self.profile && mapped.metadata.xmp == Data("<x/>".utf8) && mapped.width == 2)
        #expect(original.firstFrameOnly.colorProfile == Self.profile)
    }
}
