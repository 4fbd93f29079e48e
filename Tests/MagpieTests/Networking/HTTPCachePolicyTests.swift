import Foundation
import Testing
@testable import MagpieCore

/// RFC 9111's private-cache rules as ``HTTPCachePolicy`` applies them to stored ``HTTPValidators``: freshness lifetime,
/// current age, stale use, storability, Vary, 304 merging, the index record, and the validators a response gives.
@Suite struct HTTPCachePolicyTests {
    /// A fixed whole second: 2027-01-15 08:00:00 GMT.
    static let base = Date(timeIntervalSince1970: 1_800_000_000)

    /// `date` as an IMF-fixdate (`Fri, 15 Jan 2027 08:00:00 GMT`).
    static func httpDate(_ date: Date) -> String { imfFixdate(date) }

    /// `base` moved by `seconds`, as an HTTP date.
    static func httpDate(_ seconds: TimeInterval) -> String { httpDate(base.addingTimeInterval(seconds)) }

    static func at(_ seconds: TimeInterval) -> Date { base.addingTimeInterval(seconds) }

    /// A policy whose request was sent and response received at `base`, stored then.
    static func policy(
        cacheControl: String? = nil, expires: String? = nil, date: String? = httpDate(0), age: String? = nil,
        lastModified: String? = nil, maxAge: TimeInterval? = nil
    ) -> HTTPCachePolicy {
        HTTPCachePolicy(
            validators: HTTPValidators(
                lastModified: lastModified, maxAge: maxAge, cacheControl: cacheControl, expires: expires, date: date,
                age: age, requestTime: base, responseTime: base),
            storedAt: base)
    }

    @Test func theTestFormatterWritesIMFFixdate() {
        #expect(Self.httpDate(0) == "Fri, 15 Jan 2027 08:00:00 GMT")
        #expect(HTTPDate.parse(Self.httpDate(3661)) == Self.at(3661))
    }

    /// Freshness lifetime (RFC 9111 §4.2.1).
    @Suite struct FreshnessLifetime {
        @Test func maxAgeIsTheLifetime() {
            #expect(HTTPCachePolicyTests.policy(cacheControl: "max-age=600").freshnessLifetime == 600)
        }

        @Test func maxAgeBeatsExpires() {
            let policy = HTTPCachePolicyTests.policy(cacheControl: "max-age=600", expires: HTTPCachePolicyTests.httpDate(60))
            #expect(policy.freshnessLifetime == 600)
        }

        @Test func sharedMaxAgeIsIgnoredByAPrivateCache() {
            let policy = HTTPCachePolicyTests.policy(cacheControl: "s-maxage=600", expires: HTTPCachePolicyTests.httpDate(60))
            #expect(policy.freshnessLifetime == 60)
        }

        @Test func expiresMinusDateIsTheLifetimeWithoutMaxAge() {
            // Date an hour before the response arrived: the lifetime is Expires − Date, not Expires − response time.
            let policy = HTTPCachePolicyTests.policy(
                expires: HTTPCachePolicyTests.httpDate(3600), date: HTTPCachePolicyTests.httpDate(-3600))
            #expect(policy.freshnessLifetime == 7200)
        }

        @Test func anExpiresBeforeDateGivesZeroNotANegativeLifetime() {
            let policy = HTTPCachePolicyTests.policy(expires: HTTPCachePolicyTests.httpDate(-60))
            #expect(policy.freshnessLifetime == 0)
        }

        @Test func anInvalidExpiresMeansAlreadyExpiredEvenWithLastModified() {
            // Without the rule, the Last-Modified heuristic would give 1000 s.
            let policy = HTTPCachePolicyTests.policy(expires: "0", lastModified: HTTPCachePolicyTests.httpDate(-10_000))
            #expect(policy.freshnessLifetime == 0)
        }

        @Test func expiresWithoutDateIsMeasuredFromTheResponseTime() {
            // storedAt differs from the response time, so using it would give 1300.
            let policy = HTTPCachePolicy(
                validators: HTTPValidators(
                    expires: HTTPCachePolicyTests.httpDate(300), requestTime: HTTPCachePolicyTests.base,
                    responseTime: HTTPCachePolicyTests.base),
                storedAt: HTTPCachePolicyTests.at(-1000))
            #expect(policy.freshnessLifetime == 300)
        }

