#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An image file opened for decoding, read on demand: a coder that reads as it decodes (``JPEGCoder``) never holds
/// the whole file, and the others read it whole (``readAll()``).
///
/// The descriptor stays open while the value lives. Reads do not move a file position, so several threads may read
/// one file at once.
public final class ImageFile: Sendable {
    /// The path the file was opened at.
    public let path: String
    /// The file's size in bytes when it was opened.
    public let size: Int
    /// The first bytes of the file (all of it when it is smaller than 64 KiB): enough to tell the format and, for
    /// most files, to read the header.
    public let leadingBytes: Data
    /// The open descriptor (read-only); valid while this value lives.
    public let descriptor: Int32

    /// How many bytes ``leadingBytes`` holds at most.
    public static let leadingByteCount = 64 * 1024

    /// Opens the regular file at `path`.
    ///
    /// - Parameter path: A file system path.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` with
    ///   ``MagpieError/DecodingFailureReason/unreadableFile(path:message:)`` when the file is missing, unreadable,
    ///   or not a regular file (a directory, a FIFO or a device, which could block or never end).
    public init(path: String) throws {
        // Non-blocking, so that opening a FIFO returns (and is refused below) instead of waiting for a writer; reads
        // of a regular file ignore the flag.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw Self.failure(path, LocalFileSystem.errorText(errno)) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let message = LocalFileSystem.errorText(errno)
            close(fd)
            throw Self.failure(path, message)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw Self.failure(path, info.st_mode & S_IFMT == S_IFDIR ? "it is a directory" : "not a regular file")
        }
        self.path = path
        self.descriptor = fd
        self.size = Int(info.st_size)
        do {
            self.leadingBytes = try Self.read(fd, path: path, offset: 0, count: min(size, Self.leadingByteCount))
        } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(descriptor) }

    /// Up to `count` bytes from `offset`; fewer only where the file ends.
    ///
    /// - Throws: ``MagpieError/DecodingFailureReason/unreadableFile(path:message:)`` when the read fails.
    public func read(offset: Int, count: Int) throws -> Data {
        try Self.read(descriptor, path: path, offset: offset, count: count)
    }

    /// The whole file as it is now (it may have changed since it was opened).
    ///
    /// - Throws: ``MagpieError/DecodingFailureReason/unreadableFile(path:message:)`` when the read fails.
    public func readAll() throws -> Data {
        // A small file is all in the leading bytes, unless it grew since.
        if leadingBytes.count < Self.leadingByteCount, try read(offset: leadingBytes.count, count: 1).isEmpty {
            return leadingBytes
        }
        return try Self.readToEnd(descriptor, path: path)
    }

    private static func readToEnd(_ fd: Int32, path: String) throws -> Data {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure(path, LocalFileSystem.errorText(errno)) }
        var data = try read(fd, path: path, offset: 0, count: Int(info.st_size))
        // A file that grew after the size was taken is read to its end.
        while true {
            let more = try read(fd, path: path, offset: data.count, count: leadingByteCount)
            if more.isEmpty { return data }
            data.append(more)
        }
    }

    private static func read(_ fd: Int32, path: String, offset: Int, count: Int) throws -> Data {
        try LocalFileSystem.read(fd, path: path, offset: offset, count: count).mapError { failure(path, $0.message) }.get()
    }

    private static func failure(_ path: String, _ message: String) -> MagpieError {
        .decodingFailed(reason: .unreadableFile(path: path, message: message))
    }
}
