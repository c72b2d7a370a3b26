package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/gpucalc/gpucalc/rows"
)

// Limits on what a trace may hold. A day-long profile of a large model is
// a few GiB of JSON and a few million events; beyond these, memory (about
// 200 bytes per event kept) and time grow with nothing more to learn.
const (
	// MaxBytes is the largest trace read, decompressed.
	MaxBytes = 8 << 30
	// MaxEvents is the most events kept: ops, kernels, runtime calls,
	// copies and sets together.
	MaxEvents = 16_000_000
	// maxEventBytes bounds one event, a top-level value other than
	// traceEvents, and the blank space between them: torch.profiler's
	// are a few KiB.
	maxEventBytes = 16 << 20
)

// fewerSteps says how to make a smaller trace.
const fewerSteps = "profile fewer steps, e.g. torch.profiler.schedule(wait=1, warmup=1, active=1)"

// bounds are a read's bounds: MaxBytes, MaxEvents and maxEventBytes, less
// in tests.
type bounds struct {
	bytes  int64
	events int
	event  int64
}

// errEventSize is an event, or a run of blank space, over maxEventBytes.
var errEventSize = errors.New("an event too large")

// source feeds the JSON decoder: it counts lines, for messages, and fails
// once the decoder has read more than lim.event bytes since the end of the
// last value it decoded (mark), so that no event, string or run of blank
// space, however long, is buffered whole.
type source struct {
	r     io.Reader
	lim   bounds
	read  int64 // bytes handed to the decoder
	lines int   // newlines among them
	mark  int64 // the decoder's offset after the last complete value
	dec   *json.Decoder
}

func newSource(r io.Reader, lim bounds) *source {
	s := &source{r: r, lim: lim}
	s.dec = json.NewDecoder(s)
	return s
}

func (s *source) Read(p []byte) (int, error) {
	left := s.lim.event - (s.read - s.mark)
	if left < 0 {
		return 0, errEventSize
	}
	if int64(len(p)) > left+1 {
		p = p[:left+1]
	}
	// Fill p: the decoder rescans its buffer's blank space after every
	// read, so short reads (a gzip stream's) would make a run of blank
	// space cost its length squared.
	n := 0
	var err error
	for n < len(p) && err == nil {
		var m int
		m, err = s.r.Read(p[n:])
		n += m
	}
	if n > 0 && errors.Is(err, io.EOF) {
		err = nil // the next read says it
	}
	s.read += int64(n)
	s.lines += bytes.Count(p[:n], []byte{'\n'})
	return n, err
}

// done marks the end of a value the decoder has read whole.
func (s *source) done() { s.mark = s.dec.InputOffset() }

// line is the input line the decoder has reached.
func (s *source) line() int {
	n := s.lines + 1
	if b, err := io.ReadAll(s.dec.Buffered()); err == nil {
		n -= bytes.Count(b, []byte{'\n'})
	}
	return n
}

// limitError words an error that stopped reading at a limit, saying which
// and what to do; nil for other errors.
func (s *source) limitError(err error) error {
	var se *rows.SizeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("the trace is %w decompressed (the most gpucalc reads); %s", se, fewerSteps)
	case errors.Is(err, errEventSize):
		return fmt.Errorf("line %d: more than %s without a complete event (torch.profiler's events are a few KiB; is this a torch.profiler trace?)", s.lines+1, rows.Size(s.lim.event))
	case errors.Is(err, rows.ErrBomb):
		return rows.ErrBomb
	}
	return nil
}
