package rows

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

// readAll reads every record; it stops at the first fatal error.
func readAll(in string) (recs [][]string, lines []int, rowErrs []int, err error) {
	c := NewCSV(strings.NewReader(in))
	for {
		rec, e := c.Read()
		var re *RowError
		switch {
		case errors.Is(e, io.EOF):
			return recs, lines, rowErrs, nil
		case errors.As(e, &re):
			rowErrs = append(rowErrs, re.Line)
		case e != nil:
			return recs, lines, rowErrs, e
		default:
			recs = append(recs, append([]string(nil), rec...))
			lines = append(lines, c.Line())
		}
	}
}

func TestCSV(t *testing.T) {
	long := strings.Repeat("a", MaxLine+1)
	tests := []struct {
		name    string
		in      string
		recs    int
		lines   []int
		rowErrs []int
		err     error
		errLine int
	}{
		{name: "plain", in: "a,b\n1,2\n", recs: 2, lines: []int{1, 2}},
		{name: "bom stripped", in: "\ufeffa,b\n1,2", recs: 2, lines: []int{1, 2}},
		{name: "crlf and blank lines", in: "a,b\r\n\r\n1,2\r\n", recs: 2, lines: []int{1, 3}},
		{name: "quoted newline", in: "a,b\n\"x\ny\",2\n3,4\n", recs: 3, lines: []int{1, 2, 4}},
		{name: "bare quote is one bad row", in: "a,b\n1\",2\n3,4\n", recs: 2, lines: []int{1, 3}, rowErrs: []int{2}},
		{name: "unclosed quote stops", in: "a,b\n1,2\n\"3,4\n5,6\n", recs: 2, err: ErrQuote, errLine: 3},
		{name: "text after closing quote stops", in: "a,b\n\"1\"x,2\n", recs: 1, err: ErrQuote, errLine: 2},
		{name: "line too long", in: "a,b\n" + long + "\n1,2\n", recs: 1, err: ErrTooLong, errLine: 2},
		{name: "no newline at all", in: long, err: ErrTooLong, errLine: 1},
		{name: "record across lines too long", in: "a\n\"" + strings.Repeat("x\n", MaxLine/2+1), recs: 1, err: ErrTooLong, errLine: 2},
		{name: "zeros without newline", in: strings.Repeat("\x00", 2*MaxLine), err: ErrBinary, errLine: 1},
		{name: "long line of invalid utf-8", in: "a\n" + strings.Repeat("\xff", 2*MaxLine), recs: 1, err: ErrBinary, errLine: 2},
		{name: "nul byte", in: "a,b\n1,\x002\n", recs: 1, err: ErrBinary, errLine: 2},
		{name: "invalid utf-8", in: "a,b\n\xff\xfe,1\n", recs: 1, err: ErrBinary, errLine: 2},
		{name: "exactly MaxLine", in: strings.Repeat("b", MaxLine-1) + "\n", recs: 1, lines: []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, lines, rowErrs, err := readAll(tt.in)
			if len(recs) != tt.recs {
				t.Errorf("%d records, want %d", len(recs), tt.recs)
			}
			if tt.lines != nil && !equal(lines, tt.lines) {
				t.Errorf("lines %v, want %v", lines, tt.lines)
			}
			if !equal(rowErrs, tt.rowErrs) {
				t.Errorf("row errors at %v, want %v", rowErrs, tt.rowErrs)
			}
			if tt.err == nil {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				return
			}
			var e *Error
			if !errors.Is(err, tt.err) || !errors.As(err, &e) || e.Line != tt.errLine {
				t.Fatalf("error %v, want %v at line %d", err, tt.err, tt.errLine)
			}
			if len(err.Error()) > 300 {
				t.Errorf("message of %d bytes echoes the input", len(err.Error()))
			}
		})
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestLinesFilterKeepsLineNumbers(t *testing.T) {
	l := NewLines(strings.NewReader("junk\n\"ID\",x\n==PROF== hi\n1,2\n"))
	for {
		line, err := l.Next()
		if err != nil {
			t.Fatal(err)
		}
		if bytes.HasPrefix(line, []byte(`"ID"`)) {
			break
		}
	}
	c := FromLines(l, func(b []byte) []byte {
		if bytes.HasPrefix(b, []byte("==")) {
			return nil
		}
		return b
	})
	rec, err := c.Read()
	if err != nil || len(rec) != 2 || rec[0] != "1" || c.Line() != 4 {
		t.Fatalf("record %q at line %d (%v), want [1 2] at line 4", rec, c.Line(), err)
	}
}

func TestQuote(t *testing.T) {
	for _, s := range []string{"", "short", strings.Repeat("é", 100), strings.Repeat("x", 1<<20)} {
		q := Quote(s)
		if len(q) > 80 {
			t.Errorf("Quote(%d bytes) = %d bytes", len(s), len(q))
		}
	}
}

// FuzzCSV: any input ends in records, row errors and at most one fatal
// error with a line number inside the input and a short message.
func FuzzCSV(f *testing.F) {
	for _, s := range []string{"a,b\n1,2\n", "\"a\nb\",c", "x\"y,z\n", "\ufeffa\r\n", "\x00", "\"unclosed"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		recs, lines, _, err := readAll(in)
		total := strings.Count(in, "\n") + 1
		for _, l := range lines {
			if l < 1 || l > total {
				t.Fatalf("line %d outside 1..%d", l, total)
			}
		}
		_ = recs
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Line < 1 || e.Line > total {
				t.Fatalf("error %v without a line in 1..%d", err, total)
			}
			if len(err.Error()) > 300 {
				t.Fatalf("message of %d bytes", len(err.Error()))
			}
		}
	})
}

