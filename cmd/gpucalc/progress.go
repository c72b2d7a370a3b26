package main

import (
	"fmt"
	"time"
)

// progress returns a callback that shows what fraction of a long task is
// done on stderr, once the task has run for a second (and nothing before);
// call it with 1 at the end to close the line.
func (a *app) progress(what string) func(fraction float64) {
	start := time.Now()
	last := -1
	return func(f float64) {
		if time.Since(start) < time.Second || f >= 1 && last < 0 {
			return
		}
		pct := int(f * 100)
		if pct == last {
			return
		}
		last = pct
		end := "\r"
		if f >= 1 {
			end = "\n"
		}
		fmt.Fprintf(a.stderr, "%s: %d%%%s", what, pct, end)
	}
}
