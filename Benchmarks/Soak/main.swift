// magpie-soak: the hostile-input soak. Runs the real `magpie prefetch` (built next to this executable) over
// and over against MagpieOrigin, on batches that mix valid images with every misbehaviour the origin has,
// and checks that every URL ends in success or a typed error, nothing hangs, memory stays bounded and the
// cache holds only intact entries afterwards.
//
//   magpie-soak [--seconds N] [--magpie PATH] [--work DIR] [--keep] [--rss-limit-mb N] [--rss-per-url-kib N]
//               [--kinds NAME,...] [--processor SPEC]
//   magpie-soak --self-test    (the checkers against made-up output, right and broken)
//
// Progress goes to stderr; a Markdown section (### Hostile-input soak) to stdout. Exit status 0 when every
// check passed, 1 when any failed (each violation is listed), 2 when the soak itself could not run.
import Foundation
import Magpie
import MagpieOrigin

#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
func log(_ text: String) { FileHandle.standardError.write(Data(("soak: " + text + "\n").utf8)) }

let seconds = max(10, option("--seconds").flatMap(Int.init) ?? 120)
let ownFolder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
let magpie = option("--magpie") ?? ownFolder.appendingPathComponent("magpie").path
/// A folder of its own below `--work` (default the temporary directory), removed at the end unless `--keep`.
let workDir = (option("--work") ?? FileManager.default.temporaryDirectory.path) + "/magpie-soak-\(getpid())"
// Generous: 32 bodies at the 50 MB response limit at once, plus decoding, fit below it.
let rssLimit = (option("--rss-limit-mb").flatMap(Int.init) ?? 2048) * 1_048_576
/// Peak RSS a run may add per URL of its batch: what one run keeps per URL, not per download in flight.
let rssPerURLLimit = option("--rss-per-url-kib").flatMap(Double.init) ?? 128
/// `--kinds image,stall` runs only those kinds (to reproduce a finding); default all.
let kinds = option("--kinds").map { list in SoakKind.all.filter { list.split(separator: ",").contains(Substring($0.name)) } } ?? SoakKind.all
let cacheRoot = workDir + "/cache"
let temporaryFolder = cacheRoot + "/default/tmp"
/// `--processor SPEC` replaces the chain (to tell apart what memory the thumbnails take); default resize:256x256:fit.
let processor = option("--processor") ?? "resize:256x256:fit"
let prefetchArguments = ["--cache-dir", cacheRoot, "prefetch", "--list", "-", "--concurrency", "32", "--timeout", "3",
                         "--processor", processor, "--json"]
/// Each run aims at this long (a fifth of the soak, 8–25 s), so a soak has several and one can be killed mid-way.
let targetRun = Double(min(25, max(8, seconds / 5)))

if arguments.contains("--self-test") {
    let results = SoakSelfTest.run()
    for (name, passed) in results { log("self-test: \(passed ? "ok  " : "FAIL") \(name)") }
    exit(results.allSatisfy(\.1) ? 0 : 1)
}

guard !kinds.isEmpty else {
    log("--kinds names none of: " + SoakKind.all.map(\.name).joined(separator: ", "))
    exit(2)
}
// A child that exits before reading all of its stdin must not take the soak down with it.
signal(SIGPIPE, SIG_IGN)
guard FileManager.default.isExecutableFile(atPath: magpie) else {
    log("no magpie executable at \(magpie) (build it, or pass --magpie PATH)")
    exit(2)
}
try FileManager.default.createDirectory(atPath: cacheRoot, withIntermediateDirectories: true)

log("generating assets")
let origin = try await ImageOrigin.start(assets: try SoakAssets.make())
log("origin at \(origin.baseURL); \(seconds) s, runs of ~\(Int(targetRun)) s, one SIGKILLed mid-way near the middle; cache \(cacheRoot)")

var summary = SoakSummary(seconds: seconds, rssLimit: rssLimit, rssPerURLLimit: rssPerURLLimit)
let soakStarted = ContinuousClock.now
// The first runs calibrate: each scales the batch to the target time, until one takes at least half of it.
// Later batches keep that size, so their peaks compare run over run.
var units = 4
var sized = false
var killDone = false
var round = 0

func temporaryFileCount() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: temporaryFolder).count) ?? 0 }
func elapsed() -> Double { Double((ContinuousClock.now - soakStarted).components.seconds) }