        @Test func expiresWithoutDateOrResponseTimeIsMeasuredFromStoredAt() {
            let policy = HTTPCachePolicy(
                validators: HTTPValidators(expires: HTTPCachePolicyTests.httpDate(300)), storedAt: HTTPCachePolicyTests.at(-1000))
            #expect(policy.freshnessLifetime == 1300)
        }

        @Test func heuristicIsATenthOfDateMinusLastModified() {
            let policy = HTTPCachePolicyTests.policy(lastModified: HTTPCachePolicyTests.httpDate(-10_000))
            #expect(policy.freshnessLifetime == 1000)
        }

        @Test func heuristicIsCappedAtOneDay() {
            let policy = HTTPCachePolicyTests.policy(lastModified: HTTPCachePolicyTests.httpDate(-10_000_000))
            #expect(policy.freshnessLifetime == 86_400)
            #expect(HTTPCachePolicy.heuristicLimit == 86_400)
        }

        @Test func aLastModifiedAfterDateGivesNoHeuristicLifetime() {
            let policy = HTTPCachePolicyTests.policy(lastModified: HTTPCachePolicyTests.httpDate(500))
            #expect(policy.freshnessLifetime == 0)
        }

        @Test func noFreshnessInformationMeansZero() {
            #expect(HTTPCachePolicyTests.policy().freshnessLifetime == 0)
            #expect(HTTPCachePolicyTests.policy(cacheControl: "public, stale-if-error=600").freshnessLifetime == 0)
        }

        @Test func noCacheMakesTheLifetimeZeroWhateverElseIsGiven() {
            let policy = HTTPCachePolicyTests.policy(
                cacheControl: "max-age=600, no-cache", expires: HTTPCachePolicyTests.httpDate(600),
                lastModified: HTTPCachePolicyTests.httpDate(-100_000))
            #expect(policy.freshnessLifetime == 0)
        }

        @Test func legacyEntriesWithoutCacheControlUseTheirMaxAge() {
            // The Expires would give 60 s: the legacy max-age takes the place of the header's max-age.
            let legacy = HTTPCachePolicyTests.policy(expires: HTTPCachePolicyTests.httpDate(60), maxAge: 120)
            #expect(legacy.cacheControl.maxAge == 120)
            #expect(legacy.freshnessLifetime == 120)
            // Once the header is kept, it wins over the legacy number.
            #expect(HTTPCachePolicyTests.policy(cacheControl: "max-age=30", maxAge: 120).freshnessLifetime == 30)
        }

        @Test func legacyMaxAgeIsClampedToTheDeltaSecondsRange() {
            #expect(HTTPCachePolicyTests.policy(maxAge: -5).freshnessLifetime == 0)
            #expect(HTTPCachePolicyTests.policy(maxAge: 1e20).freshnessLifetime == 2_147_483_648)
        }
    }

    /// Current age (RFC 9111 §4.2.3), with exact numbers.
    @Suite struct CurrentAge {
        /// Request sent at base, response received at base + 2 (2 s in transit), Date = base − 3 (apparent age 5).
        static func policy(age: String?, date: String? = HTTPCachePolicyTests.httpDate(-3)) -> HTTPCachePolicy {
            HTTPCachePolicy(
                validators: HTTPValidators(
                    cacheControl: "max-age=3600", date: date, age: age, requestTime: HTTPCachePolicyTests.base,
                    responseTime: HTTPCachePolicyTests.at(2)),
                storedAt: HTTPCachePolicyTests.at(2))
        }

        @Test func apparentAgeWinsWhenLargerThanAgePlusResponseDelay() {
            // max(5, 1 + 2) + 100 resident.
            #expect(Self.policy(age: "1").currentAge(at: HTTPCachePolicyTests.at(102)) == 105)
        }

