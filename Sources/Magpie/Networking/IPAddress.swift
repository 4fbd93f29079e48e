#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address, parsed strictly, with the kind of network it belongs to (loopback, private, …).
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address family.
    public enum Family: Sendable, Hashable {
        /// 32-bit IPv4.
        case v4
        /// 128-bit IPv6.
        case v6
    }

    /// The kind of network an address belongs to; every kind but ``global`` is internal.
    public enum Classification: String, Sendable, Hashable, CustomStringConvertible {
        /// Routable on the internet.
        case global
        /// `127.0.0.0/8`, `::1`.
        case loopback
        /// `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16`, `fc00::/7` (ULA), `fec0::/10`, `64:ff9b:1::/48`.
        case `private`
        /// `169.254.0.0/16` (cloud metadata services live at 169.254.169.254), `fe80::/10`.
        case linkLocal = "link-local"
        /// `100.64.0.0/10`, the shared address space of carrier-grade NAT.
        case carrierGradeNAT = "CGNAT"
        /// `224.0.0.0/4`, `ff00::/8`.
        case multicast
        /// `0.0.0.0/8`, `::`.
        case unspecified
        /// `255.255.255.255`.
        case broadcast
        /// `240.0.0.0/4` (future use) and `100::/64` (discard-only).
        case reserved

        /// The name used in refusal messages, e.g. `link-local`.
        public var description: String { rawValue }
    }

    /// IPv4 or IPv6.
    public let family: Family
    /// The address as a number; an IPv4 address is in the low 32 bits.
    public let value: UInt128

    /// An IPv4 address from its 32-bit value (`0x7F00_0001` is `127.0.0.1`).
    public init(ipv4 value: UInt32) {
        self.family = .v4
        self.value = UInt128(value)
    }

    /// An IPv6 address from its 128-bit value.
    public init(ipv6 value: UInt128) {
        self.family = .v6
        self.value = value
    }

    /// Parses dotted-quad IPv4 (`192.168.0.1`, no leading zeros, no short forms) or IPv6 text (`::1`,
    /// `::ffff:10.0.0.1`), as `inet_pton` does; brackets, zone IDs (`%eth0`) and anything else give nil.
    public init?(_ text: String) {
        // inet_pton would stop at a NUL and accept what precedes it.
        guard !text.isEmpty, text.utf8.count <= 45, !text.utf8.contains(0) else { return nil }
        var bytes = [UInt8](repeating: 0, count: 16)
        if text.withCString({ inet_pton(AF_INET, $0, &bytes) }) == 1 {
            self.init(ipv4: bytes[0..<4].reduce(0) { $0 << 8 | UInt32($1) })
        } else if text.withCString({ inet_pton(AF_INET6, $0, &bytes) }) == 1 {
            self.init(ipv6: bytes.reduce(0) { $0 << 8 | UInt128($1) })
        } else {
            return nil
        }
    }

    /// The address in network byte order: 4 bytes for IPv4, 16 for IPv6.
    public var bytes: [UInt8] {
        let count = family == .v4 ? 4 : 16
        return (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * (count - 1 - $0))) }
    }

    /// The canonical text (`10.0.0.1`, `::ffff:127.0.0.1`, `fe80::1`), as `inet_ntop` writes it.
    public var description: String {
        var text = [CChar](repeating: 0, count: 64)  // INET6_ADDRSTRLEN is 46
        let source = bytes
        let written = source.withUnsafeBytes { raw in
            inet_ntop(family == .v4 ? AF_INET : AF_INET6, raw.baseAddress, &text, 64)
        }
        guard written != nil else { return "?" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The IPv4 address inside an IPv6 one that carries it, where traffic ends up at that IPv4 address: IPv4-mapped
    /// (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::/96`)
    /// and 6to4 (`2002:AABB:CCDD::/48`). Nil for IPv4 addresses and other IPv6 ones.
    public var embeddedIPv4: IPAddress? {
        guard family == .v6 else { return nil }
        let low32 = IPAddress(ipv4: UInt32(truncatingIfNeeded: value))
        switch value >> 32 {
        case 0, 0xFFFF, 0xFFFF_0000: return value > 1 ? low32 : nil  // compatible, mapped, translated (:: and ::1 are not)
        case 0x0064_FF9B_0000_0000_0000_0000: return low32  // NAT64 well-known prefix
        default: break
        }
        if value >> 112 == 0x2002 { return IPAddress(ipv4: UInt32(truncatingIfNeeded: value >> 80)) }
        return nil
    }

    /// The kind of network the address belongs to. IPv6 forms that carry an IPv4 address (``embeddedIPv4``) are
    /// classified by that address, so `::ffff:127.0.0.1` is loopback.
    public var classification: Classification {
        switch family {
        case .v4: return Self.classify(ipv4: UInt32(truncatingIfNeeded: value))
        case .v6:
            if value == 0 { return .unspecified }
            if value == 1 { return .loopback }
            // Traffic to these forms reaches the IPv4 address (locally, or through a translator or relay): a classic
            // way past a filter that only looks at the IPv6 prefix.
            return embeddedIPv4?.classification ?? Self.classify(ipv6: value)
        }
    }

    /// Whether the address is anything but ``Classification/global``.
    public var isInternal: Bool { classification != .global }

    private static func classify(ipv4 value: UInt32) -> Classification {
        func within(_ base: UInt32, _ length: UInt32) -> Bool { value >> (32 - length) == base >> (32 - length) }
        if value == 0xFFFF_FFFF { return .broadcast }
        if within(0x0000_0000, 8) { return .unspecified }
        if within(0x7F00_0000, 8) { return .loopback }
        if within(0x0A00_0000, 8) || within(0xAC10_0000, 12) || within(0xC0A8_0000, 16) { return .private }
        if within(0xA9FE_0000, 16) { return .linkLocal }
        if within(0x6440_0000, 10) { return .carrierGradeNAT }
        if within(0xE000_0000, 4) { return .multicast }
        if within(0xF000_0000, 4) { return .reserved }
        return .global
    }

    private static func classify(ipv6 value: UInt128) -> Classification {
        func within(_ base: UInt128, _ length: Int) -> Bool { value >> (128 - length) == base >> (128 - length) }
        if within(0xFF00 << 112, 8) { return .multicast }
        if within(0xFE80 << 112, 10) { return .linkLocal }
        if within(0xFC00 << 112, 7) || within(0xFEC0 << 112, 10) || within(0x0064_FF9B_0001 << 80, 48) { return .private }
        if within(0x0100 << 112, 64) { return .reserved }
        return .global
    }
}
