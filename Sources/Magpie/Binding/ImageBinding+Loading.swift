import MagpieCore
import Synchronization

extension ImageBinding {
    typealias Completion = @Sendable (Result<RetrieveImageResult, MagpieError>) -> Void

    /// `target.mg.setImage(with:…)`: see there.
    func load<Target: ImageTarget>(
        _ source: Source?, into target: Target, placeholder: (any Placeholder)?, options: [MagpieOption],
        progress: DownloadProgressHandler?, completion: Completion?
    ) -> RetrieveImageTask? {
        let manager = self.manager
        let parsed = manager.parse(options)
        let queue = parsed.callbackQueue
        guard let source else {
            let previous = withEffects { state in
                let previous = state.begin(nil)
                state.show(placeholder, on: target)
                state.stopIndicator()
                return previous
            }
            previous?.cancel()
            if let completion { queue.execute { completion(.failure(.imageSettingFailed(reason: .emptySource))) } }
            return nil
        }

        // Read before taking the lock: it is the target's code.
        let keepsImage = parsed.keepCurrentImageWhileLoading && target.displayedImage != nil
        let (id, previous) = withEffects { state in
            let previous = state.begin(source)
            if !keepsImage {
                state.show(placeholder, on: target)
            }
            state.startIndicator()
            return (state.lastIdentifier, previous)
        }
        // Cancelled outside the lock: cancellation handlers run synchronously and are not ours.
        previous?.cancel()

        // The manager answers at once (`.untouch`) so the display happens as soon as the result
        // exists; only the caller's completion goes to the caller's queue.
        let task = manager.retrieveImageReporting(
            with: source, options: options + [.callbackQueue(.untouch)],
            progress: { [weak self] value in
                self?.forward(value, request: id)
                progress?(value)
            },
            completionHandler: { [weak self, weak target] result in
                let outcome =
                    self?.finish(id, source: source, result: result, target: target, onFailureImage: parsed.onFailureImage)
                    ?? result
                if let completion { queue.execute { completion(outcome) } }
            })
        // A newer request or a cancelDownloadTask() may have come in while the task was being made.
        let keep = state.withLock { state in
            guard let current = state.current, current.id == id, !current.cancelled else { return false }
            state.current?.task = task
            return true
        }
        if !keep { task.cancel() }
        return task
    }

    /// Cancels the current request if it still runs; its result will not be displayed.
    func cancelCurrent() {
        let task = withEffects { state -> RetrieveImageTask? in
            guard state.isLoading else { return nil }
            state.current?.cancelled = true
            state.stopIndicator()
            return state.current?.task
        }
        task?.cancel()
    }

    private func forward(_ progress: DownloadProgress, request id: UInt64) {
        withEffects { state in
            guard state.current?.id == id, state.isLoading, state.indicatorAnimating, let indicator = state.indicator else { return }
            state.effects.append { indicator.update(progress: progress) }
        }
    }

    /// Displays what request `id` produced if it is still current, and says what its completion gets.
    /// Internal (not private) so tests can deliver a result for a replaced request at a chosen moment.
    func finish(
        _ id: UInt64, source: Source, result: Result<RetrieveImageResult, MagpieError>, target: (any ImageTarget)?,
        onFailureImage: Image??
    ) -> Result<RetrieveImageResult, MagpieError> {
        withEffects { state in
            guard let current = state.current, current.id == id else {
                let (value, error): (RetrieveImageResult?, MagpieError?) =
                    switch result {
                    case .success(let value): (value, nil)
                    case .failure(let error): (nil, error)
                    }
                return .failure(.imageSettingFailed(reason: .notCurrentSourceTask(result: value, error: error, source: source)))
            }
            state.current?.inFlight = false
            state.current?.task = nil
            state.stopIndicator()
            // An image that raced past cancelDownloadTask() is dropped, so the caller sees the cancel it asked for.
            if current.cancelled { return .failure(ImageManager.cancelled(source)) }
            guard let target else { return result }
            switch result {
            case .success(let value):
                state.display(value.image, on: target)
            case .failure(let error):
                if !error.isCancellation, let failureImage = onFailureImage { state.display(failureImage, on: target) }
            }
            return result
        }
    }
}
