package roofline

import (
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/query"
)

// TestQueryConditions: --l2 and --launch reach every model as one value,
// a bad value is a field error naming the flag, and Args repeats only what
// differs from the defaults.
func TestQueryConditions(t *testing.T) {
	q := Query{Ops: []string{"matmul m=16 n=4096 k=4096"}, L2: "warm", Launch: "graph"}
	a, err := q.Answer()
	if err != nil {
		t.Fatal(err)
	}
	want := Conditions{L2: L2Warm, Launch: LaunchGraph}
	if a.Conditions != want || a.Models[0].Conditions() != want {
		t.Errorf("conditions %+v, model's %+v", a.Conditions, a.Models[0].Conditions())
	}
	if s := q.Args().String(); !strings.Contains(s, "--l2 warm") || !strings.Contains(s, "--launch graph") {
		t.Errorf("args %q", s)
	}
	if s := (Query{Ops: q.Ops}).Args().String(); strings.Contains(s, "--l2") || strings.Contains(s, "--launch") {
		t.Errorf("default args %q", s)
	}
	err = Query{Ops: q.Ops, L2: "hot", Launch: "lazy"}.Validate()
	fields := query.Fields(err)
	if len(fields) != 2 || fields[0].Field != "l2" || fields[1].Field != "launch" {
		t.Errorf("%v", err)
	}
}
