import Foundation
import NIOCore
import NIOPosix

/// One TCP connection that sends bytes exactly as given (pipelined requests, odd headers) and reads HTTP/1.1
/// responses back in order: what an HTTP client library would tidy away.
enum RawHTTPConnection {
    /// A response as it came off the wire.
    struct Response: Sendable {
        let status: Int
        /// Header names lowercased, in order.
        let headers: [(name: String, value: String)]
        let body: Data

        func header(_ name: String) -> String? {
            headers.first { $0.name == name.lowercased() }?.value
        }
    }

    /// Sends `requests` in one write, then reads one response per entry of `bodyless` (true where the request was
    /// `HEAD`, whose response has a length but no body), and says whether the server closed the connection after.
    static func exchange(port: Int, requests: String, bodyless: [Bool]) async throws -> (responses: [Response], closed: Bool) {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let underlying = channel.channel
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: requests))
            var received = Data()
            var responses: [Response] = []
            var iterator = inbound.makeAsyncIterator()
            while responses.count < bodyless.count {
                if let (response, used) = try parse(received, bodyless: bodyless[responses.count]) {
                    responses.append(response)
                    received.removeFirst(used)
                    continue
                }
                guard let chunk = try await iterator.next() else { throw RawHTTPError.closedEarly(responses.count) }
                received.append(contentsOf: chunk.readableBytesView)
            }
            guard received.isEmpty else { throw RawHTTPError.unexpectedBytes(received.count) }
            // A server that closes does so at once; half a second later the channel has seen the end or not.
            try await Task.sleep(for: .milliseconds(500))
            let closed = !underlying.isActive
            return (responses, closed)
        }
    }

    /// Sends `text` and reads whatever comes back until the server closes the connection (or 60 s pass).
    static func readUntilClosed(port: Int, sending text: String) async throws -> String {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: text))
            return try await withThrowingTaskGroup(of: String?.self) { group in
                group.addTask {
                    var received = ""
                    for try await chunk in inbound { received += String(buffer: chunk) }
                    return received
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(60))
                    return nil
                }
                let first = try await group.next() ?? nil
                group.cancelAll()
                return first ?? "<not closed within 60 s>"
            }
        }
    }

    /// The first complete response in `bytes` and how many bytes it used, or nil when more are needed.
    private static func parse(_ bytes: Data, bodyless: Bool) throws -> (Response, Int)? {
        guard let end = bytes.range(of: Data("\r\n\r\n".utf8)) else { return nil }
        let lines = String(decoding: bytes[bytes.startIndex..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw RawHTTPError.badStatusLine(lines[0]) }
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let declared = headers.first { $0.name == "content-length" }.flatMap { Int($0.value) } ?? 0
        let length = bodyless || status == 304 ? 0 : declared
        let bodyStart = end.upperBound
        guard bytes.distance(from: bodyStart, to: bytes.endIndex) >= length else { return nil }
        let body = Data(bytes[bodyStart..<bytes.index(bodyStart, offsetBy: length)])
        return (Response(status: status, headers: headers, body: body), bytes.distance(from: bytes.startIndex, to: bodyStart) + length)
    }
}

enum RawHTTPError: Error {
    case closedEarly(Int)
    case unexpectedBytes(Int)
    case badStatusLine(String)
}
