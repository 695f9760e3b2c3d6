-- An operating-system-like task scheduler in the spirit of the Richards
-- benchmark (written for Tandem): task control blocks are objects with
-- metatable classes, work packets move between an idle task, worker tasks,
-- handler tasks and device tasks through method calls and linked queues.
-- Optional argument: number of scheduler runs.
local Packet = {}
Packet.__index = Packet
function Packet.new(link, id, kind)
  local data = {}
  for i = 1, 4 do data[i] = 0 end
  return setmetatable({link = link, id = id, kind = kind, a1 = 0, a2 = data}, Packet)
end
function Packet:append_to(queue)
  self.link = nil
  if queue == nil then return self end
  local p = queue
  while p.link do p = p.link end
  p.link = self
  return queue
end

local Task = {}
Task.__index = Task
function Task.new(sched, id, pri, queue, kind)
  local t = setmetatable({sched = sched, id = id, pri = pri, queue = queue,
                          held = false, waiting = queue == nil, kind = kind,
                          count = 0, v1 = 0, v2 = 0}, Task)
  sched.tasks[id] = t
  t.next = sched.list
  sched.list = t
  return t
end
function Task:runnable() return not self.held and (not self.waiting or self.queue ~= nil) end
function Task:take_packet()
  local p = self.queue
  if p then
    self.queue = p.link
    self.waiting = self.queue == nil and self.waiting
  end
  return p
end
function Task:add_packet(p, current)
  if self.queue == nil then
    self.queue = p
    p.link = nil
    self.waiting = false
    if self.pri > current.pri then return self end
  else
    self.queue = p:append_to(self.queue)
  end
  return current
end

local Scheduler = {}
Scheduler.__index = Scheduler
function Scheduler.new() return setmetatable({tasks = {}, list = nil, holds = 0, queued = 0}, Scheduler) end
function Scheduler:send(p, to_id)
  local target = self.tasks[to_id]
  self.queued = self.queued + 1
  p.link = nil
  p.id = self.current.id
  return target:add_packet(p, self.current)
end
function Scheduler:hold()
  self.holds = self.holds + 1
  self.current.held = true
  return self.current.next
end
function Scheduler:release(id)
  local t = self.tasks[id]
  t.held = false
  if t.pri > self.current.pri then return t end
  return self.current
end
function Scheduler:wait()
  self.current.waiting = true
  return self.current
end

-- task behaviours, each a method taking the received packet (or nil)
local IDLE, WORKER, HANDLER_A, HANDLER_B, DEVICE_A, DEVICE_B = 1, 2, 3, 4, 5, 6
local behaviours = {}
behaviours.idle = function(self, s, p)
  self.count = self.count - 1
  if self.count == 0 then return s:hold() end
  if self.v1 % 2 == 0 then
    self.v1 = self.v1 / 2
    return s:release(DEVICE_A)
  end
  self.v1 = (self.v1 - 1) / 2 + 53256
  return s:release(DEVICE_B)
end
behaviours.worker = function(self, s, p)
  if p == nil then return s:wait() end
  self.v1 = (self.v1 == HANDLER_A) and HANDLER_B or HANDLER_A
  p.id = self.v1
  p.a1 = 0
  for i = 1, 4 do
    self.v2 = self.v2 + 1
    if self.v2 > 26 then self.v2 = 1 end
    p.a2[i] = self.v2
  end
  return s:send(p, self.v1)
end
behaviours.handler = function(self, s, p)
  if p then
    if p.kind == "work" then self.work = p:append_to(self.work)
    else self.device = p:append_to(self.device) end
  end
  local work = self.work
  if work then
    local count = work.a1 + 1
    if count > 4 then
      self.work = work.link
      return s:send(work, WORKER)
    end
    local dev = self.device
    if dev then
      self.device = dev.link
      dev.a1 = work.a2[count]
      work.a1 = count
      return s:send(dev, dev.id)
    end
  end
  return s:wait()
end
behaviours.device = function(self, s, p)
  if p == nil then
    local pending = self.pending
    if pending == nil then return s:wait() end
    self.pending = nil
    return s:send(pending, pending.id)
  end
  self.pending = p
  return s:hold()
end

function Scheduler:schedule()
  self.current = self.list
  while self.current do
    local t = self.current
    if t:runnable() then
      local p = t:take_packet()
      self.current = behaviours[t.kind](t, self, p)
    else
      self.current = t.next
    end
  end
end

local function run(count)
  local s = Scheduler.new()
  local idle = Task.new(s, IDLE, 0, nil, "idle")
  idle.count, idle.v1, idle.waiting = count, 1, false
  local wq = Packet.new(nil, 0, "work")
  wq = Packet.new(wq, 0, "work")
  Task.new(s, WORKER, 1000, wq, "worker")
  local q = Packet.new(nil, DEVICE_A, "device")
  q = Packet.new(q, DEVICE_A, "device")
  q = Packet.new(q, DEVICE_A, "device")
  Task.new(s, HANDLER_A, 2000, q, "handler")
  q = Packet.new(nil, DEVICE_B, "device")
  q = Packet.new(q, DEVICE_B, "device")
  q = Packet.new(q, DEVICE_B, "device")
  Task.new(s, HANDLER_B, 3000, q, "handler")
  Task.new(s, DEVICE_A, 4000, nil, "device")
  Task.new(s, DEVICE_B, 5000, nil, "device")
  s:schedule()
  return s.queued, s.holds
end

local runs = tonumber(arg and arg[1]) or 75
local tq, th = 0, 0
for _ = 1, runs do
  local q, h = run(10000)
  tq, th = tq + q, th + h
end
print(string.format("runs %d: queued %d, holds %d", runs, tq, th))
