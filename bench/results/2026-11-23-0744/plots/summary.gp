set terminal svg size 900,500 dynamic enhanced font 'sans,11' background '#ffffff'
set output 'summary.svg'
set datafile missing '?'
set style fill solid 0.9 border -1
set grid ytics lc rgb '#dddddd'
set key top left
set title "Tandem: concurrent (CAB) vs sequential analysis overhead"
set ylabel "overhead (%, geomean over programs)"
set style data histogram
set style histogram cluster gap 1
set xtics rotate by -30
set yrange [*<0:*]
set key outside below horizontal
plot 'summary.dat' using 2:xtic(1) title "concurrent, native threads", '' using 3 title "sequential, native", '' using 4 title "concurrent, green threads", '' using 5 title "sequential, green"
