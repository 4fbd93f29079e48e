/// The byte tests coders recognise their formats with (``ImageCoder/recognizes(_:)``): bounds-checked, so a short
/// start answers false rather than reading past its end.
extension UnsafeRawBufferPointer {
    /// Whether `bytes` appear at `offset`.
    func hasBytes(_ bytes: [UInt8], at offset: Int = 0) -> Bool {
        guard offset >= 0, count >= offset + bytes.count else { return false }
        for (index, byte) in bytes.enumerated() where self[offset + index] != byte { return false }
        return true
    }

    /// Whether the ASCII text `tag` appears at `offset`.
    func hasASCII(_ tag: StaticString, at offset: Int = 0) -> Bool {
        tag.withUTF8Buffer { hasBytes(Array($0), at: offset) }
    }

    /// The brands of an ISO base media file's leading `ftyp` box (HEIF, AVIF): the major brand and the compatible
    /// ones; empty when the data does not start with one.
    var isoBrands: [String] {
        guard hasASCII("ftyp", at: 4) else { return [] }
        let boxSize = Int(self[0]) << 24 | Int(self[1]) << 16 | Int(self[2]) << 8 | Int(self[3])
        let end = Swift.min(count, Swift.max(boxSize, 16))
        var brands: [String] = []
        var offset = 8
        while offset + 4 <= end {
            if offset != 12 {  // bytes 12..<16 hold the minor version, not a brand
                brands.append(String(decoding: self[offset..<offset + 4], as: UTF8.self))
            }
            offset += 4
        }
        return brands
    }
}