        @Test func ageHeaderPlusResponseDelayWinsWhenLarger() {
            // max(5, 10 + 2) + 100 resident.
            #expect(Self.policy(age: "10").currentAge(at: HTTPCachePolicyTests.at(102)) == 112)
        }

        @Test func withoutAgeOrDateTheAgeIsTheResponseDelayPlusResidentTime() {
            // Date defaults to the response time (apparent age 0); Age 0 + 2 s delay.
            #expect(Self.policy(age: nil, date: nil).currentAge(at: HTTPCachePolicyTests.at(12)) == 12)
        }

        @Test func residentTimeIsCountedFromTheResponseTime() {
            let policy = Self.policy(age: "10")
            #expect(policy.currentAge(at: HTTPCachePolicyTests.at(2)) == 12)
            #expect(policy.currentAge(at: HTTPCachePolicyTests.at(3)) == 13)
        }

        @Test func aListValuedAgeUsesItsFirstMember() {
            // max(5, 100 + 2) + 100 resident.
            #expect(Self.policy(age: "100, 5").currentAge(at: HTTPCachePolicyTests.at(102)) == 202)
            #expect(Self.policy(age: " 100 ,5").currentAge(at: HTTPCachePolicyTests.at(102)) == 202)
        }

        @Test(arguments: ["abc", "-30", "", "1.5", ",100"])
        func anInvalidAgeCountsZero(age: String) {
            // Date = response time (apparent age 0): 0 + 2 delay + 10 resident.
            let policy = Self.policy(age: age, date: HTTPCachePolicyTests.httpDate(2))
            #expect(policy.currentAge(at: HTTPCachePolicyTests.at(12)) == 12)
        }

        @Test func aDateAfterTheResponseTimeGivesNoNegativeApparentAge() {
            let policy = Self.policy(age: nil, date: HTTPCachePolicyTests.httpDate(500))
            #expect(policy.currentAge(at: HTTPCachePolicyTests.at(12)) == 12)
        }
    }

    /// Fresh, stale, and when stale use is allowed.
    @Suite struct Staleness {
        static func policy(_ cacheControl: String) -> HTTPCachePolicy { HTTPCachePolicyTests.policy(cacheControl: cacheControl) }

        @Test func freshUntilTheAgeReachesTheLifetime() {
            let policy = Self.policy("max-age=60")
            #expect(policy.isFresh(at: HTTPCachePolicyTests.at(59)))
            #expect(policy.staleness(at: HTTPCachePolicyTests.at(59)) == -1)
            #expect(!policy.isFresh(at: HTTPCachePolicyTests.at(60)))
            #expect(policy.staleness(at: HTTPCachePolicyTests.at(60)) == 0)
            #expect(policy.staleness(at: HTTPCachePolicyTests.at(75)) == 15)
        }

        @Test func staleWhileRevalidateCoversOnlyItsWindowPastFreshness() {
            let policy = Self.policy("max-age=60, stale-while-revalidate=30")
            #expect(!policy.allowsStaleWhileRevalidating(at: HTTPCachePolicyTests.at(30)), "still fresh")
            #expect(policy.allowsStaleWhileRevalidating(at: HTTPCachePolicyTests.at(60)))
            #expect(policy.allowsStaleWhileRevalidating(at: HTTPCachePolicyTests.at(89)))
            #expect(!policy.allowsStaleWhileRevalidating(at: HTTPCachePolicyTests.at(90)))
        }

        @Test func staleWhileRevalidateIsNeverAllowedWithMustRevalidateProxyRevalidateOrNoCache() {
            for extra in ["must-revalidate", "proxy-revalidate", "no-cache"] {
                let policy = Self.policy("max-age=60, stale-while-revalidate=30, \(extra)")
                for second in [0.0, 10, 60, 70] {
                    #expect(!policy.allowsStaleWhileRevalidating(at: HTTPCachePolicyTests.at(second)), "\(extra) at \(second)")
                }
            }
        }

        @Test func withoutTheDirectiveNoStaleWhileRevalidating() {
            #expect(!Self.policy("max-age=60").allowsStaleWhileRevalidating(at: HTTPCachePolicyTests.at(61)))
        }

