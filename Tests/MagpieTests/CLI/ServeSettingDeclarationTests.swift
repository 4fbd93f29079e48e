import Foundation
import Testing

@testable import magpie

/// `magpie serve`'s settings are declared once (``ServeSetting/all``): flags, variables, file keys, `--help` and
/// DEPLOYMENT.md's table come from the declarations.
struct ServeSettingDeclarationTests {
    static let deployment = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/DEPLOYMENT.md")

    /// Set to rewrite the table in DEPLOYMENT.md from the declarations instead of comparing.
    static let updateVariable = "MAGPIE_UPDATE_DOCS"

    @Test func deploymentsTableIsTheDeclarationsTable() throws {
        var text = try String(contentsOf: Self.deployment, encoding: .utf8)
        let begin = try #require(text.range(of: "<!-- settings:begin -->\n"))
        let end = try #require(text.range(of: "<!-- settings:end -->", range: begin.upperBound..<text.endIndex))
        let written = String(text[begin.upperBound..<end.lowerBound])
        if ProcessInfo.processInfo.environment[Self.updateVariable] == "1", written != ServeSetting.markdownTable {
            text.replaceSubrange(begin.upperBound..<end.lowerBound, with: ServeSetting.markdownTable)
            try text.write(to: Self.deployment, atomically: true, encoding: .utf8)
            return
        }
        #expect(written == ServeSetting.markdownTable, """
            docs/DEPLOYMENT.md's settings table drifted from ServeSetting.all; rewrite it with \
            \(Self.updateVariable)=1 swift test --enable-all-traits --skip-build --filter ServeSettingDeclarationTests
            """)
    }

    @Test func helpListsEverySettingWithItsVariable() {
        let help = MagpieCommand.helpMessage(for: ServeCommand.self, columns: 80)
        for setting in ServeSetting.all {
            #expect(help.contains("--\(setting.flag)") && help.contains("[\(setting.environmentName)]"), "\(setting.key)")
        }
    }

    @Test func namesAreUniqueAndFollowTheKey() {
        let all = ServeSetting.all
        #expect(Set(all.map(\.key)).count == all.count)
        #expect(Set(all.map(\.flag)).count == all.count)
        #expect(Set(all.map(\.environmentName)).count == all.count)
        #expect(ServeSetting.named("maxSourceBytes")?.flag == "max-source-bytes")
        #expect(ServeSetting.named("maxSourceBytes")?.environmentName == "MAGPIE_MAX_SOURCE_BYTES")
        #expect(ServeSetting.named("etag")?.flag == "no-etag")
    }

    @Test func flagsTakeValuesSpacedOrAfterAnEqualsSignAndListsRepeat() throws {
        let flags = try ServeSetting.parseFlags([
            "--port", "-1", "--max-pixels=10", "--allow-source", "a", "--allow-source=b", "--dev", "--workers", "2", "--workers", "3",
        ])
        #expect(flags["port"] == ["-1"] && flags["maxPixels"] == ["10"] && flags["allowSource"] == ["a", "b"])
        #expect(flags["dev"] == ["true"] && flags["workers"] == ["2", "3"])
    }

    @Test(arguments: [
        (["--max-pixel", "3"], "unknown option --max-pixel (did you mean --max-pixels?)"),
        (["--port"], "--port needs a value"),
        (["--dev=1"], "--dev takes no value"),
        (["photo.jpg"], "unexpected argument \"photo.jpg\""),
    ])
    func aBadFlagIsNamed(arguments: [String], message: String) {
        #expect {
            _ = try ServeSetting.parseFlags(arguments)
        } throws: { error in
            (error as? ServeSettings.Invalid)?.message.hasPrefix(message) == true
        }
    }

    @Test func everyLayerReachesTheSameSettingAndTheFlagWins() async throws {
        let flagged = try await ServeSettings(
            flags: ServeSetting.parseFlags(["--workers", "3", "--no-etag"]), configPath: nil,
            environment: ["MAGPIE_WORKERS": "5", "MAGPIE_MAX_FRAMES": "7", "IMGPROXY_TTL": "60"])
        #expect(flagged.server.workers == 3 && flagged.origins["workers"] == "flag --workers")
        #expect(flagged.server.maximumFrames == 7 && flagged.origins["maxFrames"] == "MAGPIE_MAX_FRAMES")
        #expect(flagged.server.maxAge == .seconds(60) && flagged.origins["maxAge"] == "IMGPROXY_TTL")
        #expect(!flagged.server.sendsETag)
        #expect(flagged.printedConfiguration().contains("workers               3  (flag --workers)"))
    }
}
