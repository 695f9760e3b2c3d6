set terminal svg size 1200,500 dynamic enhanced font 'sans,11' background '#ffffff'
set output 'fig7.svg'
set datafile missing '?'
set style fill solid 0.9 border -1
set grid ytics lc rgb '#dddddd'
set key top left
set multiplot layout 1,2
set title "callgraph: concurrent exhaustive overhead"
set ylabel "overhead over uninstrumented (%)"
set style data histogram
set style histogram cluster gap 1
set xtics rotate by -30
set yrange [*<0:*]
set key outside below horizontal
plot 'fig7_callgraph.dat' using 2:xtic(1) title "CAB", '' using 3 title "N-way buffering", '' using 4 title "FastForward"
set title "pathprof: concurrent exhaustive overhead"
set ylabel "overhead over uninstrumented (%)"
set style data histogram
set style histogram cluster gap 1
set xtics rotate by -30
set yrange [*<0:*]
set key outside below horizontal
plot 'fig7_pathprof.dat' using 2:xtic(1) title "CAB", '' using 3 title "N-way buffering", '' using 4 title "FastForward"
unset multiplot
