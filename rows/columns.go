package rows

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Columns is a batch file's header matched against the columns its reader
// takes: each name known, none twice, every required one there. A batch
// row is read as flags are, so a column the reader does not know (a
// misspelt "gpu" for "gpus") is refused, never ignored.
type Columns struct {
	// Header is the header as given.
	Header []string
	// index is each known column's position in Header.
	index map[string]int
}

// ReadColumns checks head, the first record of a batch file, against the
// required and optional column names (lower case). Names match with case
// and surrounding spaces ignored. The error names the header's line (1)
// and the column.
func ReadColumns(head, required, optional []string) (Columns, error) {
	c := Columns{Header: slices.Clone(head), index: map[string]int{}}
	known := func(h string) bool {
		h = strings.ToLower(strings.TrimSpace(h))
		return slices.Contains(required, h) || slices.Contains(optional, h)
	}
	if !slices.ContainsFunc(head, known) {
		return c, fmt.Errorf("line 1: %s is not a header; %s", Quote(strings.Join(head, ",")), takes(required, optional))
	}
	for i, h := range head {
		name := strings.ToLower(strings.TrimSpace(h))
		if !known(name) {
			return c, fmt.Errorf("line 1, column %d: unknown column %s; %s", i+1, Quote(h), takes(required, optional))
		}
		if j, dup := c.index[name]; dup {
			return c, fmt.Errorf("line 1, columns %d and %d: both are %s; give each column once", j+1, i+1, Quote(name))
		}
		c.index[name] = i
	}
	for _, name := range required {
		if _, ok := c.index[name]; !ok {
			return c, fmt.Errorf("line 1: no column %q; %s", name, takes(required, optional))
		}
	}
	return c, nil
}

// takes says which columns a reader takes.
func takes(required, optional []string) string {
	s := "the header holds " + strings.Join(required, ",")
	if len(optional) > 0 {
		s += " and may add " + strings.Join(optional, ",")
	}
	return s
}

// Index is the position of the named column in the header, and whether it
// is there.
func (c Columns) Index(name string) (int, bool) {
	i, ok := c.index[name]
	return i, ok
}

// Cell is the named column's cell of a record (spaces trimmed), "" when
// the header has no such column. The record must have a cell for every
// column of the header (CSV.Fields).
func (c Columns) Cell(rec []string, name string) string {
	i, ok := c.index[name]
	if !ok || i >= len(rec) {
		return ""
	}
	return strings.TrimSpace(rec[i])
}

// CellError is a cell that does not hold what its column takes: the
// column's position (1-based) and name, the cell as given, and what the
// column takes. A reader prefixes the line.
type CellError struct {
	Column  int
	Name    string
	Value   string
	Allowed string
}

func (e *CellError) Error() string {
	return fmt.Sprintf("column %d (%s) %s: %s", e.Column, e.Name, Quote(e.Value), e.Allowed)
}

// Bad is the *CellError of the named column's cell in rec.
func (c Columns) Bad(rec []string, name, allowed string) error {
	i := c.index[name]
	v := ""
	if i < len(rec) {
		v = rec[i]
	}
	return &CellError{Column: i + 1, Name: name, Value: v, Allowed: allowed}
}

// Int reads the named column's cell as a whole number from lo to hi. An
// empty cell (or a column the header lacks) is the default: set is false.
// An explicit value outside lo..hi, 0 included where lo is 1, is a
// *CellError, as the flag's value would be.
func (c Columns) Int(rec []string, name string, lo, hi int64) (v int64, set bool, err error) {
	s := c.Cell(rec, name)
	if s == "" {
		return 0, false, nil
	}
	v, perr := strconv.ParseInt(s, 10, 64)
	if perr != nil || v < lo || v > hi {
		return 0, false, c.Bad(rec, name, fmt.Sprintf("expected a whole number from %d to %d (leave it empty for the default)", lo, hi))
	}
	return v, true, nil
}
