import CImageCodecs
import Foundation
@testable import MagpieCore

/// The C JPEG decoder's ways through a DCT-scaled decode, for tests that compare them: libjpeg alone, and the 1/8
/// decoder (`jpeg_eighth.c`) on one thread and on two.
enum JPEGDecodePath: CaseIterable, Sendable {
    case libjpeg, oneThread, twoThreads

    var flags: Int32 {
        switch self {
        case .libjpeg: Int32(MG_JPEG_FAST | MG_JPEG_LIBJPEG_ONLY)
        case .oneThread: Int32(MG_JPEG_FAST)
        case .twoThreads: Int32(MG_JPEG_FAST | MG_JPEG_TWO_THREADS)
        }
    }

    /// What one decode gave: its status and, when it succeeded, its size and the digest of its pixels.
    struct Outcome: Equatable {
        var status: Int32
        var width = 0, height = 0
        var sha256 = ""
    }

    /// Decodes `data` from memory at the DCT scale that `minimum` picks (1×1: an eighth; 0: full size).
    func decode(_ data: Data, minimum: UInt32 = 1) -> Outcome {
        var bitmap = mg_bitmap(), error = mg_error(), limits = CodecBridge.limits(.default), raw: Int32 = 0
        let status = CodecBridge.withBytes(of: data) {
            mg_jpeg_decode($0, $1, minimum, minimum, flags, nil, &limits, &bitmap, &raw, &error)
        }
        return Self.outcome(status, bitmap)
    }

    /// The same through `mg_jpeg_decode_file`, reading `file` as it decodes.
    func decode(_ file: ImageFile, minimum: UInt32 = 1) -> Outcome {
        var bitmap = mg_bitmap(), error = mg_error(), limits = CodecBridge.limits(.default), raw: Int32 = 0
        let status = withExtendedLifetime(file) {
            mg_jpeg_decode_file(
                file.descriptor, UInt64(file.size), minimum, minimum, flags, nil, &limits, &bitmap, &raw, &error)
        }
        return Self.outcome(status, bitmap)
    }

    private static func outcome(_ status: Int32, _ bitmap: mg_bitmap) -> Outcome {
        guard status == 0 else { return Outcome(status: status) }
        let pixels = CodecBridge.pixels(adopting: bitmap)
        return Outcome(status: 0, width: pixels.width, height: pixels.height, sha256: PixelDigest.sha256(pixels))
    }
}
