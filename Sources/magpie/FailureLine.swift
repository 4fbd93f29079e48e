import Foundation

/// The line a command prints for `input` (a URL or path as the user wrote it) that failed with `error`: the
/// error alone when its text already names the input or its URL, else `input: error`, so the URL is never
/// printed twice.
func failureLine(for input: String, error: any Error) -> String {
    failureLine(for: input, message: "\(error)")
}

/// ``failureLine(for:error:)`` for an error already turned into text.
func failureLine(for input: String, message text: String) -> String {
    var names = [input]
    if let url = try? FetchCommand.url(from: input) { names += [url.absoluteString] + (url.isFileURL ? [url.path] : []) }
    return names.contains { !$0.isEmpty && text.contains($0) } ? text : "\(input): \(text)"
}
