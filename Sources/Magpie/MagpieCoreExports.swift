// `import Magpie` brings the whole library: the networking-free core is re-exported, so users of
// the full library never import two modules.
@_exported import MagpieCore

// Package.swift's traits: this module's dependencies exist only with `Networking` (on by default).
#if !Networking
#error("The Magpie module needs the package's Networking trait: keep the default traits, or depend on MagpieCore alone")
#endif
