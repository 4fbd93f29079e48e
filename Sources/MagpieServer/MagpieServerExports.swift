/// Applications that mount the server use the library through it.
@_exported import Magpie
