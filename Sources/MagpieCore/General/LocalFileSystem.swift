import CImageCodecs
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

/// A failed file system call: what was tried, on which path, and why. Neutral on purpose: the folders these calls
/// serve belong to different layers (the disk cache's entries and temporary files, the downloader's spool, local
/// files read as sources), and each caller turns the failure into its own layer's error — the cache into
/// ``MagpieError/cacheFailed(reason:)``, the downloader's spool into a request failure.
package struct FileSystemError: Error, Equatable, Sendable {
    /// What the failed call was doing.
    package enum Operation: Sendable, Equatable {
        /// Creating a folder (or finding it unwritable).
        case createDirectory
        /// Opening, inspecting, reading or mapping a file.
        case read
        /// Creating, writing, truncating or renaming a file.
        case write
    }

    /// What the failed call was doing.
    package let operation: Operation
    /// The path it was working on.
    package let path: String
    /// The `errno` it failed with; 0 when the failure did not come from a system call.
    package let code: Int32
    /// What went wrong, for people: `strerror`'s text for `code`, or the other failure's description.
    package let message: String

    /// A system call's failure.
    ///
    /// - Parameters:
    ///   - operation: What the call was doing.
    ///   - path: The path it was working on.
    ///   - code: Its `errno`.
    package init(_ operation: Operation, path: String, code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
        message = LocalFileSystem.errorText(code)
    }

    /// A failure that has no `errno` (Foundation's, say).
    ///
    /// - Parameters:
    ///   - operation: What was being done.
    ///   - path: The path it was working on.
    ///   - message: What went wrong.
    package init(_ operation: Operation, path: String, message: String) {
        self.operation = operation
        self.path = path
        self.code = 0
        self.message = message
    }

    /// ENOSPC or EDQUOT: the disk (or the user's quota) is full.
    package var isDiskFull: Bool { code == ENOSPC || code == EDQUOT }
}

/// The POSIX calls behind Magpie's own files — the disk cache's entries and temporary files, the downloader's spool,
/// local files read as sources — with `errno` kept in a ``FileSystemError`` that each caller maps to its layer's error.
/// Plain syscalls rather than FileManager: exclusive creation, optional fsync, and ENOSPC/EACCES must be told apart.
package enum LocalFileSystem {
    /// `strerror`'s text for `code`.
    package static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// `strerror`'s text for ENOENT, for callers that find a file gone without a failed call of their own.
    static var notFoundText: String { errorText(ENOENT) }

    /// Creates `path` and missing parents.
    ///
    /// - Throws: A ``FileSystemError/Operation/createDirectory`` failure when a folder cannot be made or the last one
    ///   is not writable.
    package static func createDirectory(_ path: String) throws(FileSystemError) {
        var current = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            current += "/" + component
            if mkdir(current, 0o755) != 0 && errno != EEXIST {
                throw FileSystemError(.createDirectory, path: path, code: errno)
            }
        }
        guard access(path, W_OK) == 0 else { throw FileSystemError(.createDirectory, path: path, code: errno) }
    }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// The size in bytes of the file system holding `path`, or of its nearest existing ancestor; nil when
    /// none can be measured.
    static func fileSystemCapacity(containing path: String) -> Int? {
        var candidate = path.isEmpty ? "/" : path
        while true {
            var info = statvfs()
            if statvfs(candidate, &info) == 0 {
                let bytes = UInt64(info.f_blocks) &* UInt64(info.f_frsize)
                return bytes > UInt64(Int.max) ? Int.max : Int(bytes)
            }
            guard candidate != "/", let slash = candidate.lastIndex(of: "/") else { return nil }
            candidate = slash == candidate.startIndex ? "/" : String(candidate[..<slash])
        }
    }

    /// What is at a path, as `stat` says.
    enum FileKind: Equatable {
        case regular(size: Int)
        case directory
        /// A FIFO, device, socket: reading it could block or never end.
        case other
    }

    /// What is at `path` (links followed), or the failed `stat`.
    static func kind(of path: String) -> Result<FileKind, FileSystemError> {
        var info = stat()
        guard stat(path, &info) == 0 else { return .failure(FileSystemError(.read, path: path, code: errno)) }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .success(.regular(size: Int(info.st_size)))
        case S_IFDIR: return .success(.directory)
        default: return .success(.other)
        }
    }

    /// Writes `data` to a new file at `path` (which must not exist), optionally fsyncing it.
    static func writeNewFile(_ path: String, _ data: Data, sync: Bool) throws(FileSystemError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileSystemError(.write, path: path, code: errno) }
        var failure = data.withUnsafeBytes { writeAll(fd, $0) }
        if failure == 0 && sync && fsync(fd) != 0 { failure = errno }
        if close(fd) != 0 && failure == 0 { failure = errno }
        if failure != 0 {
            unlink(path)
            throw FileSystemError(.write, path: path, code: failure)
        }
    }

    /// Writes all of `bytes` at `fd`'s offset, retrying short and interrupted writes; the errno of a failure, else 0.
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return 0
    }

    /// The whole file, or nil when it does not exist.
    static func read(_ path: String) throws(FileSystemError) -> Data? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw FileSystemError(.read, path: path, code: code)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileSystemError(.read, path: path, code: errno) }
        return try read(fd, path: path, offset: 0, count: Int(info.st_size)).get()
    }

    /// Up to `count` bytes of `fd` (open on `path`) from `offset` (fewer only where the file ends), read with pread
    /// (no file position moves, so threads may share `fd`), or the failed read.
    static func read(_ fd: Int32, path: String, offset: Int, count: Int) -> Result<Data, FileSystemError> {
        guard count > 0 else { return .success(Data()) }
        // Not `Data(count:)`: zeroing the buffer before reading over it was 5 % of a disk read (perf).
        guard let buffer = malloc(count) else { return .failure(FileSystemError(.read, path: path, code: ENOMEM)) }
        var done = 0
        while done < count {
            let got = pread(fd, buffer + done, count - done, off_t(offset + done))
            if got < 0 {
                let code = errno
                if code == EINTR { continue }
                free(buffer)
                return .failure(FileSystemError(.read, path: path, code: code))
            }
            if got == 0 { break }
            done += got
        }
        guard done > 0 else {
            free(buffer)
            return .success(Data())
        }
        return .success(Data(bytesNoCopy: buffer, count: done, deallocator: .free))
    }

    /// Atomically replaces `destination` with `source`.
    static func rename(_ source: String, _ destination: String) throws(FileSystemError) {
        guard Glibc.rename(source, destination) == 0 else { throw FileSystemError(.write, path: destination, code: errno) }
    }

    static func remove(_ path: String) { unlink(path) }

    /// When the file at `path` was last modified; nil when it cannot be read.
    static func modificationDate(_ path: String) -> Date? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec))
    }

    /// File names in `directory` (not recursive); empty when it cannot be read.
    static func contents(of directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// CRC-32 of `data` (zlib's implementation).
    static func checksum(_ data: Data) -> UInt32 {
        data.withUnsafeBytes { mg_crc32(0, $0.bindMemory(to: UInt8.self).baseAddress, $0.count) }
    }

    /// A process- and call-unique temporary file name.
    static func temporaryName() -> String {
        "\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
    }
}
