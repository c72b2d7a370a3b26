// Package peak measures the most heap a piece of work holds while it runs:
// the figure the readers' benchmarks report against their input's size.
package peak

import (
	"runtime"
	"time"
)

// Heap runs f and returns the most heap in use above the start while it
// ran, sampled every 50 ms and once as f returns (after a GC, so garbage
// from before does not count).
func Heap(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	done := make(chan uint64)
	stop := make(chan struct{})
	go func() {
		var peak uint64
		var ms runtime.MemStats
		sample := func() {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > base {
				peak = max(peak, ms.HeapInuse-base)
			}
		}
		for {
			select {
			case <-stop:
				sample()
				done <- peak
				return
			case <-time.After(50 * time.Millisecond):
				sample()
			}
		}
	}()
	f()
	close(stop)
	return <-done
}
