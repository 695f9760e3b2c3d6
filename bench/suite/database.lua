-- database.lua: an in-memory relational store. Tables keep rows by primary key
-- with secondary hash indexes (value -> set of keys) maintained across insert,
-- update and delete; a small query layer does index lookups, full scans, hash
-- joins, group-by aggregation and order-by/limit. The workload is an order
-- system (customers, products, orders) running a transaction mix with
-- analytical queries; index answers are checked against full scans and the
-- aggregates against each other. Stands for: ORMs, caches, in-memory databases,
-- business logic over records.
-- Usage: database.lua [scale]

local scale = tonumber(arg and arg[1]) or 1
local function scaled(n)
  local v = math.floor(n * scale + 0.5)
  if v < 1 then v = 1 end
  return v
end

local seed = 77
local function rand(n)
  seed = (seed * 48271) % 2147483647
  return seed % n + 1
end

---------------------------------------------------------------- storage
local Table = {}
Table.__index = Table

local function new_table(name, pk, indexed)
  local t = setmetatable({ name = name, pk = pk, rows = {}, count = 0, indexes = {} }, Table)
  for _, col in ipairs(indexed or {}) do t.indexes[col] = {} end
  return t
end

function Table:index_add(col, value, key)
  local idx = self.indexes[col]
  local set = idx[value]
  if not set then
    set = {}
    idx[value] = set
  end
  set[key] = true
end

function Table:index_remove(col, value, key)
  local idx = self.indexes[col]
  local set = idx[value]
  set[key] = nil
  if next(set) == nil then idx[value] = nil end
end

function Table:insert(row)
  local key = row[self.pk]
  if self.rows[key] then error(self.name .. ": duplicate key " .. tostring(key)) end
  self.rows[key] = row
  self.count = self.count + 1
  for col in pairs(self.indexes) do
    self:index_add(col, row[col], key)
  end
end

function Table:get(key) return self.rows[key] end

function Table:update(key, changes)
  local row = self.rows[key]
  if not row then return false end
  for col, value in pairs(changes) do
    local old = row[col]
    if old ~= value then
      if self.indexes[col] then
        self:index_remove(col, old, key)
        self:index_add(col, value, key)
      end
      row[col] = value
    end
  end
  return true
end

function Table:delete(key)
  local row = self.rows[key]
  if not row then return false end
  for col in pairs(self.indexes) do
    self:index_remove(col, row[col], key)
  end
  self.rows[key] = nil
  self.count = self.count - 1
  return true
end