// TestBadRows: records with the wrong number of fields are row errors that
// carry the record; MaxBadRows bad rows in a row stop the reader, fewer do
// not, and a good row starts the count again.
func TestBadRows(t *testing.T) {
	for _, tt := range []struct {
		name    string
		in      string
		callBad func(rec []string) bool // the caller's verdict on a good record
		rows    int                     // records and row errors before the end or the stop
		stopped bool
	}{
		{"just under the limit", "a,b\n" + strings.Repeat("1\n", MaxBadRows-1) + "1,2\n", nil, MaxBadRows, false},
		{"at the limit", "a,b\n" + strings.Repeat("1\n", MaxBadRows) + "1,2\n", nil, MaxBadRows, true},
		{"a good row resets", "a,b\n" + strings.Repeat("1\n", MaxBadRows-1) + "1,2\n" + strings.Repeat("1\n", MaxBadRows-1), nil, 2*MaxBadRows - 1, false},
		{"stray quotes count", "a,b\n" + strings.Repeat("x\"y,1\n", MaxBadRows) + "1,2\n", nil, MaxBadRows, true},
		{"the caller's verdict counts", "a,b\n" + strings.Repeat("x,y\n", MaxBadRows+5), func(r []string) bool { return r[0] == "x" }, MaxBadRows, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCSV(strings.NewReader(tt.in))
			if _, err := c.Read(); err != nil {
				t.Fatal(err)
			}
			c.Fields = 2
			n := 0
			for {
				rec, err := c.Read()
				if errors.Is(err, io.EOF) {
					if tt.stopped {
						t.Fatalf("read to the end after %d rows; want a stop", n)
					}
					break
				}
				var re *RowError
				if errors.As(err, &re) {
					if rec == nil && !strings.Contains(re.Error(), `"`) {
						t.Errorf("row error %v without its record", re)
					}
					n++
					continue
				}
				if err != nil {
					if !tt.stopped || !strings.Contains(err.Error(), "bad rows in a row") {
						t.Fatalf("error %v after %d rows", err, n)
					}
					break
				}
				if tt.callBad != nil && tt.callBad(rec) {
					c.Bad()
				}
				n++
			}
			if n != tt.rows {
				t.Errorf("%d rows, want %d", n, tt.rows)
			}
		})
	}
}

// TestRecords: one row per record in order, a row error's record kept with
// its error, the caller's bad rows counted toward MaxBadRows, and a limit
// on the rows.
func TestRecords(t *testing.T) {
	type row struct {
		line  int
		cells string
		err   bool
	}
	build := func(line int, cells []string, err error) (row, error) {
		if err == nil && cells[0] == "x" {
			err = errors.New("x is bad")
		}
		return row{line, strings.Join(cells, "|"), err != nil}, err
	}
	for _, tt := range []struct {
		name string
		in   string
		max  int
		want []row
		err  string
	}{
		{"rows in order", "1,2\nx\"y,3\nx,4\n", 0, []row{{1, "1|2", false}, {2, "", true}, {3, "x|4", true}}, ""},
		{"the limit", "1\n2\n3\n", 2, []row{{1, "1", false}, {2, "2", false}}, "line 3: more than 2 rows; split the file"},
		{"the caller's bad rows stop it", strings.Repeat("x\n", MaxBadRows+1), 0, nil, "bad rows in a row"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Records(NewCSV(strings.NewReader(tt.in)), tt.max, build)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("error %v; want %q", err, tt.err)
			}
			if tt.want == nil {
				if len(got) != MaxBadRows {
					t.Errorf("%d rows before the stop; want %d", len(got), MaxBadRows)
				}
				return
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("rows %v; want %v", got, tt.want)
			}
		})
	}
}
