package trace

import (
	"bytes"
	"io"
	"runtime"
)

// A trace is read on every core by cutting its bytes into parts where an
// event seems to begin (after "}", "," and blank space, a "{") and reading
// each such part ahead on a goroutine of its own, as if it were a list of
// events. The scanner still reads the trace in order, and takes a part
// read ahead whole (adopt) only where it stands at the part's first byte
// about to read an event of traceEvents, the part read cleanly to its end
// (no error, no limit met, ending after a "," with only blank space
// after it), and it began as far from the last event's end as the reader
// stands. Anything else (a cut inside a string, an error, the first part)
// it reads itself, as on one core: errors, their lines and the limits are
// those of one core by construction.

// part is a run of the trace's bytes as read.
type part struct {
	data []byte
	err  error // the read's error after data (the last part)
	// gap is how far data begins after the end of the event before it,
	// where data seems to begin an event (else -1).
	gap int64
	// done is closed once the part is read ahead (nil: it is not read
	// ahead); ahead is what was read, nil unless it read cleanly.
	done  chan struct{}
	ahead *ahead
}

// ahead is a part's events read ahead.
type ahead struct {
	gap           int64
	events, lines int
	tail          int64 // the "," and blank space after the last event
	kept          int   // ops, kernels, launches and transfers
	ops           []Op
	kernels       []Kernel
	launches      []Launch
	transfers     []Transfer
}

// feed reads the trace into parts on a goroutine of its own, hands them to
// the scanner in order (parts) and to readers ahead (todo), and takes back
// their arrays once the scanner is past them (free).
type feed struct {
	parts chan *part
	todo  chan *part
	free  chan []byte
	stop  chan struct{}
}

// maxReadersAhead bounds the goroutines reading parts ahead, and so the
// parts in flight (twice as many, and two: 40 MiB at most).
const maxReadersAhead = 4

// newFedScanner is a scanner of r that reads its parts ahead on every
// core (up to maxReadersAhead).
func newFedScanner(r io.Reader, lim bounds, size int) *scanner {
	workers := min(runtime.GOMAXPROCS(0), maxReadersAhead)
	inFlight := 2*workers + 2
	f := &feed{
		parts: make(chan *part, inFlight),
		todo:  make(chan *part, inFlight),
		free:  make(chan []byte, inFlight+1),
		stop:  make(chan struct{}),
	}
	go f.read(r, size, inFlight)
	for range workers {
		go f.readAhead(lim)
	}
	s := newScannerOf(nil, lim)
	s.eof = nil
	s.feed = f
	s.next = func() ([]byte, error) {
		if s.cur != nil {
			f.release(s.cur)
			s.cur = nil
		}
		p, ok := <-f.parts
		if !ok {
			return nil, io.EOF
		}
		s.cur = p
		return p.data, p.err
	}
	return s
}

// close stops the goroutines once the trace is read (or reading it
// failed).
func (f *feed) close() { close(f.stop) }

// release gives back a part's array once no reader ahead uses it.
func (f *feed) release(p *part) {
	if p.done != nil {
		<-p.done
	}
	select {
	case f.free <- p.data[:0]:
	default:
	}
}

