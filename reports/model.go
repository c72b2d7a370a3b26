package reports

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/units"
)

// tpText is the smallest tensor-parallel degree that fits on device dev:
// the flag that runs it, and where it spans hosts, that the all-reduces then
// cross the network.
func tpText(tp int64, dev string) string {
	switch {
	case tp == 0:
		return "none up to 64: hold weights and cache in fewer bytes (--weights fp8 or int4, --kv fp8) or shorten the context"
	case tp == 1:
		return "1"
	case tp > model.HostGPUs:
		return fmt.Sprintf("%d (%d × %s, --tp %d): more than one host's %d GPUs, so TP across nodes runs over the network", tp, tp, dev, tp, model.HostGPUs)
	}
	return fmt.Sprintf("%d (%d × %s, --tp %d)", tp, tp, dev, tp)
}

// notPriced is what a time cell holds for a request that does not fit.
const notPriced = "none: does not fit"

// ModelSummary is the answer for one device: memory per GPU, then prefill
// and decode. A request that does not fit gets its verdict and the
// smallest TP that fits instead of times.
func ModelSummary(title string, r model.Report, notes []string) Table {
	q := r.Request
	m := r.Memory
	fits := "fits"
	if !m.Fits {
		fits = "DOES NOT FIT"
	}
	t := Table{Title: title, Header: []string{"Quantity", "Value"}, Notes: notes}
	row := func(k, v string) { t.Rows = append(t.Rows, []string{k, v}) }
	if r.TextConfig != "" {
		row("model", "the language model of a multimodal config (text_config "+r.TextConfig+"); no vision tower")
	}
	row("parameters", siCount(float64(m.Params.Total))+" ("+strconv.FormatInt(m.Params.Total, 10)+")")
	if m.Params.Active != m.Params.Total {
		row("active parameters per token", siCount(float64(m.Params.Active)))
	}
	wt := string(q.Weights)
	if q.ExpertWeights != "" && q.ExpertWeights != q.Weights {
		wt += ", experts " + string(q.ExpertWeights)
	}
	row("weights per GPU", gib(m.Weights)+" ("+wt+")")
	// Under tensor parallel each GPU holds its share of the KV heads: the
	// labels say per GPU, as for the weights.
	row("KV per token per GPU", units.FormatSize(int64(m.KVPerToken))+" ("+string(q.KV)+")")
	row("KV cache per GPU", memSize(m.KV))
	// The workspace of the phase whose total is shown: a decode step's is
	// small (MiB), a long prefill's large.
	row("workspace ("+string(r.MemoryPhase)+")", memSize(m.Workspace))
	row("memory per GPU", gib(m.Total)+" of "+usable(m.Usable)+": "+fits)
	row("smallest TP that fits", tpText(r.SmallestTP, r.Device))
	if !r.Fits() {
		return t
	}
	p, d := r.Prefill, r.Decode
	row("prefill (TTFT)", stepTime(*r.TTFT, *p)+", "+units.FormatDuration(p.LowerBound)+" lower bound; "+
		strconv.Itoa(p.Kernels)+" kernels, mostly "+prefillLabel(p.Dominant))
	row("decode step (TPOT)", stepTime(*r.TPOT, *d)+", "+units.FormatDuration(d.LowerBound)+" lower bound at "+
		strconv.FormatInt(q.Ctx, 10)+" tokens of context")
	dom := string(d.Dominant) + " (" + shares(*d) + ")"
	if d.Wall > d.Expected {
		dom = "launches: the CPU's " + strconv.Itoa(d.Kernels) + " kernel launches take " + units.FormatDuration(d.Wall) +
			", the GPU's work " + units.FormatDuration(d.Expected) + " (GPU time: " + shares(*d) + ")"
	}
	row("decode dominated by", dom)
	row("decode tokens/s", strconv.FormatFloat(d.PerSequence, 'f', 1, 64)+" per sequence, "+
		strconv.FormatFloat(d.TokensPerSecond, 'f', 0, 64)+" for the batch")
	if r.EndToEnd > 0 {
		row("end to end", units.FormatDuration(r.EndToEnd)+" for "+strconv.FormatInt(q.Gen, 10)+" tokens")
	}
	return t
}

// stepTime is a step's time: expected, or with the eager engine its wall
// time and the GPU time within it.
func stepTime(t float64, r model.Result) string {
	if r.Wall > 0 {
		return units.FormatDuration(t) + " wall (" + units.FormatDuration(r.Expected) + " GPU time)"
	}
	return units.FormatDuration(t) + " expected"
}

