-- A realistic program: parse CSV-like records, aggregate, and print a
-- formatted report with sorted groups.
local data = [[
region,product,units,price
north,widget,10,2.50
south,widget,4,2.50
north,gadget,3,10.00
east,widget,7,2.75
south,gizmo,12,1.25
north,widget,5,2.50
east,gadget,1,9.50
west,gizmo,20,1.00
]]
local rows, header = {}, nil
for line in data:gmatch("[^\n]+") do
  local fields = {}
  for f in line:gmatch("[^,]+") do fields[#fields + 1] = f end
  if not header then header = fields
  else
    local rec = {}
    for i, name in ipairs(header) do rec[name] = tonumber(fields[i]) or fields[i] end
    rows[#rows + 1] = rec
  end
end
print("columns:", table.concat(header, " | "), "rows:", #rows)
local by_region, by_product = {}, {}
for _, r in ipairs(rows) do
  local revenue = r.units * r.price
  by_region[r.region] = (by_region[r.region] or 0) + revenue
  local p = by_product[r.product] or {units = 0, revenue = 0}
  p.units, p.revenue = p.units + r.units, p.revenue + revenue
  by_product[r.product] = p
end
local function sorted_keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks)
  return ks
end
print(string.rep("-", 30))
for _, region in ipairs(sorted_keys(by_region)) do
  print(string.format("%-10s %10.2f", region, by_region[region]))
end
print(string.rep("-", 30))
for _, product in ipairs(sorted_keys(by_product)) do
  local p = by_product[product]
  print(string.format("%-10s %5d %10.2f %8.3f", product, p.units, p.revenue, p.revenue / p.units))
end
-- rank regions by revenue (ties broken by name)
local ranking = sorted_keys(by_region)
table.sort(ranking, function(a, b)
  if by_region[a] ~= by_region[b] then return by_region[a] > by_region[b] end
  return a < b
end)
for i, r in ipairs(ranking) do io.write(i, ".", r, " ") end
print()
-- word wrap a paragraph at 30 columns
local text = "The quick brown fox jumps over the lazy dog while the five boxing wizards jump quickly and sphinx of black quartz judges my vow"
local line, lines = "", {}
for word in text:gmatch("%S+") do
  if #line + #word + 1 > 30 and #line > 0 then lines[#lines + 1] = line; line = word
  else line = (#line > 0 and line .. " " or "") .. word end
end
lines[#lines + 1] = line
for _, l in ipairs(lines) do print("|" .. l .. string.rep(" ", 30 - #l) .. "|") end
