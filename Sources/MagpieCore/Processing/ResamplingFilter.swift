#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The kernel a resize uses. Downscaling widens the kernel by the scale factor so every
/// source pixel contributes (area-correct, no aliasing).
public enum ResamplingFilter: String, Sendable, CaseIterable, Codable {
    /// Nearest neighbour: fastest, blocky. For pixel art.
    case nearest
    /// Box (area average): good for large reductions, soft when enlarging.
    case box
    /// Triangle (bilinear): fast, slightly soft.
    case bilinear
    /// Mitchell–Netravali cubic (B = C = 1/3): smooth, little ringing.
    case mitchell
    /// Lanczos with three lobes: sharpest, the default.
    case lanczos3

    /// Half-width of the kernel at scale 1, in source pixels.
    var support: Double {
        switch self {
        case .nearest, .box: 0.5
        case .bilinear: 1
        case .mitchell: 2
        case .lanczos3: 3
        }
    }

    func weight(_ x: Double) -> Double {
        let x = abs(x)
        switch self {
        case .nearest, .box:
            return x <= 0.5 ? 1 : 0
        case .bilinear:
            return x < 1 ? 1 - x : 0
        case .mitchell:
            let b = 1.0 / 3, c = 1.0 / 3
            if x < 1 {
                return ((12 - 9 * b - 6 * c) * x * x * x + (-18 + 12 * b + 6 * c) * x * x + (6 - 2 * b)) / 6
            }
            if x < 2 {
                return ((-b - 6 * c) * x * x * x + (6 * b + 30 * c) * x * x + (-12 * b - 48 * c) * x + (8 * b + 24 * c)) / 6
            }
            return 0
        case .lanczos3:
            if x == 0 { return 1 }
            if x >= 3 { return 0 }
            let px = Double.pi * x
            return 3 * sin(px) * sin(px / 3) / (px * px)
        }
    }
}
