-- string.format float conversions: %f %e %E %g %G %a and flags.
local f = string.format
print(f("%f %f %f", 3.14159, -0.5, 1e10))
print(f("%5.2f|%-8.3f|%08.2f|%+.1f|% .2f", 3.14159, 2.5, -3.75, 1.25, 2.0))
print(f("%.0f %.0f %.0f %.0f", 0.5, 1.5, 2.5, -0.5))
print(f("%e %E %.2e %.0e", 12345.6789, 0.000123, 1e100, 5.5))
print(f("%g %g %g %g %g", 100000, 1000000, 1e-4, 1e-5, 0.1))
print(f("%G %g %.3g %.10g %#g", 1e-10, 123456789, 3.14159, 1 / 3, 1.0))
print(f("%10.4f|%-10.2e|%10g|", math.pi, math.pi, math.pi))
print(f("%f %f %f", 1 / 0, -1 / 0, 2 ^ 63))
print(f("%.3f", 2 / 3), f("%.20f", 0.1))
print(f("%5.1f%%", 99.44))
print(f("%a %A", 1.0, 0.5), f("%a", 0.1), f("%a", -2.0))
print(f("%.14g", 0.1), f("%.17g", 0.1), f("%.1f", 0.05), f("%.2f", 1.005))
print(f("%f", 3), f("%e", 10), f("%g", 2^53))
print(f("%.99f", 1):len())
print(f("%g", -0.0), f("%f", -0.0), f("%e", 0))
print(f("%g %g", 1e300 * 1e300, -(1e300 * 1e300)))
print(f("%8.3s|", "abcdef"))
print(pcall(f, "%f", "x"))
print(f("%f", "1.5"))
-- table of values in %g and %.3f
for _, x in ipairs({0.001, 0.5, 1, 12.75, 1234567.891, -98.6}) do
  print(f("%-12g %12.3f %12.4e", x, x, x))
end
