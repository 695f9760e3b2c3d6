set terminal svg size 1200,480 dynamic enhanced font 'sans,11' background '#ffffff'
set output 'fig10.svg'
set datafile missing '?'
set style fill solid 0.9 border -1
set grid ytics lc rgb '#dddddd'
set key top left
set multiplot layout 1,2
set logscale x 2
set xlabel 'CAB ring size (KB)'
set format x '%g'
set xtics (16,64,256,1024,4096,16384)
set title 'pathprof overhead vs ring size'
set ylabel 'overhead (%)'
plot 'fig10.dat' using 1:2 with linespoints lw 2 title "richards", 'fig10.dat' using 1:4 with linespoints lw 2 title "json"
set title 'producer blocked time (sum over CABs)'
set ylabel 'blocked (ms, median)'
set yrange [0:*]
plot 'fig10.dat' using 1:3 with linespoints lw 2 title "richards", 'fig10.dat' using 1:5 with linespoints lw 2 title "json"
unset multiplot