while true {
    let remaining = Double(seconds) - elapsed()
    let timeUp = round > 0 && remaining < targetRun / 2
    // Time is up, but the SIGKILL case has not run yet (the first run took it all): one more run, killed.
    if timeUp && killDone { break }
    round += 1
    let batch = SoakBatch(round: round, units: units, baseURL: origin.baseURL, kinds: kinds)
    // The first full-size run past the middle, or the last one if the soak is about to end without it.
    let middle = sized && elapsed() >= Double(seconds) / 2 - targetRun / 2
    let killing = !killDone && round >= 2 && (middle || timeUp || remaining - targetRun < targetRun / 2)
    let plan = ChildRun.Plan(
        deadline: .seconds(sized ? max(60, 3 * targetRun) : 120),
        killAfterLines: killing ? max(1, batch.urls.count * 2 / 5) : nil, killWhileFilesIn: temporaryFolder)
    log("run \(round): \(batch.urls.count) URLs (\(units) units, \(batch.repeats) repeated lines)"
        + (sized ? "" : ", calibrating") + (killing ? ", to be SIGKILLed mid-way" : ""))
    let input = Data((batch.lines.joined(separator: "\n") + "\n").utf8)
    let result = try await ChildRun.run(magpie, prefetchArguments, stdin: input, plan: plan)
    summary.runs.append(RunRecord(round: round, urls: batch.urls.count, lines: batch.lines.count, calibration: !sized, result: result))
    let took = SoakSummary.seconds(result.duration)
    if summary.temporaryAfterKill != nil && summary.temporaryAfterReopen == nil {
        summary.temporaryAfterReopen = temporaryFileCount()
    }
    if result.killedOnPurpose {
        killDone = true
        summary.temporaryAfterKill = temporaryFileCount()
        summary.killCaughtWrite = result.killedWithFileOpen
        log("run \(round): killed after \(took) s as planned (\(result.killedWithFileOpen ? "while a cache write was in progress" : "no write in progress seen")); "
            + "\(summary.temporaryAfterKill!) temporary file(s) left")
        continue
    }
    if result.hung {
        summary.violations.append("run \(round): HANG: still running after \(took) s, killed by the watchdog")
    } else if let status = result.exitStatus, status != 0 && status != 1 {
        summary.violations.append("run \(round): exit status \(status); stderr ends: \(result.stderrTail.suffix(300))")
    } else if let signal = result.signal {
        summary.violations.append("run \(round): died of signal \(signal); stderr ends: \(result.stderrTail.suffix(300))")
    }
    if result.peakRSS > rssLimit {
        summary.violations.append("run \(round): peak RSS \(SoakSummary.mib(result.peakRSS)) over the \(SoakSummary.mib(rssLimit)) limit")
    }
    let check = SoakChecker.check(result, batch: batch)
    summary.violations += check.violations
    summary.errors += check.errors
    summary.errorsNamingURL += check.errorsNamingURL
    for (kind, tally) in check.tallies {
        summary.tallies[kind, default: KindTally()].merge(tally)
    }
    if !sized && !result.hung {
        let took = max(0.5, Double(result.duration.components.seconds) + Double(result.duration.components.attoseconds) / 1e18)
        // A short run is mostly fixed cost (start-up, the --timeout tail): scaling from it undershoots, so repeat.
        sized = took >= targetRun / 2 || round >= 3
        units = min(400, max(2, Int(Double(units) * targetRun / took)))
    }
    log("run \(round): exit \(result.exitStatus.map { "\($0)" } ?? "signal \(result.signal ?? 0)") in \(took) s, peak RSS \(SoakSummary.mib(result.peakRSS)), "
        + "\(check.violations.count) violation(s)")
}
if let growth = summary.memoryGrowth, growth.kibPerURL > rssPerURLLimit {
    summary.violations.append(
        "peak RSS grows with the batch: \(growth.small.urls) URLs \(SoakSummary.mib(growth.small.result.peakRSS)), "
            + "\(growth.large.urls) URLs \(SoakSummary.mib(growth.large.result.peakRSS)), "
            + String(format: "%.0f", growth.kibPerURL) + " KiB per URL (limit \(Int(rssPerURLLimit)))")
}
if !killDone { summary.violations.append("the deliberate SIGKILL did not happen (soak too short?)") }

log("verifying the cache")
let verifyRun = try await ChildRun.run(
    magpie, ["--cache-dir", cacheRoot, "cache", "verify", "--decode", "--json"], stdin: Data(),
    plan: .init(deadline: .seconds(300), killAfterLines: nil))
summary.verify = VerifyParser.parse(verifyRun, into: &summary.violations)
if summary.temporaryAfterKill != nil && summary.temporaryAfterReopen == nil {
    summary.temporaryAfterReopen = summary.verify.temporaryFiles
}
if let left = summary.temporaryAfterReopen, left > 0 {
    summary.violations.append("\(left) temporary file(s) still in the cache after the next open")
}
summary.wallTime = ContinuousClock.now - soakStarted
await origin.stop()
if !arguments.contains("--keep") { try? FileManager.default.removeItem(atPath: workDir) }

print(summary.markdown(command: "scripts/soak \(seconds)", processor: processor))
for violation in summary.violations.prefix(40) { log("VIOLATION: \(violation)") }
log(summary.passed ? "PASS" : "FAIL: \(summary.violations.count) violation(s)")
exit(summary.passed ? 0 : 1)