// prefillLabel names what dominates a prefill: its linear layers are
// compute-bound, so "weights" reads as the linear layers.
func prefillLabel(c model.Category) string {
	if c == model.Weights {
		return "linear layers"
	}
	return string(c)
}

// shares lists the decode step's time by category, largest first.
func shares(r model.Result) string {
	var parts []string
	for _, k := range []model.Category{model.Weights, model.KVCache, model.Launches, model.Elementwise, model.Comm} {
		if v := r.Time[k]; v > 0 {
			parts = append(parts, string(k)+" "+strconv.FormatFloat(100*v/r.Expected, 'f', 0, 64)+"%")
		}
	}
	return strings.Join(parts, ", ")
}

// ModelOps lists a step's ops with their count, bound and times (one layer's
// op counted once per layer).
func ModelOps(title string, r model.Result) Table {
	t := Table{Title: title, Header: []string{"Op", "Count", "Shape", "Bound", "Lower bound µs", "Expected µs", "Share"}}
	for i, o := range r.Ops {
		p := r.Points[i]
		n := float64(o.Count)
		bound := string(p.Bound)
		if p.ExpectedBound == "launch" || p.ExpectedBound == "latency" {
			bound = p.ExpectedBound
		}
		t.Rows = append(t.Rows, []string{o.Name, strconv.Itoa(o.Count), o.Op.String(), bound,
			us(n * p.LowerBound), us(n * p.Expected), strconv.FormatFloat(100*n*p.Expected/r.Expected, 'f', 1, 64) + "%"})
	}
	return t
}

// ModelRowColumns are the CSV columns of one report per device.
var ModelRowColumns = []string{"model", "device", "batch", "prompt", "ctx", "gen", "tp", "weights_dtype", "kv_dtype",
	"params", "weights_bytes", "kv_bytes_per_token", "kv_bytes", "workspace_bytes", "memory_phase", "memory_bytes", "usable_bytes", "fits", "smallest_tp",
	"ttft_ms", "prefill_lower_bound_ms", "tpot_ms", "decode_lower_bound_ms", "decode_tokens_per_s", "decode_dominant", "end_to_end_ms"}

// ModelRows is one row per device, for CSV and side-by-side comparison.
func ModelRows(rs []model.Report) Table {
	t := Table{Header: ModelRowColumns}
	for _, r := range rs {
		if r.NotAvailable != "" {
			continue // the command warns; JSON says why
		}
		q, m := r.Request, r.Memory
		i := func(v int64) string { return strconv.FormatInt(v, 10) }
		row := []string{r.Model, r.Device, i(q.Batch), i(q.Prompt), i(q.Ctx), i(q.Gen), i(q.TP), string(q.Weights), string(q.KV),
			i(m.Params.Total), num(m.Weights), num(m.KVPerToken), num(m.KV), num(m.Workspace), string(r.MemoryPhase), num(m.Total), num(m.Usable), strconv.FormatBool(m.Fits),
			i(r.SmallestTP)}
		// A request that does not fit has empty times, as JSON's nulls.
		times := make([]string, 7)
		if r.Fits() {
			times = []string{num(*r.TTFT * 1e3), num(r.Prefill.LowerBound * 1e3), num(*r.TPOT * 1e3), num(r.Decode.LowerBound * 1e3),
				num(r.Decode.TokensPerSecond), string(r.Decode.Dominant), ""}
			if r.EndToEnd > 0 { // no --gen: no end-to-end time
				times[6] = num(r.EndToEnd * 1e3)
			}
		}
		t.Rows = append(t.Rows, append(row, times...))
	}
	return t
}

// ModelCompare puts the reports of several devices side by side: every
// device's summary rows, in order; a device that does not fit has no times
// and says so in their cells.
func ModelCompare(rs []model.Report) Table {
	t := Table{Title: "Side by side", Header: []string{"Quantity"}}
	var keys []string
	cells := map[string][]string{}
	for d, r := range rs {
		t.Header = append(t.Header, r.Device)
		if r.NotAvailable != "" {
			continue // every cell says why
		}
		prev := -1 // a key first seen on a later device goes after its predecessor
		for _, row := range ModelSummary("", r, nil).Rows {
			k := row[0]
			if _, ok := cells[k]; !ok {
				keys = slices.Insert(keys, prev+1, k)
				cells[k] = make([]string, len(rs))
			}
			cells[k][d] = row[1]
			prev = slices.Index(keys, k)
		}
	}
	for _, k := range keys {
		out := []string{k}
		for d, v := range cells[k] {
			switch {
			case rs[d].NotAvailable != "":
				v = "n/a: " + rs[d].NotAvailable
			case v == "" && !rs[d].Fits():
				v = notPriced
			}
			out = append(out, v)
		}
		t.Rows = append(t.Rows, out)
	}
	return t
}

