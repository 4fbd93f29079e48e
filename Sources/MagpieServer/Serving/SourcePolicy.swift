import Magpie
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Which sources the server reads: remote URLs under the allowed prefixes (the network guard then checks where
/// each connection goes), local files only inside the local root, never through a symbolic link that leads out.
struct SourcePolicy: Sendable {
    let allowedPrefixes: [String]
    /// The local root, resolved (no symbolic links, no trailing slash); nil refuses local sources.
    let localRoot: String?

    init(allowedPrefixes: [String], localRoot: String?) {
        self.allowedPrefixes = allowedPrefixes
        self.localRoot = localRoot.flatMap(Self.resolved)
    }

    /// Whether `source` passes the rules, without making its pipeline source (the memory-hit path's check).
    func allows(_ source: ServeSource) -> Bool {
        switch source {
        case .remote(let url):
            return allowsRemote(url)
        case .local:
            // Resolved again on every request: a link changed since the result was made is refused now.
            return (try? pipelineSource(for: source, maximumBytes: 1)) != nil
        }
    }

    /// The pipeline source for `source`, or a 403 naming the rule that refused it (not what answered where).
    func pipelineSource(for source: ServeSource, maximumBytes: Int) throws(ServerFailure) -> Source {
        switch source {
        case .remote(let url):
            guard allowsRemote(url) else {
                throw ServerFailure(status: 403, message: "source not allowed", reason: "outside the --allow-source prefixes")
            }
            return .network(ImageResource(downloadURL: url))
        case .local(let path):
            guard let root = localRoot else {
                throw ServerFailure(status: 403, message: "local sources are not enabled", reason: "no --local-root")
            }
            let joined = root + "/" + path.drop(while: { $0 == "/" })
            // Resolving follows every symbolic link: whatever the path spells, the file read is the one checked.
            guard let real = Self.resolved(joined) else {
                throw ServerFailure(status: 404, message: "source not found", reason: "no file \(joined)")
            }
            guard real.hasPrefix(root + "/") else {
                throw ServerFailure(status: 403, message: "source not allowed", reason: "\(joined) resolves to \(real), outside the local root")
            }
            let file = URL(fileURLWithPath: real)
            return .provider(LocalFileImageDataProvider(fileURL: file, cacheKey: "local:" + real, maximumSize: maximumBytes))
        }
    }

    /// Whether `url` starts with one of the `--allow-source` prefixes (any URL when none was given).
    private func allowsRemote(_ url: URL) -> Bool {
        allowedPrefixes.isEmpty || allowedPrefixes.contains(where: url.absoluteString.hasPrefix)
    }

    /// `path` with every symbolic link, `.` and `..` resolved; nil when it does not exist.
    static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        let text = String(cString: pointer)
        return text.count > 1 && text.hasSuffix("/") ? String(text.dropLast()) : text
    }
}
