package reports

import (
	"fmt"
	"strings"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/deploy"
	"github.com/gpucalc/gpucalc/units"
)

// DeployView is 'gpucalc deploy --format json': the answer, its query
// filled, as deploy gives it.
type DeployView struct{ deploy.Result }

// DeploySearchView is the SLA search as JSON: every candidate, ranked.
type DeploySearchView struct{ deploy.SearchResult }

// DeployTables is 'gpucalc deploy': the deployment's memory, latencies and
// throughput.
func DeployTables(r deploy.Result, origin string) []Table {
	q, m, e := r.Query, r.Memory, r.Engine
	load := fmt.Sprintf("%d concurrent clients", q.Concurrency)
	if q.Rate > 0 {
		load = fmt.Sprintf("%g requests/s", q.Rate)
	}
	layout := parallelism(q.TP, q.DP, q.EP, q.MoETP)
	if d := r.Disagg; d != nil {
		p := d.Disagg
		layout = fmt.Sprintf("%d prefill workers of %s, %d decode workers of %s", p.PrefillWorkers, parallelism(p.PrefillTP, p.PrefillDP, p.PrefillEP, p.PrefillMoETP),
			p.DecodeWorkers, parallelism(p.DecodeTP, p.DecodeDP, p.DecodeEP, p.DecodeMoETP))
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
	t.Notes = append(t.Notes, fmt.Sprintf("%s: budget %d tokens a step, at most %d sequences, KV blocks of %d tokens, %s per step outside the GPU, %s; %s%s.",
		e.Title, e.MaxTokens, e.MaxSeqs, e.BlockSize, units.FormatDuration(e.StepOverhead), graphNote(e), simulated(r), originNote(origin)))
	t.Notes = append(t.Notes, "Reproduce: "+q.Args().String())
	for _, n := range r.Notes {
		t.Notes[0] += " " + n + "."
	}
	return []Table{t}
}

// graphNote says which steps run without a CUDA graph.
func graphNote(e deploy.Engine) string {
	if e.GraphTokens == 0 {
		return "prefill steps launched from the host"
	}
	return fmt.Sprintf("prefill steps of more than %d tokens launched from the host", e.GraphTokens)
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
	t := Table{Key: "deploy", Header: []string{"model", "device", "engine", "tp", "dp", "ep", "moe_tp", "gpus", "isl", "osl", "concurrency", "rate",
		"weights_bytes", "workspace_bytes", "kv_bytes", "kv_tokens", "kv_sequences", "fits",
		"ttft_mean_ms", "ttft_p90_ms", "tpot_mean_ms", "tpot_p90_ms", "e2e_mean_ms", "e2e_p90_ms",
		"tokens_per_s", "tokens_per_s_per_gpu", "tokens_per_s_per_user", "steps", "preemptions"}}
	row := []string{r.Model, r.Device, r.Engine.Name, i64(q.TP), i64(q.DP), i64(q.EP), i64(q.MoETP), i64(r.GPUs), i64(q.ISL), i64(q.OSL), i64(q.Concurrency), num(q.Rate),
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

// DeploySearchTables is the SLA search: the deployments that meet the
// target by tokens/s per GPU, then each device and layout's best and why
// it lost.
func DeploySearchTables(r deploy.SearchResult) []Table {
	s := r.Search
	var target []string
	if s.TTFT > 0 {
		target = append(target, "TTFT ≤ "+units.FormatDuration(s.TTFT))
	}
	if s.TPOT > 0 {
		target = append(target, "TPOT ≤ "+units.FormatDuration(s.TPOT))
	}
	b := s.Base.Filled()
	head := []string{"rank", "device", "layout", "GPUs", "clients", "TTFT", "TPOT", "tokens/s/GPU", "tokens/s/user"}
	top := Table{Title: fmt.Sprintf("%s, %s, %d in / %d out: %d of %d deployments meet %s", s.Base.Model, b.Engine, b.ISL, b.OSL, r.Met, len(r.Candidates), strings.Join(target, " and ")),
		Header: head}
	d := units.FormatDuration
	for i, c := range r.Candidates[:min(r.Met, 10)] {
		x := c.Result
		top.Rows = append(top.Rows, []string{integer(i + 1), x.Device, c.Layout(), i64(x.GPUs), i64(x.Query.Concurrency), d(x.TTFT.Mean), d(x.TPOT.Mean), fmt.Sprintf("%.0f", x.PerGPU), fmt.Sprintf("%.1f", x.PerUser)})
	}
	if r.Met == 0 {
		top.Notes = append(top.Notes, "No deployment meets the target; the table below says why each fails.")
	}
	// Each device and layout once: its best candidate (the list is ranked).
	why := Table{Title: "Each device and layout at its best, and why it lost", Header: []string{"device", "layout", "clients", "tokens/s/GPU", "tokens/s/user", "loses because"}}
	seen := map[string]bool{}
	best := 0.0
	if r.Met > 0 {
		best = r.Candidates[0].Result.PerGPU
	}
	for i, c := range r.Candidates {
		k := c.Result.Device + "|" + c.Layout()
		if seen[k] {
			continue
		}
		seen[k] = true
		x := c.Result
		reason := c.Fails
		switch {
		case i == 0 && c.Fails == "":
			reason = "wins"
		case c.Fails == "":
			reason = fmt.Sprintf("meets the target at %.0f%% of the best's tokens/s per GPU", 100*x.PerGPU/best)
		}
		tps, tpu := "", ""
		if x.PerGPU > 0 {
			tps, tpu = fmt.Sprintf("%.0f", x.PerGPU), fmt.Sprintf("%.1f", x.PerUser)
		}
		why.Rows = append(why.Rows, []string{x.Device, c.Layout(), i64(x.Query.Concurrency), tps, tpu, strings.ReplaceAll(reason, "\n", "; ")})
	}
	why.Notes = append(why.Notes, "Reproduce: "+s.Args().String())
	return []Table{top, why}
}

// DeploySearchRecords is every candidate of a search, ranked.
func DeploySearchRecords(r deploy.SearchResult) []Table {
	t := Table{Key: "candidates", Header: []string{"rank", "device", "layout", "gpus", "concurrency", "fits", "ttft_ms", "tpot_ms", "tokens_per_s_per_gpu", "tokens_per_s_per_user", "fails"}}
	for i, c := range r.Candidates {
		x := c.Result
		row := []string{integer(i + 1), x.Device, c.Layout(), i64(x.GPUs), i64(x.Query.Concurrency), boolean(x.Memory.Fits)}
		if x.PerGPU > 0 {
			row = append(row, num(x.TTFT.Mean*1e3), num(x.TPOT.Mean*1e3), num(x.PerGPU), num(x.PerUser))
		} else {
			row = append(row, "", "", "", "")
		}
		t.Rows = append(t.Rows, append(row, strings.ReplaceAll(c.Fails, "\n", "; ")))
	}
	return []Table{t}
}

// DeployParetoChart is the search's Pareto front per device.
func DeployParetoChart(r deploy.SearchResult) chart.Pareto {
	b := r.Search.Base.Filled()
	c := chart.Pareto{Title: fmt.Sprintf("%s at %d/%d tokens (%s): tokens/s per GPU against per user", r.Search.Base.Model, b.ISL, b.OSL, b.Engine)}
	for _, dev := range r.Devices() {
		s := chart.ParetoSeries{Name: dev}
		for _, x := range r.Candidates {
			if x.Result.Device == dev && x.Result.PerGPU > 0 {
				s.All = append(s.All, chart.ParetoPoint{PerUser: x.Result.PerUser, PerGPU: x.Result.PerGPU})
			}
		}
		for _, x := range r.Pareto(dev) {
			s.Front = append(s.Front, chart.ParetoPoint{PerUser: x.Result.PerUser, PerGPU: x.Result.PerGPU})
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// parallelism names an engine's layout: tp × dp, and the experts' where
// they are not split as the attention is.
func parallelism(tp, dp, ep, moeTP int64) string {
	s := fmt.Sprintf("tp %d × dp %d", tp, dp)
	if ep > 1 || moeTP != tp {
		s += fmt.Sprintf(", experts ep %d × tp %d", ep, moeTP)
	}
	return s
}

// simulated says what the run simulated of the benchmark's requests.
func simulated(r deploy.Result) string {
	q := r.Query
	if q.Rate > 0 || r.Disagg != nil {
		return fmt.Sprintf("%d requests simulated", r.Simulated)
	}
	return fmt.Sprintf("a benchmark of %d requests: its first wave (every client at once) and %d requests as they drift apart simulated", q.Requests, r.Simulated)
}
