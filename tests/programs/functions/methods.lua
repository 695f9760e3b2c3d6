-- Method definitions and calls with ':' and the implicit self.
local Account = {}
Account.__index = Account

function Account.new(owner, balance)
  return setmetatable({owner = owner, balance = balance or 0}, Account)
end

function Account:deposit(v)
  self.balance = self.balance + v
  return self
end

function Account:withdraw(v)
  if v > self.balance then
    error("insufficient funds", 2)
  end
  self.balance = self.balance - v
  return self
end

function Account.describe(self)
  return self.owner .. ": " .. self.balance
end

local acc = Account.new("ann", 100)
acc:deposit(50):withdraw(30)
print(acc:describe())
print(Account.describe(acc))
print(pcall(acc.withdraw, acc, 1000))

-- a method call on a string literal and on an expression result
print(("hello"):upper(), ("%d-%d"):format(1, 2))
local obj = {name = "o", get = function(self, suffix) return self.name .. (suffix or "") end}
print(obj:get("!"), obj.get(obj))
-- the receiver expression is evaluated once
local evals = 0
local function getobj() evals = evals + 1; return obj end
print(getobj():get("?"), evals)
-- methods stored in nested tables
local ns = {sub = {val = 5}}
function ns.sub:twice() return self.val * 2 end
print(ns.sub:twice())
-- calling a method with a string or table argument without parentheses
local m = {}
function m:say(x) return type(x) end
print(m:say"str", m:say{1})
