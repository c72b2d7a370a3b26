package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/deploy"
)

// The deploy table and record carry the answer's figures, in the table's
// units and the record's base units.
func TestDeploy(t *testing.T) {
	r, err := deploy.Query{Model: "llama-3.1-8b", Device: "h100", Concurrency: 8, ISL: 512, OSL: 64}.Answer()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Render(&buf, FormatTable, 0, DeployTables(r, "")...); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"TTFT", "TPOT", "per GPU", "Reproduce: gpucalc deploy llama-3.1-8b --device h100 --isl 512 --osl 64 --concurrency 8"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	rec := DeployRecords(r)[0]
	col := map[string]string{}
	for i, h := range rec.Header {
		col[h] = rec.Rows[0][i]
	}
	if col["tpot_mean_ms"] != num(r.TPOT.Mean*1e3) || col["kv_tokens"] != i64(r.Memory.KVTokens) || col["fits"] != "true" {
		t.Errorf("record %v; want TPOT %g ms, %d KV tokens", col, r.TPOT.Mean*1e3, r.Memory.KVTokens)
	}
	b := DeployBatch([]string{"model_path"}, []deploy.BatchResult{{Row: deploy.BatchRow{Cells: []string{"x"}}, Result: r}})
	if got := b.Rows[0][1+len(DeployBatchOut)-2]; got != "true" || b.Rows[0][1] != num(r.TTFT.Mean*1e3) {
		t.Errorf("batch row %v", b.Rows[0])
	}
}
