"""The parts of scripts/serve-soak (the executable: its arguments and main()), one concern a module:

- settings: the instances' limits, timings, sources, Accept spellings, hostile routes; say(), short(), CannotRun
- formats: sniffing, magic bytes, sizes from headers or Pillow, MIME types
- geometry: fitting, filling, and the size a source decodes at
- nginx: the Accept token and cache-key variant nginx gives a request
- checks: Expect, Results, Checker (status and body checks), crash lines
- origin: the hostile origin (its own process) and the trap on 127.0.0.2
- plan: the requests and what each must get
- client: keep-alive and raw-socket HTTP clients
- soak: the runner (origin, cluster, requests, RSS sampling), with phases (serial pass, mix, bursts, protocol and
  configuration checks) and report (the Markdown report) mixed in
- memory: VmRSS, the cache gauge, the RSS verdict
- selftest: the checkers fed right and wrong data

URL signing is magpie_scripts.signing, shared with the other scripts.
"""
