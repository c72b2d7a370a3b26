package reports

import (
	"fmt"
	"strings"

	"github.com/gpucalc/gpucalc/deploy"
	"github.com/gpucalc/gpucalc/units"
)

// DeployTables is 'gpucalc deploy': the deployment's memory, latencies and
// throughput.
func DeployTables(r deploy.Result, origin string) []Table {
	q, m, e := r.Query, r.Memory, r.Engine
	load := fmt.Sprintf("%d concurrent clients", q.Concurrency)
	if q.Rate > 0 {
		load = fmt.Sprintf("%g requests/s", q.Rate)
	}
	layout := fmt.Sprintf("tp %d × dp %d", q.TP, q.DP)
	if d := r.Disagg; d != nil {
		p := d.Disagg
		layout = fmt.Sprintf("%d prefill workers of tp %d, %d decode workers of tp %d", p.PrefillWorkers, p.PrefillTP, p.DecodeWorkers, p.DecodeTP)
	}
	t := Table{Title: fmt.Sprintf("%s on %d × %s, %s (%s): %s of %d in, %d out", r.Model, r.GPUs, r.Device, e.Title, layout, load, q.ISL, q.OSL),
		Header: []string{"Quantity", "Value"}}
	row := func(k, v string) { t.Rows = append(t.Rows, []string{k, v}) }
	if d := r.Disagg; d != nil {
		row("prefill worker KV", fmt.Sprintf("%s: %d tokens", gib(d.PrefillMemory.KV), d.PrefillMemory.KVTokens))
		row("KV transfer", fmt.Sprintf("%s per request over %s (%s per GPU)", units.FormatDuration(d.Transfer), d.Disagg.Link, units.FormatBandwidth(d.LinkBytesPerS)))
		row("requests/s", fmt.Sprintf("%.2f", d.RequestsPerSec))
	}
	row("weights per GPU", gib(m.Weights))
	row("activations (a full step)", gib(m.Workspace))
	row("KV cache per GPU", fmt.Sprintf("%s: %d tokens, %d requests of %d tokens", gib(m.KV), m.KVTokens, m.KVSequences, q.ISL+q.OSL))
	fit := "fits"
	if !m.Fits {
		fit = "DOES NOT FIT"
	}
	row("memory", fmt.Sprintf("%s of %s usable, %g used by %s: %s", gib(m.Weights+m.Workspace+m.KV), gib(m.Usable), e.MemoryShare, e.Name, fit))
	if m.Fits {
		d := units.FormatDuration
		row("TTFT", d(r.TTFT.Mean)+" mean, "+d(r.TTFT.P90)+" p90")
		row("TPOT", d(r.TPOT.Mean)+" mean, "+d(r.TPOT.P90)+" p90")
		row("end to end", d(r.E2E.Mean)+" mean, "+d(r.E2E.P90)+" p90")
		row("tokens/s", fmt.Sprintf("%.0f for the deployment, %.0f per GPU, %.1f per user", r.TokensPerSecond, r.PerGPU, r.PerUser))
		row("engine steps", fmt.Sprintf("%d (mean batch %.1f sequences), %d preemptions", r.Steps, r.MeanBatch, r.Preemptions))
	}
	t.Notes = append(t.Notes, fmt.Sprintf("%s: budget %d tokens a step, at most %d sequences, KV blocks of %d tokens, %s per step and %s per request outside the GPU; %d requests simulated%s.",
		e.Title, e.MaxTokens, e.MaxSeqs, e.BlockSize, units.FormatDuration(e.StepOverhead), units.FormatDuration(e.RequestOverhead), q.Requests, originNote(origin)))
	t.Notes = append(t.Notes, "Reproduce: "+q.Args().String())
	for _, n := range r.Notes {
		t.Notes[0] += " " + n + "."
	}
	return []Table{t}
}

func originNote(origin string) string {
	if origin == "" {
		return ""
	}
	return "; device " + origin
}

// DeployRecords is 'gpucalc deploy' as one CSV record.
func DeployRecords(r deploy.Result) []Table {
	q, m := r.Query, r.Memory
	t := Table{Key: "deploy", Header: []string{"model", "device", "engine", "tp", "dp", "gpus", "isl", "osl", "concurrency", "rate",
		"weights_bytes", "workspace_bytes", "kv_bytes", "kv_tokens", "kv_sequences", "fits",
		"ttft_mean_ms", "ttft_p90_ms", "tpot_mean_ms", "tpot_p90_ms", "e2e_mean_ms", "e2e_p90_ms",
		"tokens_per_s", "tokens_per_s_per_gpu", "tokens_per_s_per_user", "steps", "preemptions"}}
	row := []string{r.Model, r.Device, r.Engine.Name, i64(q.TP), i64(q.DP), i64(r.GPUs), i64(q.ISL), i64(q.OSL), i64(q.Concurrency), num(q.Rate),
		num(m.Weights), num(m.Workspace), num(m.KV), i64(m.KVTokens), i64(m.KVSequences), boolean(m.Fits)}
	if m.Fits {
		row = append(row, num(r.TTFT.Mean*1e3), num(r.TTFT.P90*1e3), num(r.TPOT.Mean*1e3), num(r.TPOT.P90*1e3), num(r.E2E.Mean*1e3), num(r.E2E.P90*1e3),
			num(r.TokensPerSecond), num(r.PerGPU), num(r.PerUser), integer(r.Steps), integer(r.Preemptions))
	} else {
		row = append(row, make([]string, 11)...)
	}
	t.Rows = [][]string{row}
	return []Table{t}
}

// DeployBatchOut are the columns deploy batch appends to its input.
var DeployBatchOut = []string{"ttft_ms", "tpot_ms", "tokens_per_s", "tokens_per_s_per_gpu", "fits", "error"}

// DeployBatch renders batch results: the input cells, then DeployBatchOut.
func DeployBatch(header []string, rows []deploy.BatchResult) Table {
	t := Table{Header: append(append([]string(nil), header...), DeployBatchOut...), Rows: make([][]string, 0, len(rows))}
	for _, r := range rows {
		cells := inputCells(header, r.Row.Cells, len(DeployBatchOut))
		x := r.Result
		switch {
		case r.Err != nil:
			cells = append(cells, "", "", "", "", "", strings.ReplaceAll(r.Err.Error(), "\n", "; "))
		case !x.Memory.Fits:
			cells = append(cells, "", "", "", "", "false", "")
		default:
			cells = append(cells, num(x.TTFT.Mean*1e3), num(x.TPOT.Mean*1e3), num(x.TokensPerSecond), num(x.PerGPU), "true", "")
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}

// DeployBatchJSON is the batch as JSON objects: the input cells and the
// results under DeployBatchOut's keys.
func DeployBatchJSON(header []string, rows []deploy.BatchResult) []map[string]any {
	out := make([]map[string]any, 0, len(rows))
	for _, r := range rows {
		o := inputJSON(header, r.Row.Cells, r.Err)
		if r.Err == nil {
			x := r.Result
			o["fits"] = x.Memory.Fits
			o["ttft_ms"], o["tpot_ms"], o["tokens_per_s"], o["tokens_per_s_per_gpu"] = nil, nil, nil, nil
			if x.Memory.Fits {
				o["ttft_ms"], o["tpot_ms"], o["tokens_per_s"], o["tokens_per_s_per_gpu"] = x.TTFT.Mean*1e3, x.TPOT.Mean*1e3, x.TokensPerSecond, x.PerGPU
			}
		}
		out = append(out, o)
	}
	return out
}
