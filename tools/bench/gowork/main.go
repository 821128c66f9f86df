// gowork — the Go workloads of pmubpf's accuracy benchmark: the Go
// proposal's serial.go and goroutine.go (golang/go#36821), with the ground
// truth measured instead of assumed, so Go's own CPU profiler
// (runtime/pprof) and pmubpf can be scored on the same run.
//
//	gowork serial SECONDS TRUTH [CPUPROFILE]
//	gowork goroutines SECONDS TRUTH [CPUPROFILE]
//
// serial: one goroutine calls f1..f10 in turn until SECONDS have passed;
// fK runs K units of the same loop, so fK's share is about K/55.
// goroutines: ten goroutines t1..t10 run the same loop until SECONDS have
// passed; with GOMAXPROCS below ten the scheduler decides their shares.
//
// Every goroutine that does measured work is locked to its own OS thread
// (runtime.LockOSThread), so its thread's CPU clock measures exactly its
// work: TRUTH gets "truth main.fK NS" (or main.tK) lines, the same format
// as the C workloads. With CPUPROFILE, runtime/pprof records a CPU profile
// (its default 100 Hz) over the same span.
//
// Each fK/tK is go:noinline with its loop in its own body, so the leaf
// frame of a sample in the loop is fK (tK) for every profiler.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

const unit = 40000

var sink uint64

// threadCPU is CLOCK_THREAD_CPUTIME_ID (3) of the calling OS thread, in ns.
func threadCPU() int64 {
	var ts syscall.Timespec
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

//go:noinline
func f1() {
	x := sink | 1
	for i := 0; i < 1*unit; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	sink = x
}

//go:noinline
func f2() {
	x := sink | 1
	for i := 0; i < 2*unit; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	sink = x
}

//go:noinline
func f3() {
	x := sink | 1
	for i := 0; i < 3*unit; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	sink = x
}

//go:noinline
func f4() {
	x := sink | 1
	for i := 0; i < 4*unit; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	sink = x
}

//go:noinline
func f5() {
	x := sink | 1
	for i := 0; i < 5*unit; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	sink = x
}

//go:noinline
func f6() {
	x := sink | 1
	for i := 0; i < 6*unit; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	sink = x
}

//go:noinline
func f7() {
	x := sink | 1
	for i := 0; i < 7*unit; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	sink = x
}

//go:noinline
func f8() {
	x := sink | 1
	for i := 0; i < 8*unit; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	sink = x
}

//go:noinline
func f9() {
	x := sink | 1
	for i := 0; i < 9*unit; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	sink = x
}

//go:noinline
func f10() {
	x := sink | 1
	for i := 0; i < 10*unit; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	sink = x
}

//go:noinline
func t1(stop *int32) int64 {
	x := sink | 1
	for atomic.LoadInt32(stop) == 0 {
		for i := 0; i < 10000; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	sink = x
	return threadCPU()
}

//go:noinline
func t2(stop *int32) int64 {
	x := sink | 1
	for atomic.LoadInt32(stop) == 0 {
		for i := 0; i < 10000; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	sink = x
	return threadCPU()
}

//go:noinline
func t3(stop *int32) int64 {
	x := sink | 1
	for atomic.LoadInt32(stop) == 0 {
		for i := 0; i < 10000; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	sink = x
	return threadCPU()
}

//go:noinline
func t4(stop *int32) int64 {
	x := sink | 1
	for atomic.LoadInt32(stop) == 0 {
		for i := 0; i < 10000; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	sink = x
	return threadCPU()
}

//go:noinline
func t5(stop *int32) int64 {
	x := sink | 1
	for atomic.LoadInt32(stop) == 0 {
		for i := 0; i < 10000; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	sink = x
	return threadCPU()
}

//go:noinline
func t6(stop *int32) int64 {
	x := sink | 1
	for atomic.LoadInt32(stop) == 0 {
		for i := 0; i < 10000; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	sink = x
	return threadCPU()
}

//go:noinline
func t7(stop *int32) int64 {
	x := sink | 1
	for atomic.LoadInt32(stop) == 0 {
		for i := 0; i < 10000; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	sink = x
	return threadCPU()
}

//go:noinline
func t8(stop *int32) int64 {
	x := sink | 1
	for atomic.LoadInt32(stop) == 0 {
		for i := 0; i < 10000; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	sink = x
	return threadCPU()
}

//go:noinline
func t9(stop *int32) int64 {
	x := sink | 1
	for atomic.LoadInt32(stop) == 0 {
		for i := 0; i < 10000; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	sink = x
	return threadCPU()
}

//go:noinline
func t10(stop *int32) int64 {
	x := sink | 1
	for atomic.LoadInt32(stop) == 0 {
		for i := 0; i < 10000; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	sink = x
	return threadCPU()
}

func serial(secs float64) map[string]int64 {
	fns := []func(){f1, f2, f3, f4, f5, f6, f7, f8, f9, f10}
	var truth [10]int64
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	for time.Now().Before(end) {
		for k, f := range fns {
			t0 := threadCPU()
			f()
			truth[k] += threadCPU() - t0
		}
	}
	out := map[string]int64{}
	for k := range fns {
		out[fmt.Sprintf("main.f%d", k+1)] = truth[k]
	}
	return out
}

func goroutines(secs float64) map[string]int64 {
	fns := []func(*int32) int64{t1, t2, t3, t4, t5, t6, t7, t8, t9, t10}
	var truth [10]int64
	var stop int32
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(len(fns))
	done.Add(len(fns))
	for k, f := range fns {
		go func(k int, f func(*int32) int64) {
			runtime.LockOSThread()
			t0 := threadCPU()
			ready.Done()
			<-start
			truth[k] = f(&stop) - t0
			done.Done()
		}(k, f)
	}
	ready.Wait()
	close(start)
	time.Sleep(time.Duration(secs * float64(time.Second)))
	atomic.StoreInt32(&stop, 1)
	done.Wait()
	out := map[string]int64{}
	for k := range fns {
		out[fmt.Sprintf("main.t%d", k+1)] = truth[k]
	}
	return out
}

func main() {
	if len(os.Args) < 4 || (os.Args[1] != "serial" && os.Args[1] != "goroutines") {
		fmt.Fprintln(os.Stderr, "usage: gowork serial|goroutines SECONDS TRUTH [CPUPROFILE]")
		os.Exit(2)
	}
	secs, err := strconv.ParseFloat(os.Args[2], 64)
	if err != nil || secs <= 0 {
		fmt.Fprintln(os.Stderr, "gowork: bad SECONDS")
		os.Exit(2)
	}
	if len(os.Args) > 4 {
		f, err := os.Create(os.Args[4])
		if err != nil {
			fmt.Fprintln(os.Stderr, "gowork:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "gowork:", err)
			os.Exit(1)
		}
		defer f.Close()
	}
	var truth map[string]int64
	if os.Args[1] == "serial" {
		truth = serial(secs)
	} else {
		truth = goroutines(secs)
	}
	pprof.StopCPUProfile()
	out, err := os.Create(os.Args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, "gowork:", err)
		os.Exit(1)
	}
	for k := 1; k <= 10; k++ {
		name := fmt.Sprintf("main.f%d", k)
		if os.Args[1] != "serial" {
			name = fmt.Sprintf("main.t%d", k)
		}
		fmt.Fprintf(out, "truth %s %d\n", name, truth[name])
	}
	if err := out.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "gowork:", err)
		os.Exit(1)
	}
}
