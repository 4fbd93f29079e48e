import Magpie

/// Turns pixels into terminal text: one character cell per pixel column and two pixel rows,
/// as 24-bit colour half blocks or, without colour, an ASCII luminance ramp.
struct HalfBlockRenderer: Sendable {
    /// How cells are drawn.
    enum Mode: Sendable {
        /// `▀` with the top pixel as foreground and the bottom pixel as background (ANSI 24-bit colour).
        case color
        /// One ramp character per cell by luminance, no escape sequences at all.
        case ascii
    }

    /// Dark to light: on a dark terminal a denser character looks brighter.
    static let ramp: [Character] = [" ", ".", ":", "-", "=", "+", "*", "#", "%", "@"]

    /// What partly transparent pixels are blended over: a neutral dark grey, so they read as
    /// faded on both dark and light terminals (fully transparent pixels show the terminal's own background).
    static let matte: (red: Int, green: Int, blue: Int) = (48, 48, 48)

    let mode: Mode

    /// Character rows needed for `height` pixel rows (an odd last row has an empty bottom half).
    static func rows(forHeight height: Int) -> Int { (height + 1) / 2 }

    /// The text lines of `pixels`, one per character row, without line terminators.
    /// Colour lines end with a reset (`ESC[0m`) so nothing leaks into the next line.
    func lines(_ pixels: PixelBuffer) -> [String] {
        (0..<Self.rows(forHeight: pixels.height)).map { row in
            let top = row * 2, bottom = top + 1
            let cells = (0..<pixels.width).map { x in
                (Self.paint(pixels[x, top]), bottom < pixels.height ? Self.paint(pixels[x, bottom]) : nil)
            }
            return mode == .color ? Self.colorLine(cells) : Self.asciiLine(cells)
        }
    }

    /// The whole picture as one string, every line ended by a newline.
    func text(_ pixels: PixelBuffer) -> String {
        lines(pixels).map { $0 + "\n" }.joined()
    }

    /// An opaque colour: nil for a fully transparent pixel, else the pixel blended over the matte.
    static func paint(_ pixel: RGBAColor) -> Paint? {
        switch pixel.alpha {
        case 0: return nil
        case 255: return Paint(red: pixel.red, green: pixel.green, blue: pixel.blue)
        default:
            let alpha = Int(pixel.alpha)
            func blend(_ value: UInt8, _ under: Int) -> UInt8 {
                UInt8((Int(value) * alpha + under * (255 - alpha) + 127) / 255)
            }
            return Paint(red: blend(pixel.red, matte.red), green: blend(pixel.green, matte.green), blue: blend(pixel.blue, matte.blue))
        }
    }

    private static func colorLine(_ cells: [(top: Paint?, bottom: Paint?)]) -> String {
        // nil means the terminal's default colour, which is also the state after a reset.
        var foreground: Paint?, background: Paint?
        var line = ""
        line.reserveCapacity(cells.count * 24)
        for cell in cells {
            let glyph: String, wantedForeground: Paint?, wantedBackground: Paint?
            switch (cell.top, cell.bottom) {
            case (let top?, let bottom):
                (glyph, wantedForeground, wantedBackground) = ("▀", top, bottom)
            case (nil, let bottom?):
                // Only the lower half is coloured: draw it with the foreground so the upper half
                // shows the terminal's own background.
                (glyph, wantedForeground, wantedBackground) = ("▄", bottom, nil)
            case (nil, nil):
                (glyph, wantedForeground, wantedBackground) = (" ", foreground, nil)
            }
            if wantedForeground != foreground {
                line += wantedForeground.map { "\u{1B}[38;2;\($0.red);\($0.green);\($0.blue)m" } ?? "\u{1B}[39m"
                foreground = wantedForeground
            }
            if wantedBackground != background {
                line += wantedBackground.map { "\u{1B}[48;2;\($0.red);\($0.green);\($0.blue)m" } ?? "\u{1B}[49m"
                background = wantedBackground
            }
            line += glyph
        }
        return line + "\u{1B}[0m"
    }

    private static func asciiLine(_ cells: [(top: Paint?, bottom: Paint?)]) -> String {
        String(cells.map { cell -> Character in
            let painted = [cell.top, cell.bottom].compactMap { $0 }
            guard !painted.isEmpty else { return " " }
            let luminance = painted.reduce(0) { $0 + $1.luminance } / Double(painted.count)
            return ramp[Int((luminance / 255 * Double(ramp.count - 1)).rounded())]
        })
    }
}

extension HalfBlockRenderer {
    /// An opaque terminal colour.
    struct Paint: Equatable, Sendable {
        var red: UInt8
        var green: UInt8
        var blue: UInt8

        /// Rec. 709 luma on the 0...255 scale.
        var luminance: Double { 0.2126 * Double(red) + 0.7152 * Double(green) + 0.0722 * Double(blue) }
    }
}
