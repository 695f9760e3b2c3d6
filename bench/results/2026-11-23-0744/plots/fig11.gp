set terminal svg size 1100,800 dynamic enhanced font 'sans,11' background '#ffffff'
set output 'fig11.svg'
set datafile missing '?'
set style fill solid 0.9 border -1
set grid ytics lc rgb '#dddddd'
set key top left
set multiplot layout 2,2
set logscale x 10
set xlabel 'sampling rate (%)'
set format x '%g'
set title 'callgraph: overhead'
set ylabel 'overhead (%, geomean)'
unset logscale y
set yrange [*:*]
plot 'fig11.dat' using 1:2 with linespoints lw 2 title 'sampling', '' using 1:3 with lines dt 2 lw 2 title 'exhaustive'
set title 'callgraph: error rate'
set ylabel 'error (%, mean over programs)'
set logscale y 10
plot 'fig11.dat' using 1:4 with linespoints lw 2 title 'all items (paper)', '' using 1:5 with linespoints lw 2 title 'items seen >= 100 times', 3 with lines dt 3 title '3%'
set title 'pathprof: overhead'
set ylabel 'overhead (%, geomean)'
unset logscale y
set yrange [*:*]
plot 'fig11.dat' using 1:6 with linespoints lw 2 title 'sampling', '' using 1:7 with lines dt 2 lw 2 title 'exhaustive'
set title 'pathprof: error rate'
set ylabel 'error (%, mean over programs)'
set logscale y 10
plot 'fig11.dat' using 1:8 with linespoints lw 2 title 'all items (paper)', '' using 1:9 with linespoints lw 2 title 'items seen >= 100 times', 3 with lines dt 3 title '3%'
unset multiplot
