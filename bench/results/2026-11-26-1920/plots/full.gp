set terminal svg size 1200,960 dynamic enhanced font 'sans,11' background '#ffffff'
set output 'full.svg'
set datafile missing '?'
set style fill solid 0.9 border -1
set grid ytics lc rgb '#dddddd'
set key top left
set multiplot layout 2,2 title "The deferred-methods paper's comparison on Tandem: synchronous / thread pool / adaptive, more threads than cores"
set title "cachesim, -Xaffinity=none"
set ylabel "slowdown (x uninstrumented, median)"
set style data histogram
set style histogram cluster gap 1
set xtics rotate by -30
set yrange [*<0:*]
set key outside below horizontal
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 front
plot 'full_cachesim_none.dat' using 2:xtic(1) title "thread pool (block)", '' using 3 title "synchronous (self)", '' using 4 title "adaptive"
set title "pathprof, -Xaffinity=none"
set ylabel "slowdown (x uninstrumented, median)"
set style data histogram
set style histogram cluster gap 1
set xtics rotate by -30
set yrange [*<0:*]
set key outside below horizontal
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 front
plot 'full_pathprof_none.dat' using 2:xtic(1) title "thread pool (block)", '' using 3 title "synchronous (self)", '' using 4 title "adaptive"
set title "cachesim, -Xaffinity=auto"
set ylabel "slowdown (x uninstrumented, median)"
set style data histogram
set style histogram cluster gap 1
set xtics rotate by -30
set yrange [*<0:*]
set key outside below horizontal
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 front
plot 'full_cachesim_auto.dat' using 2:xtic(1) title "thread pool (block)", '' using 3 title "synchronous (self)", '' using 4 title "adaptive"
set title "pathprof, -Xaffinity=auto"
set ylabel "slowdown (x uninstrumented, median)"
set style data histogram
set style histogram cluster gap 1
set xtics rotate by -30
set yrange [*<0:*]
set key outside below horizontal
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 front
plot 'full_pathprof_auto.dat' using 2:xtic(1) title "thread pool (block)", '' using 3 title "synchronous (self)", '' using 4 title "adaptive"
unset multiplot
