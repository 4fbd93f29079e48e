import MagpieCore

extension TaskPriority {
    /// The task priority that stands for a download priority (0...1, Kingfisher's `downloadPriority`):
    /// 0.25 is `.low`, 0.5 `.medium`, 0.75 `.high`, in steps of 1/16, so shared work escalated by a
    /// higher caller keeps the order the download scheduler uses.
    init(downloadPriority: Double) {
        let clamped = downloadPriority.isNaN ? 0.5 : min(1, max(0, downloadPriority))
        self.init(rawValue: UInt8(13 + (clamped * 16).rounded()))
    }

    /// The download priority this task priority stands for (the inverse of ``init(downloadPriority:)``, clamped to 0...1).
    var downloadPriority: Double {
        min(1, max(0, (Double(rawValue) - 13) / 16))
    }
}
