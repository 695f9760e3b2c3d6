-- goto jumps into the scope of a local.
do
  goto inside
  local x = 1
  ::inside::
  print(x)
end
