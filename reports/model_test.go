package reports

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/train"
)

// config loads a built-in model.
func config(t *testing.T, name string) model.Config {
	t.Helper()
	c, err := model.LoadBuiltin(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Llama-3.1-70B on 4 H100s at batch 32 with an 8k context, the README's
// example: 70,553,706,496 parameters (what transformers builds), 80 KiB of
// KV per token per GPU, in every format; then with its ops.
func TestModelReport(t *testing.T) {
	c := config(t, "llama-3.1-70b")
	q := model.Request{Batch: 32, Ctx: 8192, TP: 4}
	q, err := c.FillRequest(q)
	if err != nil {
		t.Fatal(err)
	}
	m := models(t, "h100")[0]
	r, err := c.Serve(q, m)
	if err != nil {
		t.Fatal(err)
	}
	if r.Memory.Params.Total != 70553706496 || r.Memory.KVPerToken != 80<<10 {
		t.Fatalf("llama-3.1-70b tp 4: %d parameters, %g B of KV per token per GPU; want 70553706496 and 80 KiB", r.Memory.Params.Total, r.Memory.KVPerToken)
	}
	rs := []model.Report{r}
	out := golden(t, "model", rendered{tables: ModelTables(c.Name, q, rs, "", false), records: []Table{ModelRows(rs)}, view: r})
	contains(t, out, "70.55 G (70553706496)", "80 KiB (bf16)", "70553706496,", "fits")
	tabs := ModelTables(c.Name, q, rs, "", true)
	if len(tabs) < 3 || !strings.HasPrefix(tabs[1].Title, "Prefill ops") || !strings.HasPrefix(tabs[2].Title, "Decode") || len(tabs[2].Rows) == 0 {
		t.Errorf("--ops gives the summary, then the prefill's and the decode step's ops: %d tables, %q", len(tabs), tabs[1].Title)
	}
	ch, err := ModelDecodeChart(c.Name, q, []devices.Device{m.Device()}, rs)
	if err != nil || len(ch.Points) == 0 {
		t.Errorf("decode chart: %d points, %v", len(ch.Points), err)
	}
}

// Side by side, a device that cannot hold the model at all still gets its
// column; and a request that does not fit has no times.
func TestModelCompare(t *testing.T) {
	c := config(t, "llama-3.1-8b")
	q, err := c.FillRequest(model.Request{Batch: 32, Ctx: 4096})
	if err != nil {
		t.Fatal(err)
	}
	var rs []model.Report
	for _, m := range models(t, "h100", "l4") {
		r, err := c.ServeBeside(q, m)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	out := golden(t, "model_compare", rendered{tables: ModelTables(c.Name, q, rs, "", false), records: []Table{ModelRows(rs)}, view: rs})
	if rs[1].Memory.Fits || rs[1].TPOT != nil {
		t.Fatalf("llama-3.1-8b at batch 32 × 4096 fits on an L4's 24 GB: %+v", rs[1].Memory)
	}
	contains(t, out, "H100 SXM", "L4", "does not fit")
}

// model batch and model list: input echoed, figures appended, errors kept.
func TestModelBatchAndList(t *testing.T) {
	c := config(t, "llama-3.1-8b")
	m := models(t, "h100")[0]
	shape := model.Shape{Batch: 1, Seq: 1, Ctx: 512, TP: 1, Phase: model.Decode}
	res, err := c.Analyze(shape, m)
	if err != nil {
		t.Fatal(err)
	}
	res.Ops, res.Points = nil, nil
	header := []string{"model", "device", "batch"}
	rows := []ModelBatchRow{{Cells: []string{"llama-3.1-8b", "h100", "1"}, Result: res, SmallestTP: 1},
		{Cells: []string{"nope", "h100", "1"}, Err: errors.New("line 3: unknown model nope")}}
	out := golden(t, "model_batch", rendered{tables: []Table{ModelBatch(header, rows)}, view: ModelBatchJSON(header, rows)})
	contains(t, out, "8030261248", "unknown model nope")

	list := ModelList([][]string{{"llama-3.1-8b", "meta-llama/Llama-3.1-8B", "llama", "8030261248", "transformers"}})
	golden(t, "model_list", rendered{tables: []Table{list}, records: []Table{list}})
}

// A LoRA fine-tune of Llama-3.2-1B on one H100 and full training of
// Llama-3.1-8B on an L4 (which does not fit: its changes, and no time).
func TestTrainReport(t *testing.T) {
	var rs []train.Result
	for _, c := range []struct {
		model, dev string
		q          train.Request
	}{
		{"llama-3.2-1b", "h100", train.Request{Method: train.LoRA, Batch: 4, Seq: 2048}},
		{"llama-3.1-8b", "l4", train.Request{Batch: 1, Seq: 2048}},
	} {
		r, err := train.Analyze(config(t, c.model), c.q, models(t, c.dev)[0])
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	if rs[1].Time != nil || rs[1].Memory.Fits {
		t.Fatalf("full training of an 8B model fits on an L4: %+v", rs[1].Memory)
	}
	out := golden(t, "train", rendered{tables: TrainTables(rs, ""), records: TrainRecords(rs), view: rs})
	contains(t, out, "lora r=16 α=32", i64(rs[0].Params.Trainable))
	header := []string{"model", "device"}
	brs := []train.BatchResult{{Cells: []string{"llama-3.2-1b", "h100"}, Result: rs[0]}, {Cells: []string{"x", "h100"}, Err: errors.New("line 3: unknown model x")}}
	out = golden(t, "train_batch", rendered{tables: []Table{TrainBatch(header, brs)}, view: TrainBatchJSON(header, brs)})
	contains(t, out, "unknown model x")
}