// read cuts r into parts of up to size bytes, with at most inFlight
// arrays of them at once.
func (f *feed) read(r io.Reader, size, inFlight int) {
	defer close(f.todo)
	defer close(f.parts)
	var carry []byte // the bytes after the last cut
	gap := int64(-1)
	made := 0
	for k := 0; ; k++ {
		var buf []byte
		select {
		case buf = <-f.free:
		case <-f.stop:
			return
		default:
			switch {
			case made == 0: // the whole trace, if it is small
				buf, made = make([]byte, 0, min(size, firstPart)), made+1
			case made < inFlight:
				buf, made = make([]byte, 0, size), made+1
			default:
				select {
				case buf = <-f.free:
				case <-f.stop:
					return
				}
			}
		}
		if cap(buf) < size && k > 0 {
			buf = make([]byte, 0, size)
		}
		buf = append(buf[:0], carry...)
		var err error
		for len(buf) < cap(buf) && err == nil {
			var n int
			n, err = r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
		}
		p := &part{data: buf, err: err, gap: gap}
		carry, gap = carry[:0], -1
		if err == nil {
			if at, end := cut(buf); at >= 0 {
				p.data = buf[:at]
				carry = append(carry, buf[at:]...)
				gap = int64(at - end)
			}
		}
		if k > 0 && p.gap >= 0 && err == nil {
			p.done = make(chan struct{})
			select {
			case f.todo <- p:
			case <-f.stop:
				return
			}
		}
		select {
		case f.parts <- p:
		case <-f.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// firstPart is the size of the first part: most traces read in tests,
// and many real ones, are smaller than a part.
const firstPart = 64 << 10

// cut finds in the second half of b the last place where an event seems
// to begin: at, a "{" after blank space, a "," and blank space that
// follow a "}" ending at end. It returns -1 where there is none.
func cut(b []byte) (at, end int) {
	half := len(b) / 2
	for i := len(b); i > half; {
		j := bytes.LastIndexByte(b[half:i], '{')
		if j < 0 {
			break
		}
		j += half
		k := blankBefore(b, j)
		if k > 0 && b[k-1] == ',' {
			if k = blankBefore(b, k-1); k > 0 && b[k-1] == '}' {
				return j, k
			}
		}
		i = j
	}
	return -1, -1
}

// blankBefore is where the blank space that ends at i begins.
func blankBefore(b []byte, i int) int {
	for i > 0 && (b[i-1] == ' ' || b[i-1] == '\n' || b[i-1] == '\r' || b[i-1] == '\t') {
		i--
	}
	return i
}

// readAhead reads the parts handed to it until there are no more, each
// with a scanner of its own (whose names, shapes and lists it keeps from
// part to part).
func (f *feed) readAhead(lim bounds) {
	s := newScannerOf(nil, lim)
	var b building
	var k slabs
	for p := range f.todo {
		p.ahead = s.part(p, &b, &k)
		close(p.done)
	}
}

// slabs give the records kept from each part their arrays.
type slabs struct {
	ops       slab[Op]
	kernels   slab[Kernel]
	launches  slab[Launch]
	transfers slab[Transfer]
}

// part reads p's events, as the scanner would read them standing at p's
// first byte inside traceEvents: nil unless every event reads cleanly and
// p ends after a "," and blank space.
func (s *scanner) part(p *part, b *building, k *slabs) *ahead {
	s.buf, s.pos, s.end, s.eof = p.data, 0, len(p.data), io.EOF
	s.off, s.line, s.mark = 0, 1, -p.gap
	b.ops.Reset()
	b.kernels.Reset()
	b.launches.Reset()
	b.transfers.Reset()
	events := 0
	for {
		e := event{Args: args{Grid: [3]int{1, 1, 1}, Block: [3]int{1, 1, 1}}}
		if err := s.event(&e); err != nil {
			return nil
		}
		events++
		if err := b.add(&e, s.lim.events); err != nil {
			return nil
		}
		s.done()
		if ok, err := s.more(']'); err != nil || !ok {
			return nil
		}
		if _, err := s.space(); err == io.EOF && s.pos == s.end {
			break
		} else if err != nil {
			return nil
		}
	}
	return &ahead{
		gap: p.gap, events: events, lines: s.line - 1, tail: s.off - s.mark, kept: b.kept(),
		ops: k.ops.copy(&b.ops), kernels: k.kernels.copy(&b.kernels), launches: k.launches.copy(&b.launches), transfers: k.transfers.copy(&b.transfers),
	}
}

// adopt takes the part read ahead that the scanner stands at the start
// of, about to read an event of traceEvents, where it read cleanly and
// may be taken whole (see the top of this file); it reports whether it
// did.
func (s *scanner) adopt(t *Trace, b *building) bool {
	if s.feed == nil {
		return false
	}
	if c, err := s.space(); err != nil || c != '{' || s.pos != 0 || s.cur == nil || s.cur.done == nil {
		return false
	}
	<-s.cur.done
	a := s.cur.ahead
	if a == nil || a.gap != s.off-s.mark || b.kept()+a.kept > s.lim.events {
		return false
	}
	take(&b.ops, a.ops)
	take(&b.kernels, a.kernels)
	take(&b.launches, a.launches)
	take(&b.transfers, a.transfers)
	s.cur.ahead = nil
	n := s.end - s.pos
	s.discard(n)
	s.line += a.lines
	s.mark = s.off - a.tail
	t.Events += a.events
	s.adopted++
	return true
}

// take adds records read ahead to b: a few are copied, more kept as a
// block of their own.
func take[T any](b interface {
	Add(T)
	Append([]T)
}, xs []T) {
	if len(xs) >= 64 {
		b.Append(xs)
		return
	}
	for _, x := range xs {
		b.Add(x)
	}
}
