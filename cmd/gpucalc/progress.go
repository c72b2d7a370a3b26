package main

import (
	"fmt"
	"time"
)

// progress returns a callback that shows what fraction of a long task is
// done on stderr, once the task has run for a second (and nothing before);
// call it with 1 at the end to close the line.
func (f *factory) progress(what string) func(fraction float64) {
	start := time.Now()
	last := -1
	return func(done float64) {
		if time.Since(start) < time.Second || done >= 1 && last < 0 {
			return
		}
		pct := int(done * 100)
		if pct == last {
			return
		}
		last = pct
		end := "\r"
		if done >= 1 {
			end = "\n"
		}
		fmt.Fprintf(f.ErrOut, "%s: %d%%%s", what, pct, end)
	}
}
