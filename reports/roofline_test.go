package reports

import (
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/roofline"
)

// models are the roofline models of the named devices.
func models(t *testing.T, names ...string) []*roofline.Model {
	t.Helper()
	var ms []*roofline.Model
	for _, n := range names {
		m, err := roofline.New(device(t, n))
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

// workload parses op specs into a workload named "ops".
func workload(t *testing.T, specs ...string) ops.Workload {
	t.Helper()
	w := ops.Workload{Name: "ops"}
	for _, s := range specs {
		op, err := ops.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		w.Entries = append(w.Entries, ops.Entry{Name: s, Op: op, Count: 1})
	}
	return w
}

// A 4096³ bf16 matmul (137,438,953,472 FLOPs, 100,663,296 ideal bytes) and
// a softmax on the H100 and the A100: every point and the totals in every
// format, the figures as the result holds them.
func TestRooflineReport(t *testing.T) {
	ms := models(t, "h100", "a100")
	w := workload(t, "matmul m=4096 n=4096 k=4096 dtype=bf16", "softmax rows=4096 cols=32768")
	ps, err := roofline.Compare(ms, w)
	if err != nil {
		t.Fatal(err)
	}
	views := NewRooflineViews(ps, []string{"", ""})
	notes := [][]string{RooflineModelNotes(ms[0], true), RooflineModelNotes(ms[1], false)}
	out := golden(t, "roofline", rendered{tables: RooflineTables(w.Name, views, notes), records: RooflineRecords(views), view: RooflineComparison{Devices: views}})
	mm := views[0].Points[0]
	if mm.FLOPs != 137438953472 || mm.Bytes != 100663296 {
		t.Fatalf("matmul 4096³: %g FLOPs, %g bytes; want 2·4096³ and 3·4096²·2", mm.FLOPs, mm.Bytes)
	}
	contains(t, out, "137438953472", "100663296", "H100 SXM,", "A100", `"summary"`)
	if views[0].Summary == nil || views[0].Summary.Ops != 2 {
		t.Errorf("two ops: the view carries their totals, %+v", views[0].Summary)
	}
	c := RooflineViewsChart(w.Name, []devices.Device{ms[0].Device(), ms[1].Device()}, views)
	if len(c.Devices) != 2 || len(c.Points) != 4 || !strings.Contains(c.Title, "H100 SXM vs A100") {
		t.Errorf("chart of two ops on two devices: %d devices, %d points, title %q", len(c.Devices), len(c.Points), c.Title)
	}
}

// roofline batch: every input column echoed, the op's figures appended,
// and a bad row's error in its own column.
func TestRooflineBatchReport(t *testing.T) {
	in := "op,dtype,shape,note,ms\nmatmul,bf16,4096x4096x4096,square,0.2\nrmsnorm,bf16,4096x4096,,\nmatmul,bf16,0x1x1,bad,\n"
	b, err := ops.ReadBatch(strings.NewReader(in), RooflineBatchColumns)
	if err != nil {
		t.Fatal(err)
	}
	m := models(t, "h100")[0]
	pts := make([]roofline.Point, len(b.Rows))
	for i, r := range b.Rows {
		if r.Err == nil {
			if pts[i], err = m.Analyze(r.Op); err != nil {
				t.Fatal(err)
			}
			pts[i].Measured = r.Measured
		}
	}
	if b.Rows[2].Err == nil {
		t.Fatal("a 0×1×1 matmul is read without an error")
	}
	cold := roofline.Conditions{L2: roofline.L2Cold, Launch: roofline.LaunchEager}
	out := golden(t, "roofline_batch", rendered{tables: []Table{RooflineBatch(b, pts, cold)}, view: RooflineBatchJSON(b, pts, cold)})
	contains(t, out, "square", "137438953472", b.Rows[2].Err.Error(), `"l2": "cold"`, `"launch": "eager"`)
}

// Side by side, a device without fp8 tensor cores says why in every
// format, and the others answer.
func TestRooflineNotAvailable(t *testing.T) {
	ms := models(t, "h100", "a100")
	w := workload(t, "matmul m=4096 n=4096 k=4096 dtype=fp8")
	ps, err := roofline.Compare(ms, w)
	if err != nil {
		t.Fatal(err)
	}
	views := NewRooflineViews(ps, []string{"", ""})
	out := golden(t, "roofline_na", rendered{tables: RooflineTables(w.Name, views, [][]string{nil, nil}), records: RooflineRecords(views),
		view: RooflineComparison{Devices: views}})
	if views[1].NotAvailable != "no fp8 tensor cores" || len(views[1].Points) != 0 {
		t.Fatalf("A100 fp8 view %+v", views[1])
	}
	contains(t, out, "no fp8 tensor cores", `"not_available": "no fp8 tensor cores"`)
	if _, err := roofline.Compare(ms[1:], w); err == nil || !strings.Contains(err.Error(), "fp8") {
		t.Errorf("fp8 on the A100 alone: %v, want the device's gap as the error", err)
	}
}
