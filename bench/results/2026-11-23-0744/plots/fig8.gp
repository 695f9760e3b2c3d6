set terminal svg size 900,500 dynamic enhanced font 'sans,11' background '#ffffff'
set output 'fig8.svg'
set datafile missing '?'
set style fill solid 0.9 border -1
set grid ytics lc rgb '#dddddd'
set key top left
set title "Fig. 8: exhaustive overhead breakdown, native threads"
set ylabel "overhead over uninstrumented (%, geomean of 9 programs)"
set style data histogram
set style histogram cluster gap 1
set xtics rotate by -30
set yrange [*<0:*]
set key outside below horizontal
plot 'fig8.dat' using 2:xtic(1) title "instrument", '' using 3 title "enqueue", '' using 4 title "communicate", '' using 5 title "concurrent analyzer", '' using 6 title "sequential analyzer"
