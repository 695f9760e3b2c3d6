-- Heap accesses of known pattern for cachesim (run_known_profiles.py computes the expected
-- hits and misses). The arrays are built by a table constructor fed by a vararg call
-- (SETLIST and C code: no heap event), and nothing else here touches the heap (build takes
-- itself as an argument, not as an upvalue): every event comes from scan, hotcold or stride.
local function build(b, n, ...)
  if n == 0 then return ... end
  return b(b, n - 1, 0, ...)
end
-- Writes t[1..n], then reads them: n stores and n loads, in address order.
local function scan(t, n)
  for i = 1, n do t[i] = i end
  for i = 1, n do local _ = t[i] end
end
-- For j = 1..k: reads t[2] (hot), then t[2 + 4j] (cold, 64 bytes further each time).
local function hotcold(t, k)
  for j = 1, k do
    local _ = t[2]
    local _ = t[2 + 4 * j]
  end
end
-- Reads t[1], t[1 + s], t[1 + 2s], ... on one line: with s = 4 (64 bytes) each read is a line
-- of its own; the other lines of the function make no heap access.
local function stride(t, n, s)
  local acc = 0
  for i = 1, n, s do acc = acc + t[i] end
  return acc
end
-- Appends t[1..n] to an empty table: one store event each (at the slot, or at the table
-- when the store goes through the slow path that grows the array part).
local function fill(t, n)
  for i = 1, n do t[i] = i end
end
local mode = ...
if mode == "small" then scan({build(build, 508)}, 508)
elseif mode == "big" then scan({build(build, 4096)}, 4096)
elseif mode == "hot" then hotcold({build(build, 404)}, 100)
elseif mode == "append" then fill({}, 1000)
elseif mode == "stride" then stride({build(build, 4096)}, 4096, 4)
else error("mode: small, big, hot, append or stride") end
