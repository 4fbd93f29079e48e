import Foundation

/// The signing keys of `magpie serve --key-file PATH`: one `KEY:SALT` pair in hex per line (the first signs, all
/// verify; blank lines and `#` comments are skipped). The file must be readable by its owner only, as ssh insists for
/// private keys: keys on the command line are visible to every local user in `ps`, and so is a world-readable file.
enum SigningKeyFile {
    /// Why a key file cannot be used; the message names the file, never a key.
    struct Unusable: Error {
        let message: String
    }

    /// The pairs in the file at `path`.
    static func read(_ path: String) throws(Unusable) -> [(key: String, salt: String)] {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw Unusable(message: "cannot read the key file \(path): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & 0o077 == 0 else {
            let mode = String(status.st_mode & 0o777, radix: 8)
            throw Unusable(message: "the key file \(path) can be read by other users (mode \(mode)); chmod 600 it")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Unusable(message: "cannot read the key file \(path)")
        }
        var pairs: [(key: String, salt: String)] = []
        for (index, rawLine) in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty else {
                throw Unusable(message: "line \(index + 1) of the key file \(path) is not KEY:SALT in hex")
            }
            pairs.append((String(parts[0]), String(parts[1])))
        }
        guard !pairs.isEmpty else { throw Unusable(message: "the key file \(path) holds no KEY:SALT line") }
        return pairs
    }
}
