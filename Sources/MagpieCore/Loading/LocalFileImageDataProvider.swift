#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An image in a local file, cached under the file URL's string.
public struct LocalFileImageDataProvider: ImageDataProvider {
    /// 50 MiB (52,428,800 bytes): well above any real image file, low enough that a wrong path (a disk image,
    /// a log) fails fast instead of being read into memory.
    public static let defaultMaximumSize = 50 * 1024 * 1024

    /// The file to read.
    public let fileURL: URL
    /// The key of the image in the caches.
    public let cacheKey: String
    /// Files larger than this many bytes are refused without being read. Default ``defaultMaximumSize``.
    public let maximumSize: Int

    /// A provider for `fileURL`, cached under `cacheKey` or, when nil, under `fileURL.absoluteString`.
    ///
    /// Nothing is checked here; a missing file only fails when ``data()`` is called.
    /// - Parameters:
    ///   - fileURL: A `file:` URL.
    ///   - cacheKey: The key in the caches; nil (the default) for the URL's absolute string.
    ///   - maximumSize: Largest file to read, in bytes.
    public init(fileURL: URL, cacheKey: String? = nil, maximumSize: Int = LocalFileImageDataProvider.defaultMaximumSize) {
        self.fileURL = fileURL
        self.cacheKey = cacheKey ?? fileURL.absoluteString
        self.maximumSize = maximumSize
    }

    /// ``fileURL``.
    public var contentURL: URL? { fileURL }

    /// The file's bytes.
    ///
    /// - Throws: ``MagpieError/requestFailed(reason:)`` with
    ///   ``MagpieError/RequestFailureReason/dataProviderFailed(cacheKey:message:)`` naming the path when the URL
    ///   is not a `file:` URL or the file is missing, unreadable, a directory or other non-regular file, or
    ///   larger than ``maximumSize``.
    public func data() async throws -> Data {
        guard fileURL.isFileURL else { throw failure("\(fileURL.absoluteString) is not a file URL") }
        let path = fileURL.path(percentEncoded: false)
        switch LocalFileSystem.kind(of: path) {
        case .failure(let error): throw failure("cannot read \(path): \(error.message)")
        case .success(.directory): throw failure("cannot read \(path): it is a directory")
        // FIFOs and devices could block or never end.
        case .success(.other): throw failure("cannot read \(path): not a regular file")
        case .success(.regular(let size)): try checkSize(size, path)
        }
        let read: Data?
        do {
            read = try LocalFileSystem.read(path)
        } catch {
            throw failure("cannot read \(path): \(error.message)")
        }
        // Gone between stat and read.
        guard let data = read else { throw failure("cannot read \(path): \(LocalFileSystem.notFoundText)") }
        // The file may have grown between stat and read.
        try checkSize(data.count, path)
        return data
    }

    private func checkSize(_ size: Int, _ path: String) throws {
        if size > maximumSize {
            throw failure("\(path) is \(size) bytes, more than the maximum of \(maximumSize)")
        }
    }

    private func failure(_ message: String) -> MagpieError {
        .requestFailed(reason: .dataProviderFailed(cacheKey: cacheKey, message: message))
    }
}
