/// Per-channel lookup tables applied to straight RGBA8 pixels (alpha kept): what the tone curve, channel offset and
/// histogram equalisation processors share.
enum ChannelLookup {
    /// A copy of `pixels` whose red, green and blue bytes are replaced by `red[value]`, `green[value]`, `blue[value]`;
    /// each table has 256 entries.
    static func apply(_ pixels: PixelBuffer, red: [UInt8], green: [UInt8], blue: [UInt8]) throws -> PixelBuffer {
        precondition(red.count == 256 && green.count == 256 && blue.count == 256, "a lookup table has 256 entries")
        var output = try PixelBuffer.uninitialized(width: pixels.width, height: pixels.height)
        let count = pixels.byteCount
        pixels.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { destination in
                red.withUnsafeBufferPointer { r in
                    green.withUnsafeBufferPointer { g in
                        blue.withUnsafeBufferPointer { b in
                            var index = 0
                            while index < count {
                                destination[index] = r[Int(source[index])]
                                destination[index + 1] = g[Int(source[index + 1])]
                                destination[index + 2] = b[Int(source[index + 2])]
                                destination[index + 3] = source[index + 3]
                                index += 4
                            }
                        }
                    }
                }
            }
        }
        return output
    }

    /// The table that maps every value to itself.
    static let identity: [UInt8] = (0...255).map { UInt8($0) }
}
