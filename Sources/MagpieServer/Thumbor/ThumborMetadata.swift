import Magpie
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// thumbor's `meta/` JSON, written as thumbor's JSON engine writes it (Python's `json.dumps`: keys in its order,
/// `", "` and `": "` between items, floats where its arithmetic made them):
/// `{"thumbor": {"source": {"url", "width", "height", "frameCount"}, "operations": [...], "target": {"width", "height"},
/// "focal_points": [...]}}`. As in thumbor, `source`'s width and height are the result's (its engine has been
/// transformed by the time it answers), and `url` is the image URL percent-encoded as Python's `quote` does.
struct ThumborMetadata {
    /// The image URL.
    let url: ServeSource
    /// The result's size.
    let size: PixelSize
    /// The source's frames.
    let frameCount: Int
    /// What the processor did.
    let trace: ThumborTrace

    var json: String {
        func number(_ value: ThumborTrace.Number) -> String {
            switch value {
            case .int(let value): return String(value)
            case .float(let value): return value == value.rounded() && abs(value) < 1e15 ? "\(Int(value)).0" : "\(value)"
            }
        }
        let operations = trace.operations.map { operation in
            switch operation {
            case .crop(let left, let top, let right, let bottom):
                return "{\"type\": \"crop\", \"left\": \(left), \"top\": \(top), \"right\": \(right), \"bottom\": \(bottom)}"
            case .resize(let width, let height):
                return "{\"type\": \"resize\", \"width\": \(number(width)), \"height\": \(number(height))}"
            case .flipHorizontally: return "{\"type\": \"flip_horizontally\"}"
            case .flipVertically: return "{\"type\": \"flip_vertically\"}"
            }
        }
        let target = trace.target(orSize: size)
        var text = "{\"thumbor\": {\"source\": {\"url\": \(JSONText.string(Self.pythonQuote(urlText))), \"width\": \(size.width), "
            + "\"height\": \(size.height), \"frameCount\": \(frameCount)}, \"operations\": [\(operations.joined(separator: ", "))], "
            + "\"target\": {\"width\": \(number(target.width)), \"height\": \(number(target.height))}"
        if !trace.focalPoints.isEmpty {
            let points = trace.focalPoints.map { point in
                "{\"x\": \(point.x), \"y\": \(point.y), \"z\": \(number(point.weight)), \"height\": \(point.height), "
                    + "\"width\": \(point.width), \"origin\": \(JSONText.string(point.origin))}"
            }
            text += ", \"focal_points\": [\(points.joined(separator: ", "))]"
        }
        return text + "}}"
    }

    /// The image URL as thumbor keeps it: without the `http://` its loader adds.
    private var urlText: String {
        switch url {
        case .remote(let remote): PercentDecoding.lenient(remote.absoluteString) ?? remote.absoluteString
        case .local(let path): "local://" + path
        }
    }

    /// Python's `urllib.parse.quote(text)`: every byte but letters, digits, `_.-~` and `/` percent-encoded.
    static func pythonQuote(_ text: String) -> String {
        PercentDecoding.encoded(text) { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                true
            default: false
            }
        }
    }
}