// ModelList lists the built-in models.
func ModelList(rows [][]string) Table {
	return Table{Title: "Built-in models", Header: []string{"name", "hf_id", "model_type", "params", "source"}, Rows: rows, Footnoted: []string{"source"},
		Notes: []string{"A Hugging Face id names its built-in in any case, and so do the ids of the same architecture (instruct variants: JSON's same_architecture); so does an unambiguous prefix."}}
}

// ModelBatchOut are the columns model batch appends to its input.
var ModelBatchOut = []string{"params", "weights_bytes", "kv_bytes_per_token", "memory_bytes", "fits", "smallest_tp", "lower_bound_ms", "expected_ms", "tokens_per_s", "error"}

// ModelTables renders the tables of 'gpucalc model' for the model named name:
// the devices side by side when there are several, else the summary on the
// one device (origin says where it came from when not named) and, with
// ops, every op of the prefill and decode steps.
func ModelTables(name string, q model.Request, rs []model.Report, origin string, ops bool) []Table {
	cache := "sliding-window layers cache their window"
	if q.FullCache {
		cache = "every layer caches the whole context"
	}
	layout := fmt.Sprintf("tp %d", q.TP)
	if q.EP > 1 || q.MoETP > 0 {
		moeTP, ep, groups := model.Shape{TP: q.TP, EP: q.EP, MoETP: q.MoETP}.Experts()
		layout += fmt.Sprintf(", experts over ep %d × moe-tp %d GPUs shared by %d attention groups", ep, moeTP, groups)
	}
	shape := fmt.Sprintf("batch %d, prompt %d, decode at %d tokens of context, %s; weights %s, activations %s, KV %s; %s (flags: --batch --prompt --ctx --gen --tp --ep --moe-tp --weights --dtype --kv --full-cache)",
		q.Batch, q.Prompt, q.Ctx, layout, q.Weights, q.Activations, q.KV, cache)
	notes := []string{"Shape: " + shape + ".", q.Engine.Assumes()}
	if len(rs) > 1 {
		t := ModelCompare(rs)
		t.Title = name + " side by side"
		t.Notes = notes
		for _, r := range rs {
			if r.Error != "" {
				t.Notes = append(t.Notes, r.Error+".")
			}
		}
		return []Table{t}
	}
	r := rs[0]
	title := name + " on " + r.Device
	if origin != "" {
		title += " (" + origin + ")"
	}
	tables := []Table{ModelSummary(title, r, notes)}
	if ops && r.Fits() {
		tables = append(tables, ModelOps("Prefill ops ("+strconv.FormatInt(q.Batch, 10)+" × "+strconv.FormatInt(q.Prompt, 10)+" tokens)", *r.Prefill),
			ModelOps("Decode ops (batch "+strconv.FormatInt(q.Batch, 10)+", "+strconv.FormatInt(q.Ctx, 10)+" tokens of context)", *r.Decode))
	}
	return tables
}

// ModelDecodeChart is 'gpucalc model --plot': the decode step's ops on each
// device's roofline (devs[i] is rs[i]'s device), of the devices it fits
// on; it is an error when it fits on none.
func ModelDecodeChart(name string, q model.Request, devs []devices.Device, rs []model.Report) (chart.Roofline, error) {
	var pts [][]roofline.Point
	var fit []devices.Device
	for i, r := range rs {
		if r.Fits() {
			pts, fit = append(pts, r.Decode.Points), append(fit, devs[i])
		}
	}
	if len(fit) == 0 {
		return chart.Roofline{}, fmt.Errorf("no chart: %s does not fit on %s at tp %d, so its decode step has no times (raise --tp)", name, deviceNames(devs), q.TP)
	}
	return RooflineChartOf(fmt.Sprintf("%s decode step: batch %d, %d tokens of context", name, q.Batch, q.Ctx), fit, pts), nil
}

// deviceNames lists devices' names: "L4" or "L4, T4".
func deviceNames(devs []devices.Device) string {
	var names []string
	for _, d := range devs {
		names = append(names, d.Name)
	}
	return strings.Join(names, ", ")
}
