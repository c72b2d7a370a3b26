package main

import (
	"fmt"
	"io"
	"time"

	"github.com/gpucalc/gpucalc/units"
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

// rowProgress returns a callback for a stream of rows of unknown length: once
// the run has taken a second, it shows the rows done on stderr, at most four
// times a second; call done when the stream ends to close the line.
func (f *factory) rowProgress(what string) (row func(n int), done func()) {
	start := time.Now()
	var next time.Time
	shown := false
	row = func(n int) {
		if n%1024 != 0 { // the clock is read once per 1024 rows
			return
		}
		now := time.Now()
		if now.Sub(start) < time.Second || now.Before(next) {
			return
		}
		next, shown = now.Add(250*time.Millisecond), true
		fmt.Fprintf(f.ErrOut, "%s: %d rows\r", what, n)
	}
	done = func() {
		if shown {
			fmt.Fprintln(f.ErrOut)
		}
	}
	return row, done
}

// readProgress returns a callback for the bytes of an input as they are
// read (size: the input's, 0 when unknown): once reading has taken a
// second, it shows the share read (or the bytes) on stderr, at most four
// times a second; call done at the end to close the line.
func (f *factory) readProgress(what string, size int64) (read func(n int64), done func()) {
	start := time.Now()
	var next time.Time
	var total int64
	calls, shown := 0, false
	read = func(n int64) {
		total += n
		if calls++; calls%64 != 0 { // the clock is read once per 64 reads
			return
		}
		now := time.Now()
		if now.Sub(start) < time.Second || now.Before(next) {
			return
		}
		next, shown = now.Add(250*time.Millisecond), true
		if size > 0 {
			fmt.Fprintf(f.ErrOut, "%s: %d%%\r", what, min(100, 100*total/size))
		} else {
			fmt.Fprintf(f.ErrOut, "%s: %s\r", what, units.FormatSize(total))
		}
	}
	done = func() {
		if shown {
			fmt.Fprintln(f.ErrOut)
			shown = false
		}
	}
	return read, done
}

// progressReader reports the bytes read through it.
type progressReader struct {
	r    io.Reader
	read func(n int64)
}

func (p progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.read(int64(n))
	return n, err
}
