set terminal svg size 900,500 dynamic enhanced font 'sans,11' background '#ffffff'
set output 'costmodel.svg'
set datafile missing '?'
set style fill solid 0.9 border -1
set grid ytics lc rgb '#dddddd'
set key top left
set title "Cost model (section 4): predicted vs measured, native threads"
set ylabel "time / A (uninstrumented)"
set style data histogram
set style histogram cluster gap 1
set xtics rotate by -30
set yrange [*<0:*]
set key outside below horizontal
plot 'costmodel.dat' using 2:xtic(1) title "E\\_c^A = A+A\\_i+A\\_q", '' using 3 title "E\\_c^P = P+P\\_c", '' using 4 title "E\\_c predicted", '' using 5 title "E\\_c measured", '' using 6 title "E\\_s measured"
