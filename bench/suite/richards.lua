-- richards.lua: an operating-system task scheduler in the style of the classic
-- Richards benchmark (written from scratch here). Tasks of different
-- priorities (an idle task, a worker, two handlers, two devices) exchange
-- packets through per-task queues; a scheduler runs the highest-priority
-- runnable task, with tasks waiting for packets, holding themselves (simulated
-- I/O) and releasing each other. Object-oriented with a small class hierarchy
-- and method dispatch. Checks packet conservation and the character stream the
-- devices received. Stands for: event loops, schedulers, actor runtimes, OS
-- and protocol simulators.
-- Usage: richards.lua [scale]

local scale = tonumber(arg and arg[1]) or 1
local function scaled(n)
  local v = math.floor(n * scale + 0.5)
  if v < 1 then v = 1 end
  return v
end

local ID_IDLE, ID_WORKER, ID_HANDLER_A, ID_HANDLER_B, ID_DEVICE_A, ID_DEVICE_B = 1, 2, 3, 4, 5, 6
local KIND_WORK, KIND_DEVICE = 1, 2

---------------------------------------------------------------- packets
local Packet = {}
Packet.__index = Packet

local function new_packet(kind, owner)
  return setmetatable({ link = nil, kind = kind, owner = owner, a1 = 0, data = { 0, 0, 0, 0 } }, Packet)
end

---------------------------------------------------------------- scheduler
local Scheduler = {}
Scheduler.__index = Scheduler

local function new_scheduler()
  return setmetatable({
    tasks = {}, list = nil, current = nil,
    queue_count = 0, hold_count = 0, switches = 0,
  }, Scheduler)
end

function Scheduler:add(task)
  self.tasks[task.id] = task
  task.sched = self
  -- keep the list ordered by descending priority
  if not self.list or self.list.pri < task.pri then
    task.next = self.list
    self.list = task
  else
    local t = self.list
    while t.next and t.next.pri >= task.pri do t = t.next end
    task.next = t.next
    t.next = task
  end
end

function Scheduler:run()
  local t = self.list
  while t do
    if t:runnable() then
      self.current = t
      self.switches = self.switches + 1
      local packet = nil
      if t.waiting and t.queue then
        packet = t.queue
        t.queue = packet.link
        packet.link = nil
        t.waiting = false
      end
      t = t:step(packet)
    else
      t = t.next
    end
  end
end

-- operations a running task uses; each returns the next task to consider
function Scheduler:wait()
  local c = self.current
  c.waiting = true
  return c
end

function Scheduler:hold()
  local c = self.current
  self.hold_count = self.hold_count + 1
  c.held = true
  return c.next
end

function Scheduler:release(id)
  local t = self.tasks[id]
  t.held = false
  if t.pri > self.current.pri then return t end
  return self.current
end

function Scheduler:send(packet, id)
  local t = self.tasks[id]
  self.queue_count = self.queue_count + 1
  packet.link = nil
  if not t.queue then
    t.queue = packet
  else
    local p = t.queue
    while p.link do p = p.link end
    p.link = packet
  end
  if t.waiting and t.pri > self.current.pri then return t end
  return self.current
end

---------------------------------------------------------------- tasks
local Task = {}
Task.__index = Task

function Task.new(class, id, pri)
  return setmetatable({ id = id, pri = pri, queue = nil, waiting = true, held = false }, class)
end

function Task:runnable()
  if self.held then return false end
  return not self.waiting or self.queue ~= nil
end

local function subclass(base)
  local c = setmetatable({}, { __index = base })
  c.__index = c
  return c
end

-- idle: pseudo-random releases of the two devices, then stops
local IdleTask = subclass(Task)
function IdleTask:step(_)
  local s = self.sched
  self.count = self.count - 1
  if self.count == 0 then return s:hold() end
  if self.v & 1 == 0 then
    self.v = self.v >> 1
    return s:release(ID_DEVICE_A)
  end
  self.v = (self.v >> 1) ~ 0xD008
  return s:release(ID_DEVICE_B)
end

-- worker: fills work packets with letters and alternates between handlers
local WorkerTask = subclass(Task)
function WorkerTask:step(packet)
  local s = self.sched
  if not packet then return s:wait() end
  self.dest = (self.dest == ID_HANDLER_A) and ID_HANDLER_B or ID_HANDLER_A
  packet.a1 = 0
  for i = 1, 4 do
    self.letter = self.letter + 1
    if self.letter > 26 then self.letter = 1 end
    packet.data[i] = self.letter
  end
  self.produced = self.produced + 4
  return s:send(packet, self.dest)
end

