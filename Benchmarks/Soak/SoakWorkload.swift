import Foundation
import MagpieBenchSupport

/// How a URL of some kind must end.
enum Expectation: Sendable, Hashable {
    /// Completed (or skipped as cached).
    case success
    /// Failed, with an error whose text contains one of `matching` (its kind of failure, not a particular URL).
    case failure(matching: [String])
    /// Either outcome is right; a failure must still contain one of `matching`.
    case either(matching: [String])

    var label: String {
        switch self {
        case .success: "succeeds"
        case .failure(let texts): "fails: " + texts.joined(separator: " or ")
        case .either(let texts): "either (fails: " + texts.joined(separator: " or ") + ")"
        }
    }
}

/// One kind of URL in a batch: a route of the origin with its parameters and what it must end in.
struct SoakKind: Sendable, Hashable {
    let name: String
    let expectation: Expectation
    /// URLs of this kind per unit of a batch.
    let perUnit: Int
    /// Paths (with query) taken in turn.
    let paths: [String]

    var isValid: Bool { expectation == .success }

    /// Half valid, half hostile, per unit; `/stall/` ties a download slot up for the whole --timeout.
    static let all: [SoakKind] = {
        let images = SoakAssets.validNames.map { "/img/" + $0 }
        return [
            SoakKind(name: "image", expectation: .success, perUnit: 7, paths: images),
            SoakKind(name: "slow", expectation: .success, perUnit: 2,
                     paths: ["/slow/photo-s.jpg?chunk=16384&delay=40", "/slow/badge.png?chunk=32768&delay=40", "/slow/spinner.gif?chunk=4096&delay=40"]),
            SoakKind(name: "redirect/2", expectation: .success, perUnit: 2, paths: SoakAssets.validNames.map { "/redirect/2/" + $0 }),
            SoakKind(name: "octet-stream", expectation: .success, perUnit: 1,
                     paths: ["/type/photo-m.jpg?type=application/octet-stream", "/type/spinner.webp?type=application/octet-stream"]),
            // `magpie prefetch` makes one attempt (no retry option), so the first request's 503 is what it sees.
            SoakKind(name: "flaky", expectation: .either(matching: ["HTTP 503"]), perUnit: 1, paths: ["/flaky/badge.png?failures=1"]),
            SoakKind(name: "stall", expectation: .failure(matching: ["timed out"]), perUnit: 1, paths: ["/stall/photo-m.jpg?after=4096", "/stall/badge.png"]),
            SoakKind(name: "truncate", expectation: .failure(matching: ["body truncated"]), perUnit: 1, paths: ["/truncate/photo-l.jpg", "/truncate/badge.png?bytes=100"]),
            SoakKind(name: "length", expectation: .failure(matching: ["body truncated"]), perUnit: 1, paths: ["/length/photo-s.jpg", "/length/spinner.gif?declared=2000000"]),
            // 50 MB (the size limit) must arrive before the 3 s timeout; under load it often does not.
            SoakKind(name: "huge", expectation: .failure(matching: ["larger than", "timed out"]), perUnit: 1, paths: ["/huge?bytes=60000000"]),
            SoakKind(name: "huge/declared", expectation: .failure(matching: ["(Content-Length 60000000)"]), perUnit: 1, paths: ["/huge?bytes=60000000&length=1"]),
            SoakKind(name: "huge/small", expectation: .failure(matching: ["PNG"]), perUnit: 1, paths: ["/huge?bytes=300000", "/huge?bytes=9"]),
            SoakKind(name: "wrong type", expectation: .failure(matching: ["not an image"]), perUnit: 1, paths: ["/type/photo-s.jpg?type=text/html", "/type/badge.png?type=application/json"]),
            SoakKind(name: "html", expectation: .failure(matching: ["not an image"]), perUnit: 1, paths: ["/html"]),
            SoakKind(name: "loop", expectation: .failure(matching: ["redirect loop"]), perUnit: 1, paths: ["/loop/a", "/loop/b"]),
            SoakKind(name: "redirect/30", expectation: .failure(matching: ["too many redirects"]), perUnit: 1, paths: ["/redirect/30/badge.png"]),
            SoakKind(name: "status 5xx", expectation: .failure(matching: ["HTTP 5"]), perUnit: 2, paths: ["/status/500", "/status/503?retryAfter=1"]),
            SoakKind(name: "status 404", expectation: .failure(matching: ["HTTP 404"]), perUnit: 1, paths: ["/status/404", "/img/no-such-asset.png"]),
            SoakKind(name: "bomb", expectation: .failure(matching: ["50000x50000"]), perUnit: 1, paths: ["/img/bomb.png"]),
            SoakKind(name: "corrupt", expectation: .failure(matching: ["corrupt"]), perUnit: 1, paths: ["/img/corrupt.jpg"]),
            SoakKind(name: "cut", expectation: .failure(matching: ["truncated"]), perUnit: 1, paths: ["/img/cut.jpg"]),
        ]
    }()
}

/// One URL of a batch and its kind.
struct SoakURL: Sendable {
    let url: String
    let kind: SoakKind
}

/// The URLs of one run: each unique (the round and an index in its query, so nothing is cached from an
/// earlier run), fed to `magpie prefetch` in a shuffled order with some lines repeated.
struct SoakBatch: Sendable {
    let round: Int
    /// Unique URLs, in the order they were made.
    let urls: [SoakURL]
    /// What goes to the CLI's stdin: every URL once, plus `repeats` duplicate lines.
    let lines: [String]
    let repeats: Int

    /// `units` repetitions of each of `kinds`' `perUnit` URLs, two repeated lines per unit.
    init(round: Int, units: Int, baseURL: String, kinds: [SoakKind] = SoakKind.all) {
        self.round = round
        var generator = SplitMix64(seed: UInt64(round) &* 0x9E37_79B9 &+ 17)
        var urls: [SoakURL] = []
        for unit in 0..<units {
            for kind in kinds {
                for copy in 0..<kind.perUnit {
                    let path = kind.paths[(unit * kind.perUnit + copy) % kind.paths.count]
                    let separator = path.contains("?") ? "&" : "?"
                    urls.append(SoakURL(url: "\(baseURL)\(path)\(separator)r=\(round)&i=\(urls.count)", kind: kind))
                }
            }
        }
        var lines = urls.map(\.url)
        lines.shuffle(using: &generator)
        let repeats = units * 2
        for _ in 0..<repeats {
            let line = lines[Int.random(in: 0..<lines.count, using: &generator)]
            lines.insert(line, at: Int.random(in: 0...lines.count, using: &generator))
        }
        self.urls = urls
        self.lines = lines
        self.repeats = repeats
    }
}
