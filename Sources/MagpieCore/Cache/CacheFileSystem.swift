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

/// The POSIX calls DiskStorage needs, with errno turned into `MagpieError.cacheFailed`.
/// Plain syscalls rather than FileManager: exclusive creation, optional fsync, and
/// ENOSPC/EACCES must be told apart.
package enum CacheFileSystem {
    static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }

    static func isDiskFull(_ code: Int32) -> Bool { code == ENOSPC || code == EDQUOT }

    /// Creates `path` and missing parents.
    package static func createDirectory(_ path: String) throws {
        var current = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            current += "/" + component
            if mkdir(current, 0o755) != 0 && errno != EEXIST {
                let code = errno
                throw MagpieError.cacheFailed(reason: .cannotCreateDirectory(path: path, message: errorText(code)))
            }
        }
        guard access(path, W_OK) == 0 else {
            let code = errno
            throw MagpieError.cacheFailed(reason: .cannotCreateDirectory(path: path, message: errorText(code)))
        }
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

    /// What is at `path` (links followed), or the `errno` of the failed `stat`.
    static func kind(of path: String) -> Result<FileKind, FileError> {
        var info = stat()
        guard stat(path, &info) == 0 else { return .failure(FileError(code: errno)) }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .success(.regular(size: Int(info.st_size)))
        case S_IFDIR: return .success(.directory)
        default: return .success(.other)
        }
    }

    /// A failed system call's `errno`, with its text.
    struct FileError: Error, Equatable {
        let code: Int32
        var text: String { CacheFileSystem.errorText(code) }
        /// No such file or directory.
        static let notFound = FileError(code: ENOENT)
    }

    /// Writes `data` to a new file at `path` (which must not exist), optionally fsyncing it.
    static func writeNewFile(_ path: String, _ data: Data, sync: Bool) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw writeError(path, errno) }
        var failure = data.withUnsafeBytes { writeAll(fd, $0) }
        if failure == 0 && sync && fsync(fd) != 0 { failure = errno }
        if close(fd) != 0 && failure == 0 { failure = errno }
        if failure != 0 {
            unlink(path)
            throw writeError(path, failure)
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

    /// A write failure of `path`, disk full told apart.
    package static func writeError(_ path: String, _ code: Int32) -> MagpieError {
        .cacheFailed(reason: .cannotWrite(path: path, message: errorText(code), diskFull: isDiskFull(code)))
    }

    /// The whole file, or nil when it does not exist.
    static func read(_ path: String) throws -> Data? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw MagpieError.cacheFailed(reason: .cannotRead(path: path, message: errorText(code)))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw MagpieError.cacheFailed(reason: .cannotRead(path: path, message: errorText(errno)))
        }
        switch read(fd, offset: 0, count: Int(info.st_size)) {
        case .success(let data): return data
        case .failure(let error): throw MagpieError.cacheFailed(reason: .cannotRead(path: path, message: error.text))
        }
    }

    /// Up to `count` bytes of `fd` from `offset` (fewer only where the file ends), read with pread (no file position
    /// moves, so threads may share `fd`), or the `errno` of the failed read.
    static func read(_ fd: Int32, offset: Int, count: Int) -> Result<Data, FileError> {
        guard count > 0 else { return .success(Data()) }
        // Not `Data(count:)`: zeroing the buffer before reading over it was 5 % of a disk read (perf).
        guard let buffer = malloc(count) else { return .failure(FileError(code: ENOMEM)) }
        var done = 0
        while done < count {
            let got = pread(fd, buffer + done, count - done, off_t(offset + done))
            if got < 0 {
                let code = errno
                if code == EINTR { continue }
                free(buffer)
                return .failure(FileError(code: code))
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
    static func rename(_ source: String, _ destination: String) throws {
        guard Glibc.rename(source, destination) == 0 else {
            let code = errno
            throw MagpieError.cacheFailed(reason: .cannotWrite(
                path: destination, message: errorText(code), diskFull: isDiskFull(code)))
        }
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
