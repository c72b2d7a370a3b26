package rows

import "sync"

// Ahead reads a CSV's records on a goroutine of its own, a batch at a
// time, while the caller makes sense of those already read: on two cores
// the reading and the work on the rows overlap. It stops at the first
// error, which Read returns after the records before it. Stop ends the
// reading and waits for the goroutine to be done with the input (it
// finishes the record it is reading): a reader that does not read to the
// end must call it before it lets go of the input.
type Ahead struct {
	c    *CSV
	out  chan *batch
	free chan *batch
	stop chan struct{}
	gone chan struct{} // closed when the goroutine returns
	once sync.Once
	cur  *batch
	i    int
	line int
}

// batch is records read ahead: fields end to end, each record's end and
// line, and the error that ended the reading, if it did.
type batch struct {
	fields []string
	ends   []int
	lines  []int
	err    error
}

// batchLen is the records in a batch; batches how many are in flight.
const (
	batchLen = 256
	batches  = 8
)

// NewAhead starts reading c ahead.
func NewAhead(c *CSV) *Ahead {
	a := &Ahead{c: c, out: make(chan *batch, batches), free: make(chan *batch, batches), stop: make(chan struct{}), gone: make(chan struct{})}
	for range batches {
		a.free <- &batch{}
	}
	go a.read()
	return a
}

func (a *Ahead) read() {
	defer close(a.gone)
	for {
		var b *batch
		select {
		case b = <-a.free:
		case <-a.stop:
			return
		}
		b.fields, b.ends, b.lines, b.err = b.fields[:0], b.ends[:0], b.lines[:0], nil
		for len(b.ends) < batchLen && b.err == nil {
			rec, err := a.c.Read()
			if err != nil {
				b.err = err
				break
			}
			b.fields = append(b.fields, rec...)
			b.ends = append(b.ends, len(b.fields))
			b.lines = append(b.lines, a.c.Line())
		}
		select {
		case a.out <- b:
		case <-a.stop:
			return
		}
		if b.err != nil {
			return
		}
	}
}

// Read returns the next record (valid until the next call), io.EOF at the
// end, or the error that stopped the reading.
func (a *Ahead) Read() ([]string, error) {
	for a.cur == nil || a.i == len(a.cur.ends) {
		if a.cur != nil {
			if a.cur.err != nil {
				return nil, a.cur.err
			}
			a.free <- a.cur
		}
		a.cur, a.i = <-a.out, 0
	}
	start := 0
	if a.i > 0 {
		start = a.cur.ends[a.i-1]
	}
	rec := a.cur.fields[start:a.cur.ends[a.i]:a.cur.ends[a.i]]
	a.line = a.cur.lines[a.i]
	a.i++
	return rec, nil
}

// Line is the input line on which the record Read returned last starts.
func (a *Ahead) Line() int { return a.line }

// Stop ends the reading ahead and waits for it to end.
func (a *Ahead) Stop() {
	a.once.Do(func() { close(a.stop) })
	<-a.gone
}