-- handler: pairs work packets with device packets, one letter per device packet
local HandlerTask = subclass(Task)
function HandlerTask:step(packet)
  local s = self.sched
  if packet then
    if packet.kind == KIND_WORK then
      self.work[#self.work + 1] = packet
    else
      self.devs[#self.devs + 1] = packet
    end
  end
  local work = self.work[1]
  if work then
    if work.a1 >= 4 then
      table.remove(self.work, 1)
      return s:send(work, ID_WORKER)
    end
    local dev = self.devs[#self.devs]
    if dev then
      self.devs[#self.devs] = nil
      work.a1 = work.a1 + 1
      dev.a1 = work.data[work.a1]
      return s:send(dev, self.device)
    end
  end
  return s:wait()
end

-- device: holds a packet for a while (simulated I/O), then returns it
local DeviceTask = subclass(Task)
function DeviceTask:step(packet)
  local s = self.sched
  if packet then
    self.stored = packet
    self.received = self.received + 1
    self.sum = (self.sum * 29 + packet.a1) % 1000000007
    return s:hold()
  end
  local p = self.stored
  if not p then return s:wait() end
  self.stored = nil
  return s:send(p, p.owner)
end

---------------------------------------------------------------- one run
local function run_once(count)
  local s = new_scheduler()
  local idle = Task.new(IdleTask, ID_IDLE, 0)
  idle.count, idle.v = count, 1
  idle.waiting = false
  s:add(idle)
  s.current = idle -- setup sends run "as" the idle task

  local worker = Task.new(WorkerTask, ID_WORKER, 1000)
  worker.dest, worker.letter, worker.produced = ID_HANDLER_A, 0, 0
  s:add(worker)
  for _ = 1, 2 do
    local p = new_packet(KIND_WORK, ID_WORKER)
    p.a1 = 4 -- empty
    s:send(p, ID_WORKER)
  end

  local handlers = {}
  for i, id in ipairs({ ID_HANDLER_A, ID_HANDLER_B }) do
    local h = Task.new(HandlerTask, id, 2000 + i * 1000)
    h.work, h.devs = {}, {}
    h.device = (id == ID_HANDLER_A) and ID_DEVICE_A or ID_DEVICE_B
    s:add(h)
    for _ = 1, 3 do s:send(new_packet(KIND_DEVICE, id), id) end
    handlers[i] = h
  end
  local devices = {}
  for i, id in ipairs({ ID_DEVICE_A, ID_DEVICE_B }) do
    local d = Task.new(DeviceTask, id, 4000 + i * 1000)
    d.received, d.sum = 0, 0
    s:add(d)
    devices[i] = d
  end
  s.queue_count, s.hold_count = 0, 0

  s:run()

  -- packet conservation: 2 work + 6 device packets somewhere in the system, and
  -- every letter the worker produced was delivered to a device or is in flight
  local packets, in_flight = 0, 0
  local function account(p, at)
    packets = packets + 1
    if p.kind == KIND_WORK then
      in_flight = in_flight + 4 - p.a1
    elseif at == "devqueue" then
      in_flight = in_flight + 1
    end
  end
  for _, t in pairs(s.tasks) do
    local p = t.queue
    local is_device = t.id == ID_DEVICE_A or t.id == ID_DEVICE_B
    while p do account(p, is_device and "devqueue" or "queue"); p = p.link end
    if t.stored then account(t.stored, "stored") end
    if t.work then
      for _, w in ipairs(t.work) do account(w, "list") end
      for _, d in ipairs(t.devs) do account(d, "list") end
    end
  end
  if packets ~= 8 then error("richards: packets lost: " .. packets) end
  local delivered = devices[1].received + devices[2].received
  if delivered + in_flight ~= worker.produced then
    error(string.format("richards: produced %d letters, delivered %d, in flight %d",
      worker.produced, delivered, in_flight))
  end
  return s.queue_count, s.hold_count, s.switches, devices[1].sum, devices[2].sum
end

---------------------------------------------------------------- workload
local rounds = scaled(60)
local count = 10000
local qc, hc, sw, s1, s2
for _ = 1, rounds do
  qc, hc, sw, s1, s2 = run_once(count)
end
-- every round is the same simulation; these are its known results
local EXPECTED = { 23246, 9297, 65790, 975021237, 996766578 }
local got = { qc, hc, sw, s1, s2 }
for i = 1, #EXPECTED do
  if got[i] ~= EXPECTED[i] then
    error(string.format("richards: result %d is %s, expected %d", i, tostring(got[i]), EXPECTED[i]))
  end
end
print(string.format("richards: rounds=%d queue=%d hold=%d switches=%d devA=%d devB=%d",
  rounds, qc, hc, sw, s1, s2))