-- rows with row[col] == value, sorted by primary key
function Table:where(col, value)
  local out = {}
  local idx = self.indexes[col]
  if idx then
    local set = idx[value]
    if set then
      for key in pairs(set) do out[#out + 1] = self.rows[key] end
    end
  else
    for _, row in pairs(self.rows) do
      if row[col] == value then out[#out + 1] = row end
    end
  end
  local pk = self.pk
  table.sort(out, function(a, b) return a[pk] < b[pk] end)
  return out
end

function Table:scan_where(col, value)
  local out = {}
  for _, row in pairs(self.rows) do
    if row[col] == value then out[#out + 1] = row end
  end
  local pk = self.pk
  table.sort(out, function(a, b) return a[pk] < b[pk] end)
  return out
end

---------------------------------------------------------------- query helpers
-- hash join: for each left row, the right row whose key equals left[col]
local function join(left_rows, col, right)
  local out = {}
  for i = 1, #left_rows do
    local l = left_rows[i]
    local r = right.rows[l[col]]
    if r then out[#out + 1] = { l, r } end
  end
  return out
end

local function group_by(rows, keyf, valf)
  local groups, order = {}, {}
  for i = 1, #rows do
    local k = keyf(rows[i])
    local g = groups[k]
    if not g then
      g = { key = k, count = 0, sum = 0, min = math.huge, max = -math.huge }
      groups[k] = g
      order[#order + 1] = g
    end
    local v = valf(rows[i])
    g.count = g.count + 1
    g.sum = g.sum + v
    if v < g.min then g.min = v end
    if v > g.max then g.max = v end
  end
  table.sort(order, function(a, b)
    if a.sum ~= b.sum then return a.sum > b.sum end
    return a.key < b.key
  end)
  return order
end

---------------------------------------------------------------- schema and data
local CITIES = { "Oslo", "Lima", "Kyoto", "Quito", "Perth", "Turin", "Dakar", "Hanoi", "Cork", "Split",
  "Malmo", "Tartu" }
local CATEGORIES = { "books", "tools", "garden", "toys", "music", "food", "sports", "office" }
local STATUSES = { "new", "paid", "shipped", "delivered", "returned" }

local customers = new_table("customers", "id", { "city", "tier" })
local products = new_table("products", "id", { "category" })
local orders = new_table("orders", "id", { "customer", "product", "status", "day" })

local NCUST, NPROD = scaled(2000), 500
local NORDERS = scaled(30000)
local NTX = math.max(scaled(60000), 40)

for i = 1, NCUST do
  customers:insert({ id = i, name = "cust" .. i, city = CITIES[rand(#CITIES)], tier = rand(3), spent = 0 })
end
for i = 1, NPROD do
  products:insert({ id = i, category = CATEGORIES[rand(#CATEGORIES)], price = 100 + rand(50000), stock = 1000 })
end

local next_order = 1
local ledger = 0 -- money moved, tracked outside the tables
local function place_order(day)
  local c = rand(NCUST)
  local p = rand(NPROD)
  local qty = rand(5)
  local prod = products:get(p)
  local id = next_order
  next_order = next_order + 1
  orders:insert({ id = id, customer = c, product = p, qty = qty, day = day,
    status = "new", total = prod.price * qty })
  products:update(p, { stock = prod.stock - qty })
  local cust = customers:get(c)
  customers:update(c, { spent = cust.spent + prod.price * qty })
  ledger = ledger + prod.price * qty
  return id
end

for i = 1, NORDERS do place_order(i // 100) end

---------------------------------------------------------------- transactions
local checks, checksum = 0, 0
local function mix(v) checksum = (checksum * 131 + v) % 1000000007 end

local function same_rows(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

local day = NORDERS // 100
local CHECK_EVERY = NTX // 25 -- index-vs-scan checks and analytics are O(orders): a fixed number
local ANALYTICS_EVERY = NTX // 40

-- analytics: revenue by city for one category
local function analytics()
  local cat = CATEGORIES[rand(#CATEGORIES)]
  local prods = products:where("category", cat)
  local rows = {}
  for _, p in ipairs(prods) do
    for _, o in ipairs(orders:where("product", p.id)) do
      if o.status ~= "returned" then rows[#rows + 1] = o end
    end
  end
  local joined = join(rows, "customer", customers)
  local by_city = group_by(joined, function(j) return j[2].city end, function(j) return j[1].total end)
  local total, count = 0, 0
  for _, g in ipairs(by_city) do total = total + g.sum; count = count + g.count end
  local direct = 0
  for i = 1, #rows do direct = direct + rows[i].total end
  if total ~= direct or count ~= #rows then error("database: group-by totals disagree") end
  if by_city[1] then mix(by_city[1].sum % 1000003) end
  mix(count)
end

for tx = 1, NTX do
  if tx % ANALYTICS_EVERY == 0 then analytics() end
  if tx % CHECK_EVERY == 0 then
    checks = checks + 1
    local c = rand(NCUST)
    if not same_rows(orders:where("customer", c), orders:scan_where("customer", c)) then
      error("database: customer index disagrees with scan")
    end
  end
  local r = rand(1000) / 10
  if r <= 35 then
    if tx % 50 == 0 then day = day + 1 end
    place_order(day)
  elseif r <= 60 then -- advance an order's status
    local id = rand(next_order - 1)
    local o = orders:get(id)
    if o and o.status ~= "delivered" and o.status ~= "returned" then
      local nxt = { new = "paid", paid = "shipped", shipped = "delivered" }
      orders:update(id, { status = nxt[o.status] })
    end
  elseif r <= 65 then -- a return refunds the customer
    local id = rand(next_order - 1)
    local o = orders:get(id)
    if o and o.status == "delivered" then
      orders:update(id, { status = "returned" })
      local c = customers:get(o.customer)
      customers:update(o.customer, { spent = c.spent - o.total })
      ledger = ledger - o.total
    end
  elseif r <= 72 then -- archive (delete) old delivered orders of one day
    local d = rand(day + 1) - 1
    for _, o in ipairs(orders:where("day", d)) do
      if o.status == "delivered" then orders:delete(o.id) end
    end
  elseif r <= 90 then -- a customer's order history
    local c = rand(NCUST)
    local hist = orders:where("customer", c)
    local sum = 0
    for i = 1, #hist do sum = sum + hist[i].total end
    mix(#hist)
    mix(sum % 1000003)
  else -- customers of a city in a tier
    local city = CITIES[rand(#CITIES)]
    local rows = customers:where("city", city)
    local n = 0
    local tier = rand(3)
    for i = 1, #rows do if rows[i].tier == tier then n = n + 1 end end
    mix(n)
  end
end

---------------------------------------------------------------- final consistency
-- customers.spent equals the sum of their non-returned orders (archived ones included)
local spent_total = 0
for _, c in pairs(customers.rows) do spent_total = spent_total + c.spent end
if spent_total ~= ledger then error("database: customer balances disagree with the ledger") end
local status_counts = {}
for _, s in ipairs(STATUSES) do
  status_counts[s] = #orders:where("status", s)
  if status_counts[s] ~= #orders:scan_where("status", s) then
    error("database: status index disagrees with scan for " .. s)
  end
end
local n = 0
for _, s in ipairs(STATUSES) do n = n + status_counts[s] end
if n ~= orders.count then error("database: status index does not cover every order") end
-- every index entry points to a live row with that value
for col, idx in pairs(orders.indexes) do
  for value, set in pairs(idx) do
    for key in pairs(set) do
      local row = orders.rows[key]
      if not row or row[col] ~= value then error("database: stale index entry in " .. col) end
    end
  end
end
local top = group_by((function()
  local all = {}
  for _, c in pairs(customers.rows) do all[#all + 1] = c end
  return all
end)(), function(c) return c.id end, function(c) return c.spent end)

print(string.format("database: orders=%d live=%d spent=%d top=%d checks=%d checksum=%d",
  next_order - 1, orders.count, spent_total, top[1].key, checks, checksum))
