// http_client — scrapes pmubpf --http the way Parca and Grafana Alloy do,
// with the pprof parser they use (github.com/google/pprof/profile), and
// checks what each of them checks before it keeps a profile:
//
//	Parca:  status exactly 200, a non-empty body, profile.ParseData ok
//	Alloy:  status 2xx, Content-Type application/octet-stream (not HTML,
//	        not JSON), a non-empty body
//
// and beyond them what pmubpf promises: time_nanos at the request,
// duration_nanos the seconds asked for, the answer within 3 s after the
// window, and the workload's functions in the profile. Several clients
// scrape at an interval, staggered so that their windows overlap.
//
// Prints one line per scrape and a summary; exits 1 if any check failed.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"
)

type scrape struct {
	client, round int
	start, end    time.Time
	err           error
	samples       int
	duration      time.Duration
}

func check(url, token string, seconds float64, slack time.Duration, funcs []string, s *scrape) {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		s.err = err
		return
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: time.Duration((seconds + 30) * float64(time.Second))}
	s.start = time.Now()
	resp, err := c.Do(req)
	if err != nil {
		s.err = err
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	s.end = time.Now()
	if err != nil {
		s.err = err
		return
	}
	// Parca: exactly 200, non-empty, parses.
	if resp.StatusCode != http.StatusOK {
		s.err = fmt.Errorf("parca: status %d, want 200: %q", resp.StatusCode, bytes.TrimSpace(body))
		return
	}
	if len(body) == 0 {
		s.err = fmt.Errorf("parca/alloy: empty profile")
		return
	}
	// Alloy: 2xx, octet-stream, not an HTML or JSON page.
	ct := resp.Header.Get("Content-Type")
	if resp.StatusCode/100 != 2 || !strings.HasPrefix(ct, "application/octet-stream") ||
		strings.Contains(ct, "html") || strings.Contains(ct, "json") {
		s.err = fmt.Errorf("alloy: status %d, Content-Type %q", resp.StatusCode, ct)
		return
	}
	p, err := profile.ParseData(body)
	if err != nil {
		s.err = fmt.Errorf("parca: ParseData: %v", err)
		return
	}
	if err := p.CheckValid(); err != nil {
		s.err = fmt.Errorf("CheckValid: %v", err)
		return
	}
	s.samples = len(p.Sample)
	s.duration = time.Duration(p.DurationNanos)
	start := time.Unix(0, p.TimeNanos)
	want := time.Duration(seconds * float64(time.Second))
	switch {
	case p.TimeNanos == 0 || p.DurationNanos == 0:
		s.err = fmt.Errorf("time_nanos %d, duration_nanos %d: want both set", p.TimeNanos, p.DurationNanos)
	// The window opens and closes at the recorder's next step after the
	// request and its deadline: ~0.1 s, more while it builds another
	// profile (symbolizing new binaries); time_nanos and duration_nanos
	// are those of the data, exactly.
	case start.Before(s.start.Add(-50*time.Millisecond)) || start.After(s.start.Add(slack)):
		s.err = fmt.Errorf("time_nanos %s is not at the request (%s)", start.Format(time.RFC3339Nano), s.start.Format(time.RFC3339Nano))
	case s.duration < want-50*time.Millisecond || s.duration > want+slack:
		s.err = fmt.Errorf("duration_nanos %s, asked for %s", s.duration, want)
	case s.end.Sub(s.start) > want+3*time.Second:
		s.err = fmt.Errorf("answered after %s, more than 3 s after the %s window", s.end.Sub(s.start), want)
	case s.samples == 0:
		s.err = fmt.Errorf("no samples")
	}
	if s.err != nil {
		return
	}
	have := map[string]bool{}
	for _, l := range p.Location {
		for _, ln := range l.Line {
			if ln.Function != nil {
				have[ln.Function.Name] = true
			}
		}
	}
	for _, f := range funcs {
		if f != "" && !have[f] {
			s.err = fmt.Errorf("function %s not in the profile (%d samples)", f, s.samples)
			return
		}
	}
}

func main() {
	url := flag.String("url", "", "profile URL, e.g. http://127.0.0.1:6060/debug/pprof/profile?seconds=3")
	seconds := flag.Float64("seconds", 3, "the seconds the URL asks for")
	clients := flag.Int("clients", 3, "scrapers at once")
	rounds := flag.Int("rounds", 3, "scrapes per scraper")
	interval := flag.Duration("interval", 5*time.Second, "between one scraper's scrapes")
	stagger := flag.Duration("stagger", time.Second, "between the scrapers' first scrapes")
	funcsFlag := flag.String("func", "", "functions every profile must contain (comma-separated)")
	slack := flag.Duration("slack", time.Second, "how late a window may open or close")
	tokenFile := flag.String("token-file", "", "send Authorization: Bearer (the file's first line)")
	flag.Parse()
	token := ""
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			fmt.Println("FAIL:", err)
			os.Exit(1)
		}
		token = strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	}
	funcs := strings.Split(*funcsFlag, ",")
	var mu sync.Mutex
	var all []*scrape
	var wg sync.WaitGroup
	t0 := time.Now()
	for c := 0; c < *clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for r := 0; r < *rounds; r++ {
				at := t0.Add(time.Duration(c) * *stagger).Add(time.Duration(r) * *interval)
				time.Sleep(time.Until(at))
				s := &scrape{client: c, round: r}
				check(*url, token, *seconds, *slack, funcs, s)
				mu.Lock()
				all = append(all, s)
				mu.Unlock()
			}
		}(c)
	}
	wg.Wait()
	failed, overlaps := 0, 0
	for i, s := range all {
		if s.err != nil {
			failed++
			fmt.Printf("scrape client=%d round=%d: FAIL: %v\n", s.client, s.round, s.err)
			continue
		}
		fmt.Printf("scrape client=%d round=%d: ok: %d samples, duration %.3f s, answered in %.3f s\n",
			s.client, s.round, s.samples, s.duration.Seconds(), s.end.Sub(s.start).Seconds())
		for _, o := range all[i+1:] {
			if o.err == nil && o.start.Before(s.end) && s.start.Before(o.end) {
				overlaps++
			}
		}
	}
	fmt.Printf("%d scrapes, %d failed, %d overlapping pairs\n", len(all), failed, overlaps)
	if failed > 0 || (*clients > 1 && overlaps == 0) {
		os.Exit(1)
	}
}
