-- Mandelbrot set membership over a grid: float multiply/add in an inner loop
-- with an iteration limit; the result is an integer count per row combined
-- into a checksum. Optional argument: grid size.
local size = tonumber(arg and arg[1]) or 1150
local maxiter = 100
local inside, checksum = 0, 0
for y = 0, size - 1 do
  local ci = 2.0 * y / size - 1.0
  local row = 0
  for x = 0, size - 1 do
    local cr = 2.5 * x / size - 2.0
    local zr, zi, iter = 0.0, 0.0, 0
    while iter < maxiter do
      local zr2, zi2 = zr * zr, zi * zi
      if zr2 + zi2 > 4.0 then break end
      zi = 2.0 * zr * zi + ci
      zr = zr2 - zi2 + cr
      iter = iter + 1
    end
    if iter == maxiter then row = row + 1 end
    checksum = (checksum * 31 + iter) % 1000003
  end
  inside = inside + row
end
print(string.format("size %d: %d points inside, checksum %d", size, inside, checksum))
