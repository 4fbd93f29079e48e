// `import Magpie` brings the whole library: the networking-free core is re-exported, so users of
// the full library never import two modules.
@_exported import MagpieCore
