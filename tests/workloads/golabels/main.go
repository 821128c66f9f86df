// golabels_work — a Go program that labels its work with runtime/pprof's
// pprof.Do (issue 12) and measures, itself, the CPU time spent under each
// label: the truth pmubpf's Go-labels reader is checked against.
//
// Three goroutines, each locked to its own OS thread (so that the
// thread's clock is the goroutine's: a task-clock counter on it, the time
// it held a CPU as cpu-clock samples see it, steal included; see
// tests/workloads/taskclock.h; CLOCK_THREAD_CPUTIME_ID where perf events
// are refused), run under pprof.Do with tenant=a, b, c. They burn at different
// duty cycles (a always, b half, c a quarter of each 4 ms round), so the
// shares differ and stay the same over any window of a few rounds (-p
// attaches after start). tenant=b's work runs in a goroutine started
// inside pprof.Do, which inherits the labels (Go's rule), under a nested
// pprof.Do adding req=1 (two labels in one set). tenant=c's set has 12
// labels (k1=1 ... k11=11 besides it): a Go map past one bucket.
//
// "golabels_work requests SECONDS [US]": a server labelling each request
// (issue 40): for SECONDS, pprof.Do with {req=N, trace_id=32 hex digits}
// around ~25 us (US) of work, a new label set each time (~30000 a
// second); prints "requests N".
//
// Usage: golabels_work SECONDS [DELAY]; prints "truth tenant=X
// NANOSECONDS". DELAY seconds first let a system-wide pmubpf read this
// process before the work starts: it burns 50 ms unlabelled (pmubpf
// reads a process at its first sample, and a sleeping one is never
// sampled), then sleeps the rest. Samples before the read have no
// labels (the Go offsets are not known yet), so without it the labelled
// samples would be those after the read, and the truth the whole run's.
// SIGUSR1 then SIGUSR2 mark a window (a -p recording's): the truth
// printed is then the CPU time between the two, not the whole run's, so
// that a change of load on the machine cannot make the window differ
// from its truth. Each worker's clock is read at the marks from its
// counter (any thread may read it).
package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID

