#!/usr/bin/env bash
# top.sh — `pmubpf top`, the live view (issue 14): piped, a table per
# --delay window with the demo's hot function at its head; in a terminal
# (tmux: send-keys, capture-pane), the header and table redrawn, 'q' quits
# with status 0 and the terminal's settings as they were.
source "$(dirname "$0")/lib.sh"
need_root top_pipe_tables top_pipe_hot top_pipe_sums top_refuses_output top_tty_table top_tty_quit top_tty_restored top_tty_redraw

SOCK=pmubpf-top-$$
trap 'tmux -L $SOCK kill-server 2>/dev/null; kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT

# Piped: no escape codes, the tables one after another.
"$B/demo" 8 >/dev/null & demo=$!
if timeout 20 "$PMUBPF" top -p $demo --delay 1 -d 3.5 >"$TMP/pipe.out" 2>"$TMP/pipe.err"; then
	n=$(grep -c "^pmubpf top — cpu-clock, pid $demo, window " "$TMP/pipe.out")
	if [[ $n -ge 2 ]] && ! grep -q $'\033' "$TMP/pipe.out"; then
		pass top_pipe_tables
	else
		fail top_pipe_tables "$n tables (want >= 2, no escapes): $(head -c 300 "$TMP/pipe.out" | tr '\n' '|')"
	fi
	# Each table: hash_payload (~45% of the demo's time) among its three
	# heaviest rows, and the rows' flat% (shares of one total) add up to
	# at most 100%, give or take each printed share's rounding (0.005).
	out=$(awk '/^pmubpf top — /   { t++; row = 0; next }
		   $2 ~ /^[0-9.]+%$/  { row++; rows[t]++; sum[t] += $2
		                        if (row <= 3 && $5 == "hash_payload") hot[t] = 1 }
		   END { for (i = 1; i <= t; i++) {
		           if (!hot[i]) print "table " i ": hash_payload not in the top 3"
		           if (sum[i] > 100 + 0.005 * rows[i]) print "table " i ": flat% sums to " sum[i] } }' "$TMP/pipe.out")
	if grep -q 'not in the top' <<<"$out"; then fail top_pipe_hot "$out"; else pass top_pipe_hot; fi
	if grep -q 'sums to' <<<"$out"; then fail top_pipe_sums "$out"; else pass top_pipe_sums; fi
else
	for n in top_pipe_tables top_pipe_hot top_pipe_sums; do
		fail $n "pmubpf top failed: $(tail -n1 "$TMP/pipe.err")"
	done
fi
kill $demo 2>/dev/null; wait $demo 2>/dev/null || true # killed: 143

# It writes nothing, so the output options are refused (one line, 2).
timeout 10 "$PMUBPF" top -o "$TMP/x.pb.gz" >/dev/null 2>"$TMP/o.err"; rc=$?
if [[ $rc -eq 2 && $(wc -l <"$TMP/o.err") -eq 1 && ! -e $TMP/x.pb.gz ]]; then
	pass top_refuses_output
else
	fail top_refuses_output "rc $rc: $(head -n1 "$TMP/o.err")"
fi

# A terminal: tmux's pane, 120x40, the demo running beside it.
"$B/demo" 15 >/dev/null & demo=$!
tmux -L $SOCK new-session -d -s T -x 120 -y 40 \
	"stty -g >'$TMP/stty.before'; '$PMUBPF' top -a --delay 1 2>'$TMP/tty.err'; echo \$? >'$TMP/tty.rc'; stty -g >'$TMP/stty.after'"
seen=
for ((i = 0; i < 80; i++)); do
	tmux -L $SOCK capture-pane -p -t T >"$TMP/pane" 2>/dev/null
	# The header on the first line: the table fits under it, not scrolled.
	if head -n1 "$TMP/pane" | grep -q '^pmubpf top — cpu-clock, all CPUs, window ' &&
	   grep -Eq '%  (hash_payload|msort_with_tmp|cmp|render_page|handle_request)$' "$TMP/pane"; then
		seen=1; break
	fi
	sleep 0.1
done
if [[ -n $seen ]]; then
	pass top_tty_table
else
	fail top_tty_table "pane after 8 s: $(head -c 300 "$TMP/pane" | tr '\n' '|') $(tail -n1 "$TMP/tty.err" 2>/dev/null)"
fi
tmux -L $SOCK send-keys -t T q
for ((i = 0; i < 20; i++)); do [[ -s $TMP/stty.after ]] && break; sleep 0.1; done
rc=$(cat "$TMP/tty.rc" 2>/dev/null)
if [[ $rc == 0 ]]; then
	pass top_tty_quit
else
	fail top_tty_quit "2 s after 'q': status '${rc:-still running}' $(tail -n1 "$TMP/tty.err" 2>/dev/null)"
fi
if [[ -s $TMP/stty.after ]] && cmp -s "$TMP/stty.before" "$TMP/stty.after"; then
	pass top_tty_restored
else
	fail top_tty_restored "stty -g before: $(cat "$TMP/stty.before" 2>/dev/null) after: $(cat "$TMP/stty.after" 2>/dev/null)"
fi

# Each refresh redraws the screen: with 5-row tables, after several
# windows the pane holds one header, on its first line, not a stack.
# The first table is waited for (loading BPF took over 2.5 s in one CI
# run), then three more refreshes.
tmux -L $SOCK new-session -d -s R -x 120 -y 40 "'$PMUBPF' top -a --delay 0.5 -n 5 2>'$TMP/redraw.err'"
for ((i = 0; i < 150; i++)); do
	tmux -L $SOCK capture-pane -p -t R 2>/dev/null | grep -q '^pmubpf top — cpu-clock' && break
	sleep 0.1
done
sleep 1.6
tmux -L $SOCK capture-pane -p -t R >"$TMP/pane2" 2>/dev/null
tmux -L $SOCK send-keys -t R q
n=$(grep -c '^pmubpf top — cpu-clock' "$TMP/pane2")
if [[ $n -eq 1 ]] && head -n1 "$TMP/pane2" | grep -q '^pmubpf top — cpu-clock, all CPUs, window '; then
	pass top_tty_redraw
else
	fail top_tty_redraw "$n headers in the pane: $(head -c 300 "$TMP/pane2" | tr '\n' '|') $(tail -n1 "$TMP/redraw.err" 2>/dev/null)"
fi
kill $demo 2>/dev/null; wait $demo 2>/dev/null || true # killed: 143
