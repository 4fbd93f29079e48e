import FuzzDriver
import MagpieServer

/// The keys the harness signs with (fixed, so a finding reproduces).
let signer = try! ImageURLSigner(hexPairs: [("6d61677069652d66757a7a2d6b6579", "73616c74"), ("0a0b0c", "")])
let presets = ["thumb": ["resize:100x100:fill", "quality:70"], "loop": ["preset:loop"]]

/// Every input is a request path as `magpie serve` receives it. What must hold for any bytes:
/// - the unsigned parse (`_` in front of the input) answers or throws a 400/403 `ServeRequestError`;
/// - a path that parses unsigned parses the same once signed with the first key, and verifies with it;
/// - that signature with one character changed, or the path with a byte appended, is refused with 403;
/// - the input taken as `/SIGNATURE/…` itself is judged without trapping (almost always a 403).
/// A trap, a sanitizer report, a hang or a broken invariant is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzURL(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    check(raw: text)
    let rest = text.hasPrefix("/") ? text : "/" + text
    let unsigned: ServeRequest
    do {
        unsigned = try ServeRequest.parse(path: "/_" + rest, signer: signer, allowsUnsigned: true, presets: presets)
    } catch {
        precondition(error.status == 400 || error.status == 403, "status \(error.status) for \(text.debugDescription)")
        return 0
    }
    let signature = signer.signature(forPath: rest)
    precondition(signer.isValid(signature: signature, path: rest), "own signature refused for \(rest.debugDescription)")
    do {
        let signed = try ServeRequest.parse(path: "/" + signature + rest, signer: signer, allowsUnsigned: false, presets: presets)
        precondition(signed.source.cacheIdentity == unsigned.source.cacheIdentity, "source differs once signed")
        precondition(signed.options.normalized == unsigned.options.normalized, "options differ once signed")
    } catch {
        preconditionFailure("signed \(rest.debugDescription) refused: \(error)")
    }
    var tampered = Array(signature)
    // Not the last character: it carries two padding bits, which base64 decoders (imgproxy's too) ignore.
    let index = count % (tampered.count - 1)
    tampered[index] = tampered[index] == "A" ? "B" : "A"
    for (candidate, path) in [(String(tampered), rest), (signature, rest + "x")] {
        do {
            _ = try ServeRequest.parse(path: "/" + candidate + path, signer: signer, allowsUnsigned: false, presets: presets)
            preconditionFailure("a tampered URL was accepted: \(path.debugDescription)")
        } catch {
            precondition(error.status == 403, "tampered URL answered \(error.status), not 403")
        }
    }
    return 0
}

/// The input as a whole path, signature included: refused or accepted, never a trap.
func check(raw text: String) {
    do {
        _ = try ServeRequest.parse(path: text, signer: signer, allowsUnsigned: false, presets: presets)
    } catch {
        precondition(error.status == 400 || error.status == 403, "status \(error.status) for \(text.debugDescription)")
    }
}

/// SwiftPM links the executable with `--defsym main=URLFuzzer_main`.
@_cdecl("URLFuzzer_main")
public func urlFuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzzURL($0, $1) }
}
