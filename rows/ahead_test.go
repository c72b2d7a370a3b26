package rows

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

// TestAhead: read ahead, a CSV gives the records, lines and error that
// reading it in turn gives, across batches; stopped early, it ends.
func TestAhead(t *testing.T) {
	var in strings.Builder
	for i := range 3*batchLen + 7 {
		fmt.Fprintf(&in, "%d,\"x\ny\",%d\n", i, i*i)
	}
	in.WriteString("bad,\"quote\n")
	read := func(r interface {
		Read() ([]string, error)
		Line() int
	}) (recs [][]string, lines []int, err error) {
		for {
			rec, err := r.Read()
			if err != nil {
				return recs, lines, err
			}
			recs, lines = append(recs, slices.Clone(rec)), append(lines, r.Line())
		}
	}
	wantRecs, wantLines, wantErr := read(FromLines(NewLines(strings.NewReader(in.String())), nil))
	a := NewAhead(FromLines(NewLines(strings.NewReader(in.String())), nil))
	defer a.Stop()
	recs, lines, err := read(a)
	if !slices.EqualFunc(recs, wantRecs, slices.Equal) || !slices.Equal(lines, wantLines) || len(recs) != 3*batchLen+7 {
		t.Fatalf("read ahead: %d records, lines %v...; in turn %d", len(recs), lines[:3], len(wantRecs))
	}
	if err == nil || errors.Is(err, io.EOF) || err.Error() != wantErr.Error() {
		t.Errorf("read ahead: error %v, in turn %v", err, wantErr)
	}
	if _, err2 := a.Read(); err2 != err {
		t.Errorf("read again after the error: %v", err2)
	}
	early := NewAhead(FromLines(NewLines(strings.NewReader(in.String())), nil))
	if _, err := early.Read(); err != nil {
		t.Fatal(err)
	}
	early.Stop()
	early.Stop()
}
