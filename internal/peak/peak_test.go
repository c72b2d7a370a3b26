package peak

import (
	"testing"
	"time"
)

// Holding 256 MiB for 200 ms shows as at least that much heap; sleeping
// with nothing held shows as far less.
func TestHeap(t *testing.T) {
	const size = 256 << 20
	var keep []byte
	got := Heap(func() {
		keep = make([]byte, size)
		for i := range keep {
			keep[i] = 1
		}
		time.Sleep(200 * time.Millisecond)
	})
	// The base can lose a few pages the runtime frees meanwhile (it
	// measured 255 of 256 MiB under load): 1% of slack.
	if got < size*99/100 {
		t.Errorf("holding %d MiB: peak %d MiB", size>>20, got>>20)
	}
	keep = nil
	if idle := Heap(func() { time.Sleep(120 * time.Millisecond) }); idle > 16<<20 {
		t.Errorf("idle: peak %d MiB", idle>>20)
	}
}
