// swift-tools-version: 6.1
// libFuzzer harnesses for Magpie. Build only through scripts/fuzz: they have no main()
// of their own (libFuzzer supplies it), so a plain `swift build` here does not link.
import PackageDescription

let package = Package(
    name: "MagpieFuzz",
    dependencies: [.package(name: "Magpie", path: "..", traits: ["Server"])],
    targets: [
        .target(name: "FuzzDriver"),
        .executableTarget(name: "DecodeFuzzer", dependencies: ["FuzzDriver", .product(name: "MagpieCore", package: "Magpie")]),
        .executableTarget(name: "SpecFuzzer", dependencies: ["FuzzDriver", .product(name: "MagpieCore", package: "Magpie")]),
        .executableTarget(name: "URLFuzzer", dependencies: ["FuzzDriver", .product(name: "MagpieServer", package: "Magpie")]),
    ],
    swiftLanguageModes: [.v6]
)
