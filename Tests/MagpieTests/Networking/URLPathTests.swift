import Testing

@testable import Magpie

/// Dot segments in URL paths: resolved as RFC 3986 does (dots written %2e too), and found when hidden behind an
/// encoded separator, the spellings with which `/img/../secret.jpg` slipped past an `--allow-source` prefix.
struct URLPathTests {
    @Test(arguments: [
        ("/img/../tower.jpg", "/tower.jpg"), ("/img/./a.jpg", "/img/a.jpg"), ("/img/sub/../a.jpg", "/img/a.jpg"),
        ("/img/%2e%2e/tower.jpg", "/tower.jpg"), ("/img/%2E%2E/tower.jpg", "/tower.jpg"), ("/img/.%2e/tower.jpg", "/tower.jpg"),
        ("/img/%2e/a.jpg", "/img/a.jpg"), ("/img/..", "/"), ("/img/sub/..", "/img/"), ("/img/.", "/img/"),
        ("/../../a.jpg", "/a.jpg"), ("/a//../b", "/a/b"), ("/a/b/c/./../../g", "/a/g"), ("/a.jpg", "/a.jpg"),
        ("/...", "/..."), ("/..a/b", "/..a/b"), ("/a%2ejpg", "/a%2ejpg"), ("/img/..%2ftower.jpg", "/img/..%2ftower.jpg"),
        ("/", "/"), ("", ""),
    ])
    func dotSegmentsAreResolvedAsRFC3986Does(path: String, expected: String) {
        #expect(URLPath.removingDotSegments(path) == expected)
    }

    @Test(arguments: [
        "/img/../tower.jpg", "/img/%2e%2e/tower.jpg", "/img/%2E%2e/tower.jpg", "/img/..%2ftower.jpg", "/img/..%2Ftower.jpg",
        "/img/%2e%2e%2ftower.jpg", "/img/..%5ctower.jpg", "/img/..\\tower.jpg", "/img/a%2f..%2f..%2ftower.jpg", "/img/.",
        "/img/%2e", "/img/x%2f.%2fy",
    ])
    func everySpellingOfADotSegmentIsFound(path: String) {
        #expect(URLPath.hasDotSegment(path))
    }

    @Test(arguments: ["/img/tower.jpg", "/img/a.b.c", "/img/...", "/img/..a", "/img/a..", "/img/%2e%2e%2e", "/img/a%2fb", ""])
    func pathsWithoutADotSegmentPass(path: String) {
        #expect(!URLPath.hasDotSegment(path))
    }

    @Test func afterResolvingOnlyHiddenDotSegmentsAreLeft() {
        #expect(!URLPath.hasDotSegment(URLPath.removingDotSegments("/img/sub/../%2e/a.jpg")))
        #expect(URLPath.hasDotSegment(URLPath.removingDotSegments("/img/sub/../..%2fa.jpg")))
    }
}
