package roofline

import (
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/ops"
)

// TestRunBatch: every row gets its point in order, with its measured time;
// a bad row keeps its reader's error, a row no device rate prices gets its
// line, and neither stops the batch. An H100 copies 2^28 bf16 elements (2^30
// bytes read and written) at 3.35 TB/s in at least 0.32 ms.
func TestRunBatch(t *testing.T) {
	in := "op,dtype,shape,note,measured_us\n" +
		"copy,bf16,268435456,,400\n" +
		"copy,bf16,x,,\n" +
		"matmul,fp4,64x64x64,,\n" +
		"add,bf16,1024,,\n"
	b, err := ops.ReadBatch(strings.NewReader(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := mustNew(t, device(t, "h100").Datasheet())
	pts, good := m.RunBatch(&b)
	if len(pts) != 4 || len(good) != 2 {
		t.Fatalf("%d points, %d priced; want 4 and 2", len(pts), len(good))
	}
	if p := pts[0]; p.Measured < 399.9e-6 || p.Measured > 400.1e-6 || p.LowerBound < 1<<30/3.35e12 || p.LowerBound > 1.01*(1<<30)/3.35e12 {
		t.Errorf("copy: measured %g, lower bound %g; want 400 µs and 2^30 B / 3.35 TB/s", p.Measured, p.LowerBound)
	}
	if b.Rows[1].Err == nil || pts[1].LowerBound != 0 {
		t.Errorf("row 3: error %v, point %+v; want the reader's error and no point", b.Rows[1].Err, pts[1])
	}
	if e := b.Rows[2].Err; e == nil || !strings.HasPrefix(e.Error(), "line 4: ") {
		t.Errorf("row 4 (fp4, which an H100 has no rate for): error %v, want one naming line 4", e)
	}
	if pts[3].LowerBound == 0 || b.Rows[3].Err != nil {
		t.Errorf("row 5 after the bad ones: %+v, %v", pts[3], b.Rows[3].Err)
	}
}
