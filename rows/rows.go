// Package rows reads line- and CSV-based input with bounded memory: a line
// or a CSV record is at most MaxLine bytes, binary data stops the reader at
// its first line, a leading UTF-8 byte-order mark is dropped, and errors
// quote at most a few dozen bytes of the input. Every gpucalc reader of
// batch files, build logs and Nsight Compute exports goes through it, and
// every gzip input, wherever it is read, through Decompress (limit.go).
package rows

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"
)

// MaxLine is the longest line, and the longest CSV record, read: 1 MiB.
const MaxLine = 1 << 20

var (
	// ErrTooLong is a line or record longer than MaxLine.
	ErrTooLong = errors.New("longer than 1 MiB; is this the right file?")
	// ErrBinary is a line with a NUL byte or invalid UTF-8.
	ErrBinary = errors.New("binary data, not text")
	// ErrQuote is a quoted CSV field that does not close where it should,
	// after which the rest of the file cannot be split into rows reliably.
	ErrQuote = errors.New(`a quoted field is not closed properly (a field that starts with " must end with " before the next comma or line end, and a " inside it is written "")`)
)

// Error is a reading error at a line of the input.
type Error struct {
	Line int
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// RowError is a CSV row that cannot be read while the rows after it can
// (a stray quote inside an unquoted field): the caller reports it and goes
// on.
type RowError struct {
	Line int
	Err  error
}

func (e *RowError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *RowError) Unwrap() error { return e.Err }

// Quote quotes s for a message, cut to a few dozen bytes.
func Quote(s string) string {
	const max = 64
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}

// Lines reads lines without their line ending.
type Lines struct {
	br    *bufio.Reader
	n     int
	long  []byte
	bytes int64
}

// Bytes is how many bytes of input the lines returned so far span.
func (l *Lines) Bytes() int64 { return l.bytes }

// NewLines reads lines from r.
func NewLines(r io.Reader) *Lines {
	return &Lines{br: bufio.NewReaderSize(r, 64<<10)}
}

// Line is the number of the line Next returned last (1-based).
func (l *Lines) Line() int { return l.n }

// Next returns the next line, without "\n" or "\r\n", valid until the next
// call. It returns io.EOF at the end, and an *Error for a line longer than
// MaxLine or with binary data, after which it must not be called again.
func (l *Lines) Next() ([]byte, error) {
	line, err := l.raw()
	return bytes.TrimSuffix(line, []byte("\r")), err
}

// raw is Next keeping a "\r" before the "\n", as encoding/csv wants it.
func (l *Lines) raw() ([]byte, error) {
	line, err := l.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		l.long = append(l.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = l.br.ReadSlice('\n')
			if len(l.long)+len(line) > MaxLine+2 {
				return nil, &Error{l.n + 1, tooLong(l.long)}
			}
			l.long = append(l.long, line...)
		}
		line = l.long
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, &Error{l.n + 1, err}
	}
	if len(line) == 0 {
		return nil, io.EOF
	}
	l.n++
	l.bytes += int64(len(line))
	line = bytes.TrimSuffix(line, []byte("\n"))
	if l.n == 1 {
		line = bytes.TrimPrefix(line, []byte("\ufeff"))
	}
	if len(line) > MaxLine {
		return nil, &Error{l.n, tooLong(line)}
	}
	if bytes.IndexByte(line, 0) >= 0 || !utf8.Valid(line) {
		return nil, &Error{l.n, ErrBinary}
	}
	return line, nil
}

// tooLong is the error for a line over MaxLine: binary data if it holds any,
// as a file without line breaks often does.
func tooLong(line []byte) error {
	head := line[:min(len(line), 4096)]
	for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); i++ {
		head = head[:len(head)-1] // a rune cut at the end
	}
	if bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(head) {
		return ErrBinary
	}
	return ErrTooLong
}

// MaxBadRows is how many bad rows in a row a CSV reader takes before it
// stops: a batch file goes on past bad rows, garbage does not go on for
// gigabytes.
const MaxBadRows = 10000

// CSV reads CSV records (encoding/csv) from lines, so that each line is
// bounded and checked as Lines does, and a record is at most MaxLine bytes.
type CSV struct {
	cr   *csv.Reader
	feed *feed
	line int
	// Fields, when not zero, is the number of fields a record must have;
	// a record with another number is a *RowError.
	Fields int
	// bad counts bad rows in a row; lastBad is whether the last was one.
	bad     int
	lastBad bool
}

