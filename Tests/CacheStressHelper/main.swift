// magpie-cache-stress: a child process for DiskStorage's crash and two-process tests.
//
//   magpie-cache-stress DIR NAME SEED COUNT SIZE_LIMIT
//
// Stores COUNT self-verifying payloads under 40 keys (COUNT 0 = until killed) and reads
// keys back between writes; exits 1 if a read ever returns bytes that do not verify.
import Foundation
import Magpie

/// Payload for (key, version): an 8-byte header naming both, then bytes derived from them.
func payload(key: Int, version: Int) -> Data {
    var data = Data()
    withUnsafeBytes(of: UInt32(key).littleEndian) { data.append(contentsOf: $0) }
    withUnsafeBytes(of: UInt32(truncatingIfNeeded: version).littleEndian) { data.append(contentsOf: $0) }
    let length = 2_000 + (key * 997 + version * 31) % 30_000
    var state = UInt32(truncatingIfNeeded: key &* 2_654_435_761 &+ version &* 40_503)
    for _ in 0..<length {
        state = state &* 1_103_515_245 &+ 12_345
        data.append(UInt8(truncatingIfNeeded: state >> 16))
    }
    return data
}

/// True when `data` is exactly the payload its header names, for `key`.
func verifies(_ data: Data, key: Int) -> Bool {
    guard data.count >= 8 else { return false }
    let storedKey = data.prefix(4).enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
    let version = data.dropFirst(4).prefix(4).enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
    return storedKey == key && data == payload(key: key, version: version)
}

let arguments = CommandLine.arguments
guard arguments.count == 6, let seed = Int(arguments[3]), let count = Int(arguments[4]), let limit = Int(arguments[5]) else {
    FileHandle.standardError.write(Data("usage: magpie-cache-stress DIR NAME SEED COUNT SIZE_LIMIT\n".utf8))
    exit(2)
}
do {
    let disk = try DiskStorage(config: .init(name: arguments[2], directory: URL(fileURLWithPath: arguments[1]), sizeLimit: limit))
    var generator = SystemRandomNumberGenerator()
    var i = 0
    while count == 0 || i < count {
        let key = Int.random(in: 0..<40, using: &generator)
        try disk.store(payload(key: key, version: seed * 1_000_000 + i), forKey: "key-\(key)")
        let probe = Int.random(in: 0..<40, using: &generator)
        if let data = try disk.value(forKey: "key-\(probe)"), !verifies(data, key: probe) {
            FileHandle.standardError.write(Data("corrupt read for key-\(probe)\n".utf8))
            exit(1)
        }
        i += 1
    }
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(3)
}
