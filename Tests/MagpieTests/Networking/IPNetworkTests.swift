import Testing

@testable import Magpie

@Suite("IPNetwork and IPAddress: strict parsing, CIDR membership, classification")
struct IPNetworkTests {
    @Test func cidrTextParsesInBothFamiliesAndABareAddressIsOneHost() throws {
        let eight = try #require(IPNetwork("10.0.0.0/8"))
        #expect(eight.address == IPAddress("10.0.0.0") && eight.prefixLength == 8)
        #expect(IPNetwork("::1/128")?.prefixLength == 128)
        #expect(IPNetwork("fd00::/8")?.address.family == .v6)
        #expect(IPNetwork("0.0.0.0/0")?.prefixLength == 0)
        #expect(IPNetwork("::/0")?.prefixLength == 0)
        #expect(IPNetwork("192.168.1.10")?.prefixLength == 32)
        #expect(IPNetwork("::1")?.prefixLength == 128)
        #expect(IPNetwork("fd00::/8")?.description == "fd00::/8")
        #expect(IPNetwork("10.1.0.0/16")?.description == "10.1.0.0/16")
    }

    @Test(arguments: [
        "", "/8", "garbage", "10.0.0.0/", "10.0.0.0/33", "::/129", "10.0.0.0/-1", "10.0.0.0/+8", "10.0.0.0/08",
        "10.0.0.0/8/8", "10.0.0.0/ 8", " 10.0.0.0/8", "10.0.0.0/8 ", "10.0.0/8", "10.0.0.0.0/8", "[::1]/128",
        "fe80::1%eth0/64", "10.0.0.1/8", "fd00::1/8", "localhost/8", "10.0.0.0/1000", "10.0.0.0/8\u{0}",
    ])
    func badPrefixesHostBitsAndGarbageAreRejected(text: String) {
        #expect(IPNetwork(text) == nil)
    }

