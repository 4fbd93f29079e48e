import Magpie
import Synchronization

/// An `ImageTarget` that draws the images Magpie displays on standard output as half-block text,
/// playing animations in place.
///
/// `display` runs under the binding lock, so it only records the image and queues it; a task of
/// the view's own draws the queue in order. `finishDrawing()` waits until everything queued is on screen.
final class TerminalImageView: ImageTarget {
    /// How the view draws.
    struct Settings: Sendable {
        /// Half blocks with colour, or the ASCII ramp.
        var mode: HalfBlockRenderer.Mode
        /// Animation cycles to play; 0 draws the first frame only.
        var loops: Int
        /// Whether animations may redraw in place (cursor movement needs a terminal and escapes).
        var animates: Bool
        /// False to load without drawing anything (`--json`).
        var draws: Bool
    }

    /// Frames shorter than this are stretched to it, as browsers do for zero-delay frames.
    static let minimumFrameDuration = Duration.milliseconds(20)

    let imageBinding = ImageBinding()

    private let shown = Mutex<Image?>(nil)
    private let queue: AsyncStream<Image>.Continuation
    private let drawing: Task<Void, Never>

    /// A view drawing with `settings`.
    init(settings: Settings) {
        let (images, queue) = AsyncStream.makeStream(of: Image.self)
        self.queue = queue
        drawing = Task {
            for await image in images where settings.draws {
                await Self.draw(image, settings: settings)
            }
        }
    }

    /// Records `image` and queues it for drawing; a clear (nil) draws nothing, as a terminal cannot
    /// take back what scrolled by.
    func display(_ image: Image?) {
        shown.withLock { $0 = image }
        if let image { queue.yield(image) }
    }

    var displayedImage: Image? { shown.withLock { $0 } }

    /// Waits until every image displayed so far has been drawn (animations played to the end).
    /// Nothing displayed afterwards is drawn.
    func finishDrawing() async {
        queue.finish()
        await drawing.value
    }

    private static func draw(_ image: Image, settings: Settings) async {
        let renderer = HalfBlockRenderer(mode: settings.mode)
        let rows = HalfBlockRenderer.rows(forHeight: image.height)
        // Cursor-up stops at the top of the screen: a frame taller than the terminal would smear.
        // Lines wider than the terminal wrap and would smear the same way.
        let fits = rows < Terminal.rows(of: .standardOutput) && image.width <= Terminal.columns(of: .standardOutput)
        guard image.isAnimated, settings.animates, settings.loops > 0, fits else {
            Terminal.write(renderer.text(image.pixels), to: .standardOutput)
            return
        }
        // Rendered once: every cycle draws the same text.
        let frames = image.frames.map { (text: renderer.text($0.pixels), duration: max($0.duration, minimumFrameDuration)) }
        for cycle in 0..<settings.loops {
            for (index, frame) in frames.enumerated() {
                let first = cycle == 0 && index == 0
                Terminal.write((first ? "" : "\u{1B}[\(rows)A") + frame.text, to: .standardOutput)
                let last = cycle == settings.loops - 1 && index == frames.count - 1
                if !last { try? await Task.sleep(for: frame.duration) }
            }
        }
    }
}
