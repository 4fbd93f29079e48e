import Foundation
import Testing
@testable import MagpieCore

/// `Cache-Control` parsing (RFC 9111 §5.2): numbers, quoting, case, repetition, invalid and huge values, flags and the
/// RFC 5861 windows.
@Suite struct CacheControlTests {
    @Test func maxAgeAndSharedMaxAgeAreReadAsSeconds() {
        let directives = CacheControl(parsing: "max-age=60, s-maxage=300")
        #expect(directives.maxAge == 60)
        #expect(directives.sharedMaxAge == 300)
    }

    @Test func aQuotedMaxAgeIsUnquoted() {
        #expect(CacheControl(parsing: "max-age=\"60\"").maxAge == 60)
    }

    @Test func commasInsideAQuotedValueDoNotSplitDirectives() {
        let directives = CacheControl(parsing: "no-cache=\"a, max-age=1\", max-age=5")
        #expect(directives.noCache)
        // Split at the quoted comma, "max-age=1" would be the first max-age and win.
        #expect(directives.maxAge == 5)
        #expect(CacheControl.directives("no-cache=\"a, b\", max-age=5").map { "\($0.0)=\($0.1 ?? "nil")" } == ["no-cache=a, b", "max-age=5"])
    }

    @Test func anEscapedQuoteInsideAQuotedValueDoesNotEndIt() {
        let directives = CacheControl(parsing: #"private="x\", max-age=1", max-age=9"#)
        #expect(directives.isPrivate)
        #expect(directives.maxAge == 9)
        #expect(CacheControl.directives(#"private="x\"y""#).map { $0.1 } == [#"x"y"#])
    }

    @Test func directiveNamesAreCaseInsensitive() {
        let directives = CacheControl(parsing: "MAX-AGE=7, No-Store, Must-Revalidate")
        #expect(directives.maxAge == 7)
        #expect(directives.noStore)
        #expect(directives.mustRevalidate)
    }

    @Test func theFirstOccurrenceOfADirectiveWins() {
        #expect(CacheControl(parsing: "max-age=60, max-age=0").maxAge == 60)
        #expect(CacheControl(parsing: "max-age=0, max-age=60").maxAge == 0)
        #expect(CacheControl(parsing: "stale-if-error=10, stale-if-error=99").staleIfError == 10)
    }

    @Test(arguments: ["max-age=abc", "max-age=-1", "max-age=", "max-age", "max-age=1.5", "max-age=\"\"", "max-age= 6 0"])
    func anInvalidMaxAgeCountsAsZero(header: String) {
        #expect(CacheControl(parsing: header).maxAge == 0)
    }

    @Test func anInvalidSharedMaxAgeCountsAsZero() {
        #expect(CacheControl(parsing: "s-maxage=soon").sharedMaxAge == 0)
    }

    @Test func hugeDeltaSecondsBecomeTwoToTheThirtyFirst() {
        #expect(CacheControl(parsing: "max-age=99999999999999999999").maxAge == 2_147_483_648)
        #expect(CacheControl(parsing: "max-age=2147483649").maxAge == 2_147_483_648)
        #expect(CacheControl(parsing: "stale-while-revalidate=99999999999999999999").staleWhileRevalidate == 2_147_483_648)
        // The limit itself and values below it are kept as they are.
        #expect(CacheControl(parsing: "max-age=2147483648").maxAge == 2_147_483_648)
        #expect(CacheControl(parsing: "max-age=2147483647").maxAge == 2_147_483_647)
    }

    @Test func eachFlagDirectiveSetsOnlyItsFlag() {
        let none = CacheControl(parsing: "max-age=1")
        let flags: [(String, KeyPath<CacheControl, Bool>)] = [
            ("no-store", \.noStore), ("no-cache", \.noCache), ("must-revalidate", \.mustRevalidate),
            ("proxy-revalidate", \.proxyRevalidate), ("immutable", \.immutable), ("private", \.isPrivate),
            ("public", \.isPublic),
        ]
        for (name, flag) in flags {
            #expect(none[keyPath: flag] == false, "\(name) without the directive")
            let parsed = CacheControl(parsing: name)
            #expect(parsed[keyPath: flag], "\(name)")
            for (other, otherFlag) in flags where other != name {
                #expect(parsed[keyPath: otherFlag] == false, "\(name) must not set \(other)")
            }
        }
    }

    @Test func noCacheWithFieldNamesStillCountsAsNoCache() {
        #expect(CacheControl(parsing: "no-cache=\"Set-Cookie\"").noCache)
        #expect(CacheControl(parsing: "private=\"Authorization\"").isPrivate)
    }

    @Test func staleWindowsAreReadAsSeconds() {
        let directives = CacheControl(parsing: "stale-while-revalidate=30, stale-if-error=\"600\"")
        #expect(directives.staleWhileRevalidate == 30)
        #expect(directives.staleIfError == 600)
    }

    @Test(arguments: ["stale-while-revalidate=soon, stale-if-error=-5", "stale-while-revalidate, stale-if-error=", "stale-while-revalidate=1e3, stale-if-error=1.0"])
    func invalidStaleWindowsAreAbsent(header: String) {
        let directives = CacheControl(parsing: header)
        #expect(directives.staleWhileRevalidate == nil)
        #expect(directives.staleIfError == nil)
    }

    @Test func emptyListElementsAreIgnored() {
        #expect(CacheControl(parsing: ", max-age=60,,").maxAge == 60)
        #expect(CacheControl(parsing: " , ,no-store, ,").noStore)
        #expect(CacheControl.directives(", max-age=60,, ").map(\.0) == ["max-age"])
    }

    @Test func noHeaderOrAnEmptyOneGivesNoDirectives() {
        #expect(CacheControl(parsing: nil) == CacheControl())
        #expect(CacheControl(parsing: "") == CacheControl())
        #expect(CacheControl(parsing: " , ") == CacheControl())
        #expect(CacheControl(parsing: "x-unknown=1, community=\"UCI\"") == CacheControl())
    }

    @Test func forbidsServingStaleForMustRevalidateProxyRevalidateAndNoCacheOnly() {
        #expect(CacheControl(parsing: "must-revalidate").forbidsServingStale)
        #expect(CacheControl(parsing: "proxy-revalidate").forbidsServingStale)
        #expect(CacheControl(parsing: "no-cache").forbidsServingStale)
        #expect(!CacheControl(parsing: "max-age=60, public, immutable, stale-if-error=60").forbidsServingStale)
        #expect(!CacheControl(parsing: "no-store").forbidsServingStale)
    }
}

extension CacheControlTests {
    @Test func leadingZerosAreNotMistakenForAHugeValue() {
        #expect(CacheControl(parsing: "max-age=00000000060").maxAge == 60)
        #expect(CacheControl(parsing: "stale-if-error=000000000000000").staleIfError == 0)
        #expect(CacheControl.deltaSeconds("0000000000099999999999") == CacheControl.maximumDeltaSeconds)
    }
}