        @Test func staleIfErrorCoversFreshnessAndItsWindowPastIt() {
            let policy = Self.policy("max-age=60, stale-if-error=100")
            #expect(policy.allowsStaleOnError(at: HTTPCachePolicyTests.at(30)))
            #expect(policy.allowsStaleOnError(at: HTTPCachePolicyTests.at(159)))
            #expect(!policy.allowsStaleOnError(at: HTTPCachePolicyTests.at(160)))
        }

        @Test func staleIfErrorIsNeverAllowedWithMustRevalidateOrWithoutTheDirective() {
            #expect(!Self.policy("max-age=60, stale-if-error=100, must-revalidate").allowsStaleOnError(at: HTTPCachePolicyTests.at(61)))
            #expect(!Self.policy("max-age=60").allowsStaleOnError(at: HTTPCachePolicyTests.at(61)))
        }

        @Test func noStoreIsNotStorableAndOthersAre() {
            #expect(!Self.policy("no-store").isStorable)
            #expect(!Self.policy("max-age=60, NO-STORE").isStorable)
            #expect(Self.policy("no-cache, private").isStorable)
        }

        @Test func immutableIsReported() {
            #expect(Self.policy("max-age=60, immutable").isImmutable)
            #expect(!Self.policy("max-age=60").isImmutable)
        }
    }

    /// `Vary` (RFC 9111 §4.1).
    @Suite struct Vary {
        static func make(vary: String?, stored: [HTTPHeaderField]) -> HTTPCachePolicy {
            HTTPCachePolicy(
                validators: HTTPValidators(cacheControl: "max-age=60", vary: vary, varyingRequestHeaders: stored),
                storedAt: HTTPCachePolicyTests.base)
        }

        let policy = Vary.make(vary: "Accept, Accept-Encoding", stored: [HTTPHeaderField(name: "accept", value: "image/webp")])

