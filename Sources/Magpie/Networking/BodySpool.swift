import MagpieCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A large response body written to a file as it arrives instead of growing in memory, then handed on memory-mapped
/// (the bytes are read from the page cache as the decoder touches them, never copied into a second buffer).
///
/// An exchange cut short (connection lost, timeout, cancelled) keeps what arrived when the response named a validator:
/// the file becomes `NAME.part` with `NAME.json` beside it (URL, `If-Range` value, total length), and the next attempt
/// at the same request claims it and asks for the rest with `Range`/`If-Range`. Files being written are named
/// `PID-RANDOM.part`, so a cleaner can tell a dead writer's leftovers from live ones (``DiskStorage`` does at opening).
final class BodySpool {
    /// What an interrupted body needs to be resumed.
    struct Resumable: Codable, Equatable {
        /// The request's URL (a second check beyond the hashed name).
        var url: String
        /// The response's strong `ETag` or its `Last-Modified`: sent as `If-Range`.
        var validator: String
        /// The whole body's length, when the response said it.
        var total: Int?
    }

    let directory: String
    /// The URL whose body this is: a spool failure is that download's
    /// (``MagpieError/RequestFailureReason/spoolFailed(_:path:message:)``).
    let url: URL
    private(set) var path: String
    private var fd: Int32
    /// Bytes in the file.
    private(set) var size: Int

    private init(directory: String, url: URL, path: String, fd: Int32, size: Int) {
        self.directory = directory
        self.url = url
        self.path = path
        self.fd = fd
        self.size = size
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// The stable name of `request`'s resumable body: a hash of its method and URL.
    static func name(for request: ImageRequest) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in (request.method + " " + request.url.absoluteString).utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return "resume-" + String(hash, radix: 16)
    }

    /// A new, empty spool file in `directory` for the body of `url`.
    ///
    /// - Throws: ``MagpieError/RequestFailureReason/spoolFailed(_:path:message:)`` when the folder or the file cannot
    ///   be made.
    static func create(in directory: String, for url: URL) throws -> BodySpool {
        do {
            try LocalFileSystem.createDirectory(directory)
        } catch {
            throw failure(url, error)
        }
        let path = directory + "/\(getpid())-\(UInt64.random(in: 0...UInt64.max)).part"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure(url, FileSystemError(.write, path: path, code: errno)) }
        return BodySpool(directory: directory, url: url, path: path, fd: fd, size: 0)
    }

    /// A spool file's failure as the download's own: the body could not be kept, whatever the server did.
    static func failure(_ url: URL, _ error: FileSystemError) -> MagpieError {
        .requestFailed(reason: .spoolFailed(url, path: error.path, message: error.message))
    }

    /// The interrupted body of `request` in `directory`, claimed for this exchange (renamed, so no other exchange
    /// appends to it too), with what is needed to resume it; nil when there is none or it does not match.
    static func claimResumable(in directory: String, for request: ImageRequest) -> (spool: BodySpool, resumable: Resumable)? {
        let name = name(for: request)
        let stored = directory + "/" + name + ".part"
        let metadataPath = directory + "/" + name + ".json"
        // Nearly every download has nothing to resume: one access() is far cheaper than Foundation's failed read and
        // the error it builds (3.4 % of a 1,000-download run's client samples).
        guard access(metadataPath, F_OK) == 0, let text = try? Data(contentsOf: URL(fileURLWithPath: metadataPath)),
            let resumable = try? JSONDecoder().decode(Resumable.self, from: text),
            resumable.url == request.url.absoluteString
        else { return nil }
        let claimed = directory + "/\(getpid())-\(UInt64.random(in: 0...UInt64.max)).part"
        guard rename(stored, claimed) == 0 else { return nil }
        unlink(metadataPath)
        let fd = open(claimed, O_WRONLY | O_APPEND | O_CLOEXEC)
        var info = stat()
        guard fd >= 0, fstat(fd, &info) == 0, info.st_size > 0 else {
            if fd >= 0 { close(fd) }
            unlink(claimed)
            return nil
        }
        return (BodySpool(directory: directory, url: request.url, path: claimed, fd: fd, size: Int(info.st_size)), resumable)
    }

    /// Appends `bytes`.
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        let code = LocalFileSystem.writeAll(fd, bytes)
        guard code == 0 else { throw Self.failure(url, FileSystemError(.write, path: path, code: code)) }
        size += bytes.count
    }

    /// Empties the file (the origin answered 200 to a range request: the body starts over).
    func truncate() throws {
        guard ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) == 0 else {
            throw Self.failure(url, FileSystemError(.write, path: path, code: errno))
        }
        size = 0
    }

    /// The whole body, memory-mapped; the file is unlinked (the mapping stays valid until the `Data` goes away).
    func finish() throws -> Data {
        close(fd)
        fd = -1
        defer { unlink(path) }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        } catch {
            throw Self.failure(url, FileSystemError(.read, path: path, message: "cannot map the downloaded body: \(error)"))
        }
    }

    /// Keeps what arrived for the next attempt when `resumable` is given (and something arrived); removes it otherwise.
    func keep(_ resumable: Resumable?, name: String) {
        close(fd)
        fd = -1
        guard let resumable, size > 0, let json = try? JSONEncoder().encode(resumable) else {
            unlink(path)
            return
        }
        let stored = directory + "/" + name + ".part"
        let metadataPath = directory + "/" + name + ".json"
        // Metadata last: a reader that finds it also finds the body (an older body would fail its length check).
        guard rename(path, stored) == 0, (try? json.write(to: URL(fileURLWithPath: metadataPath), options: .atomic)) != nil else {
            unlink(path)
            unlink(stored)
            return
        }
    }

    /// Removes the file.
    func discard() {
        if fd >= 0 { close(fd) }
        fd = -1
        unlink(path)
    }
}
