/// Turns a host name into addresses for a ``NetworkAccessPolicy``: the addresses it checks, and the one the connection
/// then goes to. Implement it to use another resolver, or to script answers in tests.
public protocol HostResolving: Sendable {
    /// The addresses of `host`, most preferred first; empty when the name does not exist.
    ///
    /// - Parameters:
    ///   - host: A host name as the URL has it (never an IP literal: those are not resolved).
    ///   - port: The port the connection will use.
    /// - Throws: When the lookup itself fails (no DNS server answered, say); the download then fails as a
    ///   connection failure.
    func addresses(for host: String, port: Int) async throws -> [IPAddress]
}
