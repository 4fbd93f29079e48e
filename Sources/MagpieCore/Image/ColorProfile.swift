#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What colours an image's samples mean: an ICC profile, CICP code points (AVIF, HEIF, PNG `cICP`, JPEG XL), or a
/// PNG's `gAMA`/`cHRM` pair, with a readable name.
///
/// Decoders fill it in; processing keeps it; encoders embed it. An image without one (``Image/colorProfile`` nil)
/// is sRGB. ``ColorConverter`` turns any of them into sRGB when ``ImageDecodingOptions/colorSpace`` asks.
public struct ColorProfile: Sendable, Hashable, CustomStringConvertible {
    /// The embedded ICC profile, when the file carries one (it wins over ``cicp`` and ``gamma``).
    public var iccData: Data?
    /// CICP (ITU-T H.273) code points, when the file states them.
    public var cicp: CICP?
    /// PNG `gAMA`: the file gamma (0.45455 for a 2.2 display), used only when nothing better is present.
    public var gamma: Double?
    /// PNG `cHRM`: white point and primaries, used with ``gamma`` when nothing better is present.
    public var chromaticities: Chromaticities?
    /// A readable name: the ICC profile's description, a name for well-known CICP code points, or "sRGB".
    public var name: String
    /// The colour model of the samples the profile describes: RGB, gray or CMYK.
    public var colorModel: ColorModel

    /// The colour model an ICC profile (or a file) describes.
    public enum ColorModel: String, Sendable, Hashable {
        /// Red, green, blue.
        case rgb
        /// One gray channel (stored in Magpie's RGBA pixels as equal R, G and B).
        case gray
        /// Cyan, magenta, yellow, black (converted to RGB while decoding).
        case cmyk
    }

    /// A profile with the given parts; ``name`` defaults to the ICC description or a CICP name.
    ///
    /// - Parameters:
    ///   - iccData: ICC profile bytes, or nil.
    ///   - cicp: CICP code points, or nil.
    ///   - gamma: PNG file gamma, or nil.
    ///   - chromaticities: PNG `cHRM` values, or nil.
    ///   - name: A readable name; nil derives one.
    public init(
        iccData: Data? = nil, cicp: CICP? = nil, gamma: Double? = nil, chromaticities: Chromaticities? = nil,
        name: String? = nil
    ) {
        let icc = iccData.flatMap { $0.isEmpty ? nil : $0 }
        let header = icc.flatMap(ICCProfileHeader.init)
        self.iccData = icc
        self.cicp = cicp
        self.gamma = gamma
        self.chromaticities = chromaticities
        self.colorModel = header?.colorModel ?? .rgb
        self.name = name ?? header?.description ?? cicp?.name ?? (gamma != nil ? "gAMA \(gamma!)" : "sRGB")
    }

    /// sRGB IEC 61966-2.1, stated by a file (PNG `sRGB` chunk) rather than assumed.
    public static let sRGB = ColorProfile(cicp: .sRGB, name: "sRGB")

    /// True when converting to sRGB would change nothing: no ICC profile and either sRGB CICP (or unspecified
    /// primaries and transfer), or nothing stated at all.
    public var isSRGB: Bool {
        if iccData != nil { return false }
        if let cicp { return cicp.isSRGBCompatible }
        return gamma == nil
    }

    /// ``name``.
    public var description: String { name }
}

/// CICP code points (ITU-T H.273): colour primaries, transfer characteristics, matrix coefficients, range.
public struct CICP: Sendable, Hashable, CustomStringConvertible {
    /// Colour primaries (1 BT.709/sRGB, 9 BT.2020, 12 Display P3, 2 unspecified).
    public var colorPrimaries: UInt16
    /// Transfer characteristics (13 sRGB, 1/6/14/15 BT.709-like, 16 PQ, 18 HLG, 2 unspecified).
    public var transferCharacteristics: UInt16
    /// Matrix coefficients (0 identity/RGB, 1 BT.709, 6 BT.601, 9 BT.2020).
    public var matrixCoefficients: UInt16
    /// Whether samples use the full range.
    public var fullRange: Bool

    /// Code points as given.
    public init(colorPrimaries: UInt16, transferCharacteristics: UInt16, matrixCoefficients: UInt16, fullRange: Bool) {
        self.colorPrimaries = colorPrimaries
        self.transferCharacteristics = transferCharacteristics
        self.matrixCoefficients = matrixCoefficients
        self.fullRange = fullRange
    }

    /// sRGB: primaries 1, transfer 13, identity matrix, full range.
    public static let sRGB = CICP(colorPrimaries: 1, transferCharacteristics: 13, matrixCoefficients: 0, fullRange: true)

    /// True when the colours are sRGB's: primaries 1 (BT.709) or 2 (unspecified), and transfer 13 (sRGB) or 2
    /// (unspecified). The matrix and range only matter while turning YUV into RGB, which the decoder did.
    public var isSRGBCompatible: Bool {
        [1, 2].contains(colorPrimaries) && [13, 2].contains(transferCharacteristics)
    }

    /// True for the HDR transfer functions: PQ (16) and HLG (18). Magpie decodes them to 8 bits without tone mapping.
    public var isHDR: Bool { transferCharacteristics == 16 || transferCharacteristics == 18 }

    /// A readable name for well-known combinations ("sRGB", "Display P3", "BT.2020 PQ", …), else `CICP p/t/m`.
    public var name: String {
        let primaries: String? = switch colorPrimaries {
        case 1, 2: "sRGB"
        case 9: "BT.2020"
        case 11: "DCI-P3"
        case 12: "Display P3"
        default: nil
        }
        let transfer: String? = switch transferCharacteristics {
        case 13, 2: ""
        case 1, 6, 14, 15: " (BT.709 transfer)"
        case 8: " (linear)"
        case 16: " PQ"
        case 18: " HLG"
        default: nil
        }
        guard let primaries, let transfer else { return "CICP \(description)" }
        return primaries + transfer
    }

    /// `primaries/transfer/matrix` and ` limited` when not full range, for example `1/13/6`.
    public var description: String {
        "\(colorPrimaries)/\(transferCharacteristics)/\(matrixCoefficients)" + (fullRange ? "" : " limited")
    }
}

/// CIE xy chromaticities of a white point and three primaries (PNG `cHRM`).
public struct Chromaticities: Sendable, Hashable {
    /// The eight values: white, red, green, blue, each x then y.
    public var whiteX, whiteY, redX, redY, greenX, greenY, blueX, blueY: Double

    /// Chromaticities as stored (PNG stores each times 100000).
    public init(
        whiteX: Double, whiteY: Double, redX: Double, redY: Double, greenX: Double, greenY: Double,
        blueX: Double, blueY: Double
    ) {
        (self.whiteX, self.whiteY, self.redX, self.redY) = (whiteX, whiteY, redX, redY)
        (self.greenX, self.greenY, self.blueX, self.blueY) = (greenX, greenY, blueX, blueY)
    }
}
