#!/usr/bin/env bash
# tools/soak_plot.sh CSV PNG — tools/soak.sh's measurements as a plot:
# RSS (and its anonymous part, when the CSV has it) and BPF map memory in
# MiB against minutes, processes held on the second axis.
set -euo pipefail
csv=$1 png=$2
anon=$(head -1 "$csv" | grep -c anon_kb || true)
{
	echo "set terminal png size 900,420"
	echo "set output '$png'"
	echo "set xlabel 'minutes'; set ylabel 'MiB'; set y2label 'process records held'"
	echo "set ytics nomirror; set y2tics; set key top left; set grid"
	echo -n "plot '$csv' every ::1 using (\$1/60):(\$2/1024) with linespoints title 'RSS'"
	[[ $anon -eq 1 ]] && echo -n ", '' every ::1 using (\$1/60):(\$9/1024) with linespoints title 'RSS anon (heap)'"
	echo -n ", '' every ::1 using (\$1/60):(\$3/1024) with lines title 'BPF maps'"
	echo ", '' every ::1 using (\$1/60):7 axes x1y2 with impulses title 'processes held'"
} | gnuplot
