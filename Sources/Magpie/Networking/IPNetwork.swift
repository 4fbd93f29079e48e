/// An IPv4 or IPv6 network in CIDR notation, such as `10.0.0.0/8` or `fd00::/8`.
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The first address of the network (no bits set past the prefix).
    public let address: IPAddress
    /// How many leading bits are fixed: 0...32 for IPv4, 0...128 for IPv6.
    public let prefixLength: Int

    /// A network from its first address and prefix length; nil when the length is out of range or `address` has bits
    /// set past the prefix (`10.0.0.1/8`: a typo as often as not).
    public init?(address: IPAddress, prefixLength: Int) {
        let width = address.family == .v4 ? 32 : 128
        guard (0...width).contains(prefixLength) else { return nil }
        self.address = address
        self.prefixLength = prefixLength
        guard address.value & ~mask == 0 else { return nil }
    }

    /// Parses `ADDRESS/LENGTH` (`10.0.0.0/8`, `::1/128`, `fd00::/8`), or a bare address meaning `/32` or `/128`.
    /// The length is decimal without sign or leading zeros; host bits must be zero (`10.0.0.1/8` gives nil).
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(String(parts[0])) else { return nil }
        guard parts.count == 2 else {
            self.init(address: address, prefixLength: address.family == .v4 ? 32 : 128)
            return
        }
        let digits = parts[1].utf8
        guard (1...3).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }),
            digits.count == 1 || digits.first != 0x30, let length = Int(parts[1])
        else { return nil }
        self.init(address: address, prefixLength: length)
    }

    /// Whether `candidate` is in the network. An IPv4 network also contains the IPv4-mapped IPv6 form of its
    /// addresses (`::ffff:127.0.0.1` is in `127.0.0.0/8`): a socket sends both to the same place.
    public func contains(_ candidate: IPAddress) -> Bool {
        var candidate = candidate
        if address.family == .v4, candidate.family == .v6, candidate.value >> 32 == 0xFFFF {
            candidate = IPAddress(ipv4: UInt32(truncatingIfNeeded: candidate.value))
        }
        return candidate.family == address.family && candidate.value & mask == address.value
    }

    /// `ADDRESS/LENGTH`, e.g. `10.0.0.0/8`.
    public var description: String { "\(address)/\(prefixLength)" }

    /// The prefix's bits set, within the family's width.
    private var mask: UInt128 {
        let width = address.family == .v4 ? 32 : 128
        guard prefixLength > 0 else { return 0 }
        let ones = UInt128.max << (128 - prefixLength)
        return ones >> (128 - width)
    }
}
