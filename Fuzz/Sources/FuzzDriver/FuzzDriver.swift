// The libFuzzer glue both harnesses share. SwiftPM links an executable with
// `--defsym main=<Module>_main`, so each harness exports that symbol and calls `runLibFuzzer`,
// which hands control to libFuzzer's driver instead of libFuzzer's own `main`.

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

/// Runs libFuzzer with the process's arguments, calling `testOneInput` for every input.
///
/// - Parameters:
///   - argc: `main`'s argument count.
///   - argv: `main`'s argument vector.
///   - testOneInput: The harness; returns 0 (libFuzzer reserves other values).
/// - Returns: libFuzzer's exit status.
public func runLibFuzzer(
    _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
    _ testOneInput: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt {
    var count = argc
    var vector = argv
    return LLVMFuzzerRunDriver(&count, &vector, testOneInput)
}
