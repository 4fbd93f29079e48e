import Foundation

/// A plain-text table: a header row and rows of cells, columns padded to their widest cell,
/// the first column left-aligned and the others right-aligned (they hold numbers).
struct TextTable {
    let header: [String]
    var rows: [[String]] = []

    init(_ header: String...) { self.header = header }

    mutating func add(_ cells: String...) { rows.append(cells) }

    /// The table as lines, the header emphasised with `style`.
    func render(style: TextStyle) -> [String] {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            widths.indices.map { column in
                let cell = cells.indices.contains(column) ? cells[column] : ""
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return column == 0 ? cell + padding : padding + cell
            }.joined(separator: "  ")
        }
        return [style.bold(line(header))] + rows.map(line)
    }
}

/// Human units for the CLI's reports.
enum Units {
    /// `1234567` → `1.2 MB` (decimal units, like `ls -h --si`).
    static func bytes(_ count: Int) -> String {
        let value = Double(count)
        if value < 1000 { return "\(count) B" }
        if value < 1_000_000 { return format(value / 1000, "kB") }
        if value < 1_000_000_000 { return format(value / 1_000_000, "MB") }
        return format(value / 1_000_000_000, "GB")
    }

    /// A duration in milliseconds with a precision that suits its size: `0.004 ms`, `3.2 ms`, `1,250 ms` → `1.25 s`.
    static func milliseconds(_ ms: Double) -> String {
        if ms >= 1000 { return format(ms / 1000, "s", digits: 2) }
        if ms >= 10 { return format(ms, "ms", digits: 0) }
        if ms >= 0.1 { return format(ms, "ms", digits: 1) }
        return format(ms, "ms", digits: 3)
    }

    /// Milliseconds in a `Duration`.
    static func ms(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    private static func format(_ value: Double, _ unit: String, digits: Int = 1) -> String {
        String(format: "%.\(digits)f \(unit)", value)
    }
}
