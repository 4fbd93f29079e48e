-- wrk script for scripts/bench-serve: requests the paths listed in files, one path a line.
--   wrk ... -s paths.lua http://HOST:PORT -- THREADS FILE [FILE2]
-- With one file, thread k of THREADS requests lines k, k+THREADS, k+2*THREADS, ... so no two requests of a run
-- share a path until the list runs out (then it starts over, and the requests after that are counted as "repeated").
-- With two files (the soak), requests alternate between them: FILE (unique, cold) and FILE2 (a few, cached).
-- With BENCH_COUNT_STATUSES=1 in the environment, the response hook tallies the statuses of the answers (kept off
-- for the cached cells, where handing every body to Lua would slow wrk down as much as the servers).
-- done() prints one line: BENCH {json} with requests, duration, percentiles, errors, repeats and statuses.

local threads = {}
local next_id = 1

function setup(thread)
  thread:set("id", next_id)
  table.insert(threads, thread)
  next_id = next_id + 1
end

local function read_lines(name)
  local list = {}
  for line in io.lines(name) do
    if #line > 0 then list[#list + 1] = line end
  end
  if #list == 0 then error("no paths in " .. name) end
  return list
end

function init(args)
  stride = tonumber(args[1])
  primary = read_lines(args[2])
  secondary = args[3] and read_lines(args[3]) or nil
  position = id
  secondary_position = id
  turn = 0
  exhausted = false
  repeated = 0
  statuses = {}
end

local function take_primary()
  if position > #primary then
    position = ((position - 1) % #primary) + 1
    exhausted = true
  end
  if exhausted then repeated = repeated + 1 end
  local path = primary[position]
  position = position + stride
  return path
end

function request()
  local path
  if secondary then
    turn = turn + 1
    if turn % 2 == 0 then
      path = secondary[((secondary_position - 1) % #secondary) + 1]
      secondary_position = secondary_position + 1
    else
      path = take_primary()
    end
  else
    path = take_primary()
  end
  return wrk.format("GET", path)
end

if os.getenv("BENCH_COUNT_STATUSES") == "1" then
  function response(status, headers, body)
    statuses[status] = (statuses[status] or 0) + 1
  end
end

function done(summary, latency, requests)
  local wraps = 0
  local counts = {}
  for _, thread in ipairs(threads) do
    wraps = wraps + (thread:get("repeated") or 0)
    local tally = thread:get("statuses")
    if tally then
      for status, count in pairs(tally) do
        counts[status] = (counts[status] or 0) + count
      end
    end
  end
  local parts = {}
  for status, count in pairs(counts) do
    parts[#parts + 1] = string.format('"%d": %d', status, count)
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH {"requests": %d, "duration_us": %d, "bytes": %d, "p50_us": %d, "p90_us": %d, "p99_us": %d, ' ..
    '"max_us": %d, "mean_us": %.1f, "connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d, ' ..
    '"repeated": %d, "statuses": {%s}}\n',
    summary.requests, summary.duration, summary.bytes, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, latency.mean, e.connect, e.read, e.write, e.status, e.timeout,
    wraps, table.concat(parts, ", ")))
end
