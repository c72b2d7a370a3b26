package trace

import (
	"errors"
	"fmt"
	"runtime"

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
	// part is the size of the parts the trace is cut into to be read on
	// several cores: 0 for partSize's default, negative to read it on one.
	part int
}

// defaultPart is the size of the parts a trace is read in on several
// cores: large enough that handing one over costs nothing, small enough
// that a few in flight hold little memory.
const defaultPart = 4 << 20

// partSize is the size of the parts the trace is read in, 0 to read it
// on one core: one core or fewer than two parts to an event's bound (an
// adopted part never meets it, as the event read on one core would not).
func (lim bounds) partSize() int {
	size := lim.part
	if size == 0 {
		size = defaultPart
	}
	if size < 0 || runtime.GOMAXPROCS(0) < 2 {
		return 0
	}
	size = int(min(int64(size), lim.event/2))
	if size < 256 {
		return 0
	}
	return size
}

// errEventSize is an event, or a run of blank space, over maxEventBytes.
var errEventSize = errors.New("an event too large")

// limitError words an error that stopped reading at a limit, saying which
// and what to do; nil for other errors.
func (s *scanner) limitError(err error) error {
	var se *rows.SizeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("the trace is %w decompressed (the most gpucalc reads); %s", se, fewerSteps)
	case errors.Is(err, errEventSize):
		return fmt.Errorf("line %d: more than %s without a complete event (torch.profiler's events are a few KiB; is this a torch.profiler trace?)", s.line, rows.Size(s.lim.event))
	case errors.Is(err, rows.ErrBomb):
		return rows.ErrBomb
	}
	return nil
}