func threadCPU() int64 {
	var ts syscall.Timespec
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

// perfAttr is struct perf_event_attr as of PERF_ATTR_SIZE_VER0 (64 bytes).
type perfAttr struct {
	typ, size                                     uint32
	config, period, sampleType, readFormat, flags uint64
	wakeup, bpType                                uint32
	config1                                       uint64
}

// threadClock is a thread's clock: its task-clock counter (fd >= 0) or,
// where perf events are refused, CLOCK_THREAD_CPUTIME_ID (fd < 0, read
// only on the thread itself: the window marks then read schedstat).
type threadClock struct{ fd, tid int }

var clockMode int32 // 0 undecided, 1 task-clock, 2 thread CPU time

// openClock opens the calling thread's clock; every thread of the run
// uses the same kind (decided by the first).
func openClock() threadClock {
	a := perfAttr{typ: 1 /* PERF_TYPE_SOFTWARE */, config: 1 /* TASK_CLOCK */}
	a.size = uint32(unsafe.Sizeof(a))
	fd, _, e := syscall.RawSyscall6(syscall.SYS_PERF_EVENT_OPEN, uintptr(unsafe.Pointer(&a)),
		0, ^uintptr(0), ^uintptr(0), 8 /* PERF_FLAG_FD_CLOEXEC */, 0)
	c := threadClock{fd: int(fd), tid: syscall.Gettid()}
	want := int32(1)
	if e != 0 {
		c.fd, want = -1, 2
	}
	if !atomic.CompareAndSwapInt32(&clockMode, 0, want) && atomic.LoadInt32(&clockMode) != want {
		panic("threads disagree on the clock")
	}
	return c
}

// read is the clock's value in ns: from any thread for a counter, from
// its own thread otherwise (other is then true for a read from another).
func (c threadClock) read(other bool) int64 {
	if c.fd < 0 {
		if other {
			return taskCPU(c.tid)
		}
		return threadCPU()
	}
	var b [8]byte
	if n, err := syscall.Read(c.fd, b[:]); n != 8 || err != nil {
		panic(fmt.Sprintf("reading task-clock: %v", err))
	}
	return int64(binary.LittleEndian.Uint64(b[:]))
}

var sink uint64

//go:noinline
func burn(d time.Duration) {
	end := time.Now().Add(d)
	x := sink
	for time.Now().Before(end) {
		for i := 0; i < 2000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink = x
}

// taskCPU is thread tid's CPU time in ns (schedstat's first field).
func taskCPU(tid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/schedstat", tid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseInt(f[0], 10, 64)
	return v
}

var clocks sync.Map // label -> its worker's threadClock

// work runs rounds of `busy` burning then 4ms-busy asleep until the
// deadline, on this goroutine's own thread, and returns its CPU time.
func work(label string, deadline time.Time, busy time.Duration) int64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	clk := openClock()
	clocks.Store(label, clk)
	start := clk.read(false)
	for time.Now().Before(deadline) {
		burn(busy)
		if idle := 4*time.Millisecond - busy; idle > 0 {
			time.Sleep(idle)
		}
	}
	return clk.read(false) - start
}

// requests: pprof.Do per request for secs seconds (see the top).
func requests(secs float64, work time.Duration) {
	ctx := context.Background()
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	n := 0
	for time.Now().Before(end) {
		n++
		trace := fmt.Sprintf("%016x%016x", uint64(n)*0x9e3779b97f4a7c15, uint64(n))
		pprof.Do(ctx, pprof.Labels("req", strconv.Itoa(n), "trace_id", trace), func(context.Context) {
			burn(work)
		})
	}
	fmt.Printf("requests %d\n", n)
}

func main() {
	if len(os.Args) > 2 && os.Args[1] == "requests" {
		secs, _ := strconv.ParseFloat(os.Args[2], 64)
		work := 25 * time.Microsecond
		if len(os.Args) > 3 {
			if us, err := strconv.Atoi(os.Args[3]); err == nil && us > 0 {
				work = time.Duration(us) * time.Microsecond
			}
		}
		requests(secs, work)
		return
	}
	secs := 3.0
	if len(os.Args) > 1 {
		if v, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			secs = v
		}
	}
	if len(os.Args) > 2 {
		if v, err := strconv.ParseFloat(os.Args[2], 64); err == nil {
			d := time.Duration(v * float64(time.Second))
			burn(50 * time.Millisecond)
			time.Sleep(d - 50*time.Millisecond)
		}
	}
	// The window marks: CPU time per label at SIGUSR1 and at SIGUSR2.
	marks := make(chan os.Signal, 2)
	signal.Notify(marks, syscall.SIGUSR1, syscall.SIGUSR2)
	var wmu sync.Mutex
	window := map[string]int64{}
	windowed := false
	go func() {
		for sig := range marks {
			wmu.Lock()
			clocks.Range(func(k, v any) bool {
				if sig == syscall.SIGUSR1 {
					window[k.(string)] -= v.(threadClock).read(true)
				} else {
					window[k.(string)] += v.(threadClock).read(true)
					windowed = true
				}
				return true
			})
			wmu.Unlock()
		}
	}()
	deadline := time.Now().Add(time.Duration(secs * float64(time.Second)))
	var wg sync.WaitGroup
	var mu sync.Mutex
	truth := map[string]int64{}
	add := func(k string, ns int64) { mu.Lock(); truth[k] += ns; mu.Unlock() }
	ctx := context.Background()

	wg.Add(3)
	go pprof.Do(ctx, pprof.Labels("tenant", "a"), func(context.Context) {
		defer wg.Done()
		add("tenant=a", work("tenant=a", deadline, 4*time.Millisecond))
	})
	go pprof.Do(ctx, pprof.Labels("tenant", "b"), func(ctx context.Context) {
		pprof.Do(ctx, pprof.Labels("req", "1"), func(context.Context) {
			// A goroutine started here inherits tenant=b, req=1.
			go func() {
				defer wg.Done()
				add("tenant=b", work("tenant=b", deadline, 2*time.Millisecond))
			}()
		})
	})
	// tenant=c's set has 12 labels: past 8, a go1.18-1.23 map has two
	// buckets, which BPF leaves to pmubpf's userspace reader.
	go pprof.Do(ctx, pprof.Labels("tenant", "c", "k1", "1", "k2", "2", "k3", "3", "k4", "4",
		"k5", "5", "k6", "6", "k7", "7", "k8", "8", "k9", "9", "k10", "10", "k11", "11"), func(context.Context) {
		defer wg.Done()
		add("tenant=c", work("tenant=c", deadline, 1*time.Millisecond))
	})
	wg.Wait()
	wmu.Lock()
	if windowed {
		truth = window
	}
	wmu.Unlock()
	for _, k := range []string{"tenant=a", "tenant=b", "tenant=c"} {
		fmt.Printf("truth %s %d\n", k, truth[k])
	}
}