// Bad tells the reader that the caller found the record it read last bad;
// after MaxBadRows bad rows in a row, Read stops.
func (c *CSV) Bad() {
	if !c.lastBad {
		c.bad++
		c.lastBad = true
	}
}

// NewCSV reads CSV from r. Records may have any number of fields; leading
// spaces of a field are kept.
func NewCSV(r io.Reader) *CSV { return FromLines(NewLines(r), nil) }

// FromLines reads CSV from the lines l has not yet returned. filter, when
// not nil, may replace a line before CSV parsing (return nil to blank it;
// line numbers stay those of the input).
func FromLines(l *Lines, filter func([]byte) []byte) *CSV {
	f := &feed{lines: l, filter: filter, first: l.Line()}
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	return &CSV{cr: cr, feed: f}
}

// Line is the input line on which the record Read returned last starts.
func (c *CSV) Line() int { return c.line }

// Read returns the next record (valid until the next call), io.EOF at the
// end, a *RowError for a record that is bad alone (with the record when it
// could be split into fields), or another error (an *Error with its line)
// after which the input cannot be read further.
func (c *CSV) Read() ([]string, error) {
	if !c.lastBad {
		c.bad = 0
	}
	c.lastBad = false
	if c.bad >= MaxBadRows {
		return nil, &Error{c.line + 1, fmt.Errorf("stopped after %d bad rows in a row; is this the right file?", c.bad)}
	}
	c.feed.used, c.feed.start = 0, c.feed.lines.Line()+1
	rec, err := c.cr.Read()
	if c.feed.err != nil {
		return nil, c.feed.err
	}
	if err == nil {
		pos, _ := c.cr.FieldPos(0)
		c.line = c.feed.first + pos
		if c.Fields > 0 && len(rec) != c.Fields {
			c.Bad()
			return rec, &RowError{c.line, fmt.Errorf("%d fields, the header has %d", len(rec), c.Fields)}
		}
		return rec, nil
	}
	if errors.Is(err, io.EOF) {
		return nil, err
	}
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return nil, err
	}
	c.line = c.feed.first + pe.StartLine
	if errors.Is(pe.Err, csv.ErrBareQuote) {
		c.Bad()
		return nil, &RowError{c.line, errors.New(`a " inside a field that does not start with one (quote the whole field, and write the " as "")`)}
	}
	return nil, &Error{c.line, ErrQuote}
}

// Records reads c's records to the end, one row each, in order: row
// builds it from the record's line and cells (a copy), with the error of a
// record bad alone (a *RowError's) or nil, and returns the row's own error
// for a record read whole, which marks it bad (Bad). Past max rows (0: no
// limit), or at an error after which the input cannot be read, it returns
// the rows before it and the error.
func Records[T any](c *CSV, max int, row func(line int, cells []string, err error) (T, error)) ([]T, error) {
	var out []T
	for {
		rec, err := c.Read()
		if err == io.EOF {
			return out, nil
		}
		var re *RowError
		if errors.As(err, &re) {
			r, _ := row(re.Line, slices.Clone(rec), re.Err)
			out = append(out, r)
			continue
		}
		if err != nil {
			return out, err
		}
		if max > 0 && len(out) == max {
			return out, fmt.Errorf("line %d: more than %d rows; split the file", c.Line(), max)
		}
		r, err := row(c.Line(), slices.Clone(rec), nil)
		if err != nil {
			c.Bad()
		}
		out = append(out, r)
	}
}

// feed hands lines to encoding/csv, counting the bytes of the current
// record.
type feed struct {
	lines  *Lines
	filter func([]byte) []byte
	first  int // lines read before the CSV started
	// buf is what is left to hand of the line in line's array (kept
	// whole, so that each line reuses it: buf moves forward in it).
	buf, line []byte
	used      int
	start     int // the line the current record starts on
	err       error
}

func (f *feed) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	for len(f.buf) == 0 {
		line, err := f.lines.raw()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				f.err = err
			}
			return 0, err
		}
		if f.filter != nil {
			line = f.filter(line)
		}
		f.used += len(line) + 1
		if f.used > MaxLine {
			f.err = &Error{f.start, fmt.Errorf("the CSV record that starts here (an unclosed quote?) is %w", ErrTooLong)}
			return 0, f.err
		}
		f.line = append(append(f.line[:0], line...), '\n')
		f.buf = f.line
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	return n, nil
}

// ReadAll reads all of r, refusing more than max bytes (a file to parse
// whole, such as YAML, with a size cap instead of a line cap).
func ReadAll(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("larger than %d MiB; is this the right file?", max>>20)
	}
	return data, nil
}
