import Foundation
import Testing
@testable import MagpieCore

#if canImport(Glibc)
import Glibc
#endif

/// The file system calls shared by the cache, the spool and local sources fail with a neutral ``FileSystemError``
/// (operation, path, errno), which each layer maps to its own error.
struct LocalFileSystemTests {
    @Test func aFailedCallSaysWhatItTriedOnWhichPathAndWhy() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let file = folder.url.appendingPathComponent("plain").path
        try LocalFileSystem.writeNewFile(file, Data("x".utf8), sync: false)
        // A folder below a regular file cannot be made: ENOTDIR, whoever runs the test (root included).
        let below = file + "/spool"
        let created = #expect(throws: FileSystemError.self) { try LocalFileSystem.createDirectory(below) }
        #expect(created == FileSystemError(.createDirectory, path: below, code: ENOTDIR))
        #expect(created?.message == String(cString: strerror(ENOTDIR)) && created?.isDiskFull == false)
        let again = #expect(throws: FileSystemError.self) { try LocalFileSystem.writeNewFile(file, Data(), sync: false) }
        #expect(again?.operation == .write && again?.path == file && again?.code == EEXIST)
        #expect(try LocalFileSystem.read(folder.url.appendingPathComponent("missing").path) == nil, "absent is not a failure")
        #expect(try LocalFileSystem.read(file) == Data("x".utf8))
    }

    @Test func theCacheReportsAFileSystemFailureAsItsOwn() {
        let full = FileSystemError(.write, path: "/c/tmp/1-2", code: ENOSPC)
        #expect(full.isDiskFull)
        #expect(MagpieError.CacheFailureReason(full) == .cannotWrite(path: "/c/tmp/1-2", message: full.message, diskFull: true))
        let unreadable = FileSystemError(.read, path: "/c/entries/ab/abc", code: EACCES)
        #expect(MagpieError.CacheFailureReason(unreadable) == .cannotRead(path: "/c/entries/ab/abc", message: unreadable.message))
        let folder = FileSystemError(.createDirectory, path: "/c", code: EROFS)
        #expect(MagpieError.CacheFailureReason(folder) == .cannotCreateDirectory(path: "/c", message: folder.message))
        let mapped = #expect(throws: MagpieError.self) { try DiskStorage.files { () throws(FileSystemError) in throw full } }
        #expect(mapped?.description == "cache failed: cannot write /c/tmp/1-2: \(full.message) (disk full)")
    }
}