        @Test func equalValuesMatchAndNamesAreCaseInsensitive() {
            #expect(policy.matchesVary(requestHeaders: [HTTPHeaderField(name: "ACCEPT", value: "image/webp")]))
            #expect(policy.matchesVary(requestHeaders: [
                HTTPHeaderField(name: "Accept", value: "image/webp"), HTTPHeaderField(name: "User-Agent", value: "x"),
            ]))
        }

        @Test func aDifferentValueDoesNotMatch() {
            #expect(!policy.matchesVary(requestHeaders: [HTTPHeaderField(name: "Accept", value: "image/avif")]))
        }

        @Test func aHeaderOnlyOneSideHasDoesNotMatch() {
            // The stored request had no Accept-Encoding; the new one has.
            #expect(!policy.matchesVary(requestHeaders: [
                HTTPHeaderField(name: "Accept", value: "image/webp"), HTTPHeaderField(name: "Accept-Encoding", value: "gzip"),
            ]))
            // The stored request had Accept; the new one has not.
            #expect(!policy.matchesVary(requestHeaders: []))
        }

        @Test func aHeaderBothRequestsLackMatches() {
            let policy = Vary.make(vary: "Accept-Language", stored: [])
            #expect(policy.matchesVary(requestHeaders: [HTTPHeaderField(name: "Accept", value: "image/png")]))
        }

        @Test func repeatedLinesAndSpacingAroundCommasCompareAsOneValue() {
            let policy = Vary.make(vary: "accept", stored: [HTTPHeaderField(name: "Accept", value: "image/webp,image/png")])
            #expect(policy.matchesVary(requestHeaders: [
                HTTPHeaderField(name: "Accept", value: "image/webp"), HTTPHeaderField(name: "accept", value: " image/png"),
            ]))
        }

        @Test func varyStarNeverMatches() {
            let star = Vary.make(vary: "Accept, *", stored: [])
            #expect(star.varyingHeaderNames == ["*"])
            #expect(!star.matchesVary(requestHeaders: []))
            #expect(!Vary.make(vary: "*", stored: []).matchesVary(requestHeaders: []))
        }

        @Test func withoutVaryEveryRequestMatches() {
            #expect(Vary.make(vary: nil, stored: []).matchesVary(requestHeaders: [HTTPHeaderField(name: "Accept", value: "x")]))
        }

        @Test func varyingHeadersPicksTheNamedLinesJoined() {
            let picked = HTTPCachePolicy.varyingHeaders(named: "Accept, X-Missing", in: [
                HTTPHeaderField(name: "Accept", value: "a"), HTTPHeaderField(name: "Cookie", value: "c"),
                HTTPHeaderField(name: "ACCEPT", value: "b"),
            ])
            #expect(picked == [HTTPHeaderField(name: "accept", value: "a, b")])
            #expect(HTTPCachePolicy.varyingHeaders(named: nil, in: [HTTPHeaderField(name: "Accept", value: "a")]).isEmpty)
        }
    }

    /// `HTTPValidators.merged(with:)` (RFC 9111 §4.3.4) and `stamped(…)`.
    @Suite struct MergingAndStamping {
        let stored = HTTPValidators(
            etag: "\"a\"", lastModified: HTTPCachePolicyTests.httpDate(-86_400), maxAge: 60, contentType: "image/png",
            cacheControl: "max-age=60", expires: HTTPCachePolicyTests.httpDate(60), date: HTTPCachePolicyTests.httpDate(0),
            age: "30", vary: "Accept", varyingRequestHeaders: [HTTPHeaderField(name: "accept", value: "image/webp")],
            requestTime: HTTPCachePolicyTests.base, responseTime: HTTPCachePolicyTests.at(1))

        @Test func aNotModifiedsHeadersReplaceAndWhatItLacksIsKept() {
            let fresh = HTTPValidators(
                etag: "\"b\"", maxAge: 300, cacheControl: "max-age=300", expires: HTTPCachePolicyTests.httpDate(900),
                date: HTTPCachePolicyTests.httpDate(600), requestTime: HTTPCachePolicyTests.at(600),
                responseTime: HTTPCachePolicyTests.at(601))
            let merged = stored.merged(with: fresh)
            #expect(merged.cacheControl == "max-age=300")
            #expect(merged.maxAge == 300)
            #expect(merged.expires == HTTPCachePolicyTests.httpDate(900))
            #expect(merged.etag == "\"b\"")
            #expect(merged.date == HTTPCachePolicyTests.httpDate(600))
            #expect(merged.requestTime == HTTPCachePolicyTests.at(600))
            #expect(merged.responseTime == HTTPCachePolicyTests.at(601))
            // The old Age described the old Date: with a new Date and no Age, it goes.
            #expect(merged.age == nil)
            // Kept.
            #expect(merged.lastModified == stored.lastModified)
            #expect(merged.contentType == "image/png")
            #expect(merged.vary == "Accept")
            #expect(merged.varyingRequestHeaders == stored.varyingRequestHeaders)
        }

        @Test func aNotModifiedsAgeReplacesTheStoredOne() {
            let merged = stored.merged(with: HTTPValidators(date: HTTPCachePolicyTests.httpDate(600), age: "7"))
            #expect(merged.age == "7")
        }

        @Test func aNotModifiedWithoutDateOrTimesKeepsDateAndAge() {
            let merged = stored.merged(with: HTTPValidators(cacheControl: "max-age=10"))
            #expect(merged.cacheControl == "max-age=10")
            #expect(merged.date == stored.date)
            #expect(merged.age == "30")
            #expect(merged.responseTime == stored.responseTime)
            #expect(merged.expires == stored.expires && merged.etag == stored.etag)
        }

        @Test func aNotModifiedWithNothingChangesNothing() {
            #expect(stored.merged(with: HTTPValidators()) == stored)
        }

        @Test func aNotModifiedsVaryReplacesTheVaryingRequestHeaders() {
            let merged = stored.merged(with: HTTPValidators(vary: "Accept-Language"))
            #expect(merged.vary == "Accept-Language")
            #expect(merged.varyingRequestHeaders.isEmpty)
        }

        @Test func stampingRecordsTheTimesAndTheVaryingRequestHeaderValues() {
            let response = HTTPValidators(cacheControl: "max-age=60", vary: "Accept, Accept-Language")
            let stamped = response.stamped(
                requestTime: HTTPCachePolicyTests.base, responseTime: HTTPCachePolicyTests.at(2),
                requestHeaders: [
                    HTTPHeaderField(name: "Accept", value: "image/webp"), HTTPHeaderField(name: "User-Agent", value: "magpie"),
                ])
            #expect(stamped.requestTime == HTTPCachePolicyTests.base)
            #expect(stamped.responseTime == HTTPCachePolicyTests.at(2))
            #expect(stamped.varyingRequestHeaders == [HTTPHeaderField(name: "accept", value: "image/webp")])
            #expect(stamped.cacheControl == "max-age=60" && stamped.vary == response.vary)
        }
    }

    /// The JSON record of the RFC 9111 fields kept in a data cache's index.
    @Suite struct StorageRecord {
        static let full = HTTPValidators(
            etag: "\"e\"", lastModified: HTTPCachePolicyTests.httpDate(-100), maxAge: 60, contentType: "image/jpeg",
            cacheControl: "max-age=60, stale-if-error=\"30\"", expires: HTTPCachePolicyTests.httpDate(60),
            date: HTTPCachePolicyTests.httpDate(0), age: "100, 5", vary: "Accept, Accept-Language",
            varyingRequestHeaders: [HTTPHeaderField(name: "accept", value: "image/webp, */*")],
            requestTime: HTTPCachePolicyTests.base.addingTimeInterval(0.125),
            responseTime: HTTPCachePolicyTests.base.addingTimeInterval(1.375))

        @Test func theRecordRoundTripsEveryField() throws {
            let record = try #require(Self.full.cachingRecord)
            var restored = HTTPValidators(etag: "\"e\"", lastModified: Self.full.lastModified, maxAge: 60, contentType: "image/jpeg")
            restored.restoreCachingRecord(record)
            #expect(restored == Self.full)
        }

        @Test(arguments: [
            HTTPValidators(cacheControl: "no-cache"), HTTPValidators(expires: "0"), HTTPValidators(date: "d"),
            HTTPValidators(age: "1"), HTTPValidators(vary: "Accept"),
            HTTPValidators(varyingRequestHeaders: [HTTPHeaderField(name: "a", value: "b")]),
            HTTPValidators(requestTime: Date(timeIntervalSince1970: 1)), HTTPValidators(responseTime: Date(timeIntervalSince1970: 2)),
        ])
        func eachFieldAloneSurvivesTheRecord(validators: HTTPValidators) throws {
            let record: String = try #require(validators.cachingRecord)
            var restored = HTTPValidators()
            restored.restoreCachingRecord(record)
            #expect(restored == validators)
        }

        @Test func validatorsWithoutAnyRFC9111FieldHaveNoRecord() {
            #expect(HTTPValidators().cachingRecord == nil)
            #expect(HTTPValidators(etag: "\"x\"", lastModified: "Fri, 15 Jan 2027 08:00:00 GMT", maxAge: 60, contentType: "image/png").cachingRecord == nil)
        }

        @Test func restoringReplacesEveryRFC9111Field() throws {
            let record: String = try #require(HTTPValidators(cacheControl: "no-store").cachingRecord)
            var restored = Self.full
            restored.restoreCachingRecord(record)
            #expect(restored.cacheControl == "no-store")
            #expect(restored.expires == nil && restored.date == nil && restored.age == nil && restored.vary == nil)
            #expect(restored.varyingRequestHeaders.isEmpty && restored.requestTime == nil && restored.responseTime == nil)
            #expect(restored.etag == Self.full.etag)
        }

        @Test(arguments: ["not json", "{\"cacheControl\": 5}", "[]", ""])
        func anUnreadableRecordRestoresNothing(record: String) {
            var restored = Self.full
            restored.restoreCachingRecord(record)
            #expect(restored == Self.full)
            var empty = HTTPValidators()
            empty.restoreCachingRecord(record)
            #expect(empty == HTTPValidators())
        }

        @Test func noRecordRestoresNothing() {
            var restored = Self.full
            restored.restoreCachingRecord(nil)
            #expect(restored == Self.full)
        }
    }

    /// What `HTTPResponseInfo.validators` reads from a response's headers.
    @Suite struct ResponseHeaders {
        static let url = URL(string: "https://example.com/cat.png")!

        @Test func repeatedCacheControlAndVaryLinesAreJoinedWithCommas() {
            let response = HTTPResponseInfo(url: Self.url, statusCode: 200, headers: [
                HTTPHeaderField(name: "Cache-Control", value: "max-age=60"), HTTPHeaderField(name: "Vary", value: "Accept"),
                HTTPHeaderField(name: "cache-control", value: "stale-if-error=30"),
                HTTPHeaderField(name: "VARY", value: "Accept-Language"),
            ])
            let validators = response.validators
            #expect(validators.cacheControl == "max-age=60, stale-if-error=30")
            #expect(validators.vary == "Accept, Accept-Language")
            #expect(validators.maxAge == 60)
            #expect(HTTPCachePolicy(validators: validators, storedAt: HTTPCachePolicyTests.base).cacheControl.staleIfError == 30)
        }

        @Test func aDirectiveOnASecondCacheControlLineIsSeen() {
            let response = HTTPResponseInfo(url: Self.url, statusCode: 200, headers: [
                HTTPHeaderField(name: "Cache-Control", value: "public"), HTTPHeaderField(name: "Cache-Control", value: "no-store"),
            ])
            #expect(!HTTPCachePolicy(response: response, receivedAt: HTTPCachePolicyTests.base).isStorable)
            #expect(response.validators.maxAge == 0)
        }

        @Test func expiresDateAgeAndValidatorsAreRead() {
            let response = HTTPResponseInfo(url: Self.url, statusCode: 200, headers: [
                HTTPHeaderField(name: "expires", value: HTTPCachePolicyTests.httpDate(60)),
                HTTPHeaderField(name: "Date", value: HTTPCachePolicyTests.httpDate(0)), HTTPHeaderField(name: "AGE", value: "12"),
                HTTPHeaderField(name: "ETag", value: "\"v1\""), HTTPHeaderField(name: "Last-Modified", value: HTTPCachePolicyTests.httpDate(-60)),
                HTTPHeaderField(name: "Content-Type", value: "image/png"),
            ])
            let validators = response.validators
            #expect(validators.expires == HTTPCachePolicyTests.httpDate(60))
            #expect(validators.date == HTTPCachePolicyTests.httpDate(0))
            #expect(validators.age == "12")
            #expect(validators.etag == "\"v1\"" && validators.lastModified == HTTPCachePolicyTests.httpDate(-60))
            #expect(validators.contentType == "image/png")
            #expect(validators.cacheControl == nil && validators.vary == nil && validators.maxAge == nil)
            // The request side is the caller's to stamp.
            #expect(validators.requestTime == nil && validators.responseTime == nil && validators.varyingRequestHeaders.isEmpty)
        }

        @Test func noCacheAndNoStoreGiveALegacyMaxAgeOfZero() {
            for header in ["no-cache, max-age=60", "max-age=60, no-store"] {
                let response = HTTPResponseInfo(url: Self.url, statusCode: 200, headers: [HTTPHeaderField(name: "Cache-Control", value: header)])
                #expect(response.validators.maxAge == 0, "\(header)")
            }
        }

        @Test func combinedValueJoinsEveryLineInOrderAndIsNilWhenAbsent() {
            let response = HTTPResponseInfo(url: Self.url, statusCode: 200, headers: [
                HTTPHeaderField(name: "X-A", value: "1"), HTTPHeaderField(name: "Other", value: "z"),
                HTTPHeaderField(name: "x-a", value: "2, 3"),
            ])
            #expect(response.combinedValue(of: "X-a") == "1, 2, 3")
            #expect(response.combinedValue(of: "Other") == "z")
            #expect(response.combinedValue(of: "Missing") == nil)
            #expect(response[header: "x-A"] == "1")
        }
    }
}
