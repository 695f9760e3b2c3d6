-- A goto whose label is not visible.
for i = 1, 3 do
  if i == 2 then goto foo end
end
print("done")