    @Test(arguments: [
        "01.2.3.4", "1.2.3.04", "127.1", "0x7f.0.0.1", "2130706433", "256.0.0.1", "1.2.3", "1.2.3.4.5", "[::1]",
        "fe80::1%eth0", "1::2::3", "::1:", "127.0.0.1\u{0}.evil.example", " ::1", "::ffff:01.2.3.4", "",
    ])
    func addressesAreParsedStrictly(text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test func addressesPrintInCanonicalForm() {
        #expect(IPAddress("10.0.0.1")?.description == "10.0.0.1")
        #expect(IPAddress("0:0:0:0:0:0:0:1")?.description == "::1")
        #expect(IPAddress("::FFFF:7F00:1")?.description == "::ffff:127.0.0.1")
        #expect(IPAddress("FE80:0::1")?.description == "fe80::1")
        #expect(IPAddress("192.168.0.1")?.bytes == [192, 168, 0, 1])
        #expect(IPAddress("::2")?.bytes == [UInt8](repeating: 0, count: 15) + [2])
    }

    @Test func containsChecksTheEdgesOfTheNetwork() throws {
        let twelve = try #require(IPNetwork("172.16.0.0/12"))
        #expect(twelve.contains(IPAddress("172.16.0.0")!))
        #expect(twelve.contains(IPAddress("172.31.255.255")!))
        #expect(!twelve.contains(IPAddress("172.15.255.255")!))
        #expect(!twelve.contains(IPAddress("172.32.0.0")!))
        let host = try #require(IPNetwork("127.0.0.1"))
        #expect(host.contains(IPAddress("127.0.0.1")!))
        #expect(!host.contains(IPAddress("127.0.0.2")!))
        let ula = try #require(IPNetwork("fd00::/8"))
        #expect(ula.contains(IPAddress("fd12:3456::1")!))
        #expect(!ula.contains(IPAddress("fe00::1")!))
        #expect(!ula.contains(IPAddress("10.0.0.1")!))
        let everything = try #require(IPNetwork("0.0.0.0/0"))
        #expect(everything.contains(IPAddress("255.255.255.255")!))
        #expect(!everything.contains(IPAddress("::1")!))
    }

    @Test func anIPv4NetworkContainsTheMappedFormsOfItsAddressesOnly() throws {
        let loopback = try #require(IPNetwork("127.0.0.0/8"))
        #expect(loopback.contains(IPAddress("::ffff:127.0.0.1")!))
        #expect(!loopback.contains(IPAddress("::ffff:128.0.0.1")!))
        // NAT64 sends traffic to a translator, not to this host.
        #expect(!loopback.contains(IPAddress("64:ff9b::127.0.0.1")!))
    }

    @Test(arguments: [
        ("127.0.0.1", IPAddress.Classification.loopback), ("127.255.255.255", .loopback),
        ("10.0.0.1", .private), ("172.15.255.255", .global), ("172.16.0.0", .private), ("172.31.255.255", .private),
        ("172.32.0.0", .global), ("192.168.1.1", .private), ("192.169.0.1", .global),
        ("169.254.169.254", .linkLocal), ("169.253.255.255", .global),
        ("100.64.0.1", .carrierGradeNAT), ("100.127.255.255", .carrierGradeNAT), ("100.63.255.255", .global),
        ("100.128.0.0", .global), ("0.0.0.0", .unspecified), ("0.1.2.3", .unspecified),
        ("224.0.0.1", .multicast), ("239.255.255.255", .multicast), ("240.0.0.1", .reserved),
        ("255.255.255.255", .broadcast), ("8.8.8.8", .global), ("1.1.1.1", .global), ("203.0.113.7", .global),
    ])
    func ipv4AddressesAreClassified(text: String, expected: IPAddress.Classification) throws {
        #expect(try #require(IPAddress(text)).classification == expected)
    }

    @Test(arguments: [
        ("::", IPAddress.Classification.unspecified), ("::1", .loopback), ("fc00::1", .private),
        ("fd12:3456::1", .private), ("fec0::1", .private), ("fe80::1", .linkLocal), ("febf::1", .linkLocal),
        ("ff02::1", .multicast), ("100::1", .reserved), ("2001:4860:4860::8888", .global), ("2606:4700::1111", .global),
        ("fbff::1", .global), ("fe00::1", .global),
    ])
    func ipv6AddressesAreClassified(text: String, expected: IPAddress.Classification) throws {
        #expect(try #require(IPAddress(text)).classification == expected)
    }

    @Test(arguments: [
        ("::ffff:127.0.0.1", IPAddress.Classification.loopback), ("::ffff:7f00:1", .loopback),
        ("::ffff:169.254.169.254", .linkLocal), ("::ffff:10.0.0.1", .private), ("::ffff:8.8.8.8", .global),
        ("::ffff:0:10.0.0.1", .private), ("::127.0.0.1", .loopback), ("::0.0.0.2", .unspecified),
        ("64:ff9b::127.0.0.1", .loopback), ("64:ff9b::a9fe:a9fe", .linkLocal), ("64:ff9b::100.64.0.1", .carrierGradeNAT),
        ("64:ff9b::8.8.8.8", .global), ("64:ff9b:1::1", .private), ("2002:7f00:1::", .loopback),
        ("2002:a9fe:a9fe::1", .linkLocal), ("2002:808:808::1", .global),
    ])
    func ipv6FormsCarryingAnIPv4AddressAreClassifiedByIt(text: String, expected: IPAddress.Classification) throws {
        let address = try #require(IPAddress(text))
        #expect(address.classification == expected)
        #expect(address.isInternal == (expected != .global))
    }

    @Test func embeddedIPv4IsFoundOnlyWhereTrafficGoesToIt() {
        #expect(IPAddress("::ffff:1.2.3.4")?.embeddedIPv4 == IPAddress("1.2.3.4"))
        #expect(IPAddress("64:ff9b::1.2.3.4")?.embeddedIPv4 == IPAddress("1.2.3.4"))
        #expect(IPAddress("2002:102:304::")?.embeddedIPv4 == IPAddress("1.2.3.4"))
        #expect(IPAddress("::1")?.embeddedIPv4 == nil)
        #expect(IPAddress("::")?.embeddedIPv4 == nil)
        #expect(IPAddress("2001:db8::1.2.3.4")?.embeddedIPv4 == nil)
        #expect(IPAddress("1.2.3.4")?.embeddedIPv4 == nil)
    }
}
