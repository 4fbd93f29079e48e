@_exported import Magpie
