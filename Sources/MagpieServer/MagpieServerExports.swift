/// Applications that mount the server use the library through it.
@_exported import Magpie

// Package.swift's traits: Hummingbird and ServiceLifecycle come only with `Server`.
#if !Server
#error("MagpieServer needs the package's Server trait: traits: [\"Server\"], or swift build --enable-all-traits here")
#endif
