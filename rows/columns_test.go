package rows

import (
	"slices"
	"strings"
	"testing"
)

func TestReadColumns(t *testing.T) {
	req, opt := []string{"model", "batch"}, []string{"gpus"}
	for _, c := range []struct {
		head []string
		want string
	}{
		{[]string{"Model", " batch ", "gpus"}, ""},
		{[]string{"batch", "model"}, ""},
		{[]string{"model", "batch", "gpu"}, `line 1, column 3: unknown column "gpu"; the header holds model,batch and may add gpus`},
		{[]string{"model", "batch", "BATCH"}, `line 1, columns 2 and 3: both are "batch"`},
		{[]string{"model"}, `line 1: no column "batch"`},
		{[]string{"llama", "4"}, `line 1: "llama,4" is not a header; the header holds model,batch and may add gpus`},
	} {
		_, err := ReadColumns(c.head, req, opt)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%q: error %v, want %q", c.head, err, c.want)
		}
	}
}

// TestColumnsInt: an empty cell is the default, an explicit value is
// checked against its range (0 included), and the error names the column.
func TestColumnsInt(t *testing.T) {
	cols, err := ReadColumns([]string{"model", "batch", "gpus"}, []string{"model", "batch"}, []string{"gpus", "tp"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rec       []string
		name      string
		v         int64
		set       bool
		wantError string
	}{
		{[]string{"m", "4", ""}, "batch", 4, true, ""},
		{[]string{"m", " ", ""}, "batch", 0, false, ""},
		{[]string{"m", "4", ""}, "tp", 0, false, ""}, // not in the header: the default
		{[]string{"m", "0", ""}, "batch", 0, false, `column 2 (batch) "0": expected a whole number from 1 to 64`},
		{[]string{"m", "65", ""}, "batch", 0, false, `column 2 (batch) "65"`},
		{[]string{"m", "4x", ""}, "batch", 0, false, `column 2 (batch) "4x"`},
		{[]string{"m", "1", "-1"}, "gpus", 0, false, `column 3 (gpus) "-1"`},
	} {
		v, set, err := cols.Int(c.rec, c.name, 1, 64)
		if v != c.v || set != c.set || (err == nil) != (c.wantError == "") || err != nil && !strings.Contains(err.Error(), c.wantError) {
			t.Errorf("%q %s: %d %v %v, want %d %v %q", c.rec, c.name, v, set, err, c.v, c.set, c.wantError)
		}
	}
}

// FuzzColumns: any header is read without a panic, and one that is
// accepted names every required column once and nothing the reader does
// not take.
func FuzzColumns(f *testing.F) {
	f.Add("model,batch,gpus")
	f.Add("Model, BATCH ,gpu")
	f.Add("batch,batch,model")
	f.Add("")
	req, opt := []string{"model", "batch"}, []string{"gpus", "tp"}
	f.Fuzz(func(t *testing.T, line string) {
		head := strings.Split(line, ",")
		c, err := ReadColumns(head, req, opt)
		if err != nil {
			if len(err.Error()) > 400 {
				t.Errorf("a message of %d bytes", len(err.Error()))
			}
			return
		}
		seen := map[string]bool{}
		for _, h := range head {
			n := strings.ToLower(strings.TrimSpace(h))
			if seen[n] || !slices.Contains(req, n) && !slices.Contains(opt, n) {
				t.Fatalf("%q accepted: %q", line, h)
			}
			seen[n] = true
		}
		for _, n := range req {
			if i, ok := c.Index(n); !ok || !strings.EqualFold(strings.TrimSpace(head[i]), n) {
				t.Fatalf("%q accepted without %s", line, n)
			}
		}
	})
}
