package main

import (
	"fmt"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/spf13/cobra"
)

type rooflineOptions struct {
	f        *factory
	devices  deviceFlags
	ops      []string
	workload string
	chart    chartFlags
	section  sectionFlag
	// conditions are --l2 and --launch.
	conditions conditionFlags
}

// conditionFlags are --l2 and --launch: the measurement conditions the
// times assume, mapped onto the query's L2 and Launch.
type conditionFlags struct{ l2, launch string }

const conditionsHelp = `Conditions: --l2 cold (default: inputs come from DRAM, as benchmarks that
flush L2 measure) or warm (inputs that fit in L2 are read from it, as replays
without a flush); --launch eager (default: each op launched from the host, its
launch overhead and ramp included) or graph (kernels replayed back to back in
a CUDA graph: each costs the graph's kernel period). Serving engines' decode
steps, and aiconfigurator's op tables, are warm and graph. Every output states
the conditions.`

func addConditionFlags(cmd *cobra.Command, c *conditionFlags) {
	cmd.Flags().StringVar(&c.l2, "l2", string(roofline.DefaultL2), "L2 state: cold (inputs from DRAM) or warm (inputs that fit in L2 read from it)")
	cmd.Flags().StringVar(&c.launch, "launch", string(roofline.DefaultLaunch), "launch: eager (launch overhead per op) or graph (CUDA-graph replay)")
	_ = cmd.RegisterFlagCompletionFunc("l2", cobra.FixedCompletions([]string{string(roofline.L2Cold), string(roofline.L2Warm)}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("launch", cobra.FixedCompletions([]string{string(roofline.LaunchEager), string(roofline.LaunchGraph)}, cobra.ShellCompDirectiveNoFileComp))
}

// under prices every model of roofline batch (which has no query type of
// its own) under the flags' conditions, read by the roofline package.
func (c conditionFlags) under(ms []*roofline.Model) error {
	l2, err := roofline.ParseL2(c.l2)
	if err != nil {
		return usageError{fmt.Errorf("--l2: %w", err)}
	}
	launch, err := roofline.ParseLaunch(c.launch)
	if err != nil {
		return usageError{fmt.Errorf("--launch: %w", err)}
	}
	for i, m := range ms {
		ms[i] = m.Under(roofline.Conditions{L2: l2, Launch: launch})
	}
	return nil
}

const rooflineConventions = `Conventions: an FMA counts 2 FLOPs; transcendentals (exp, erf, tanh, rsqrt)
are counted apart and never as FLOPs. Per element: layernorm 7 FLOPs (+1 rsqrt
per row), rmsnorm 4, softmax 4 + 1 exp, GELU erf 4 + 1 erf, GELU tanh 8 + 1
tanh, SiLU 3 + 1 exp, ReLU/add/mul 1, copy 0. Attention counts 4·b·h·sq·sk·d
matrix FLOPs (causal keeps sk·sq − sq²/2 of the scores: half when sq = sk),
FLOPs on query heads, K/V bytes on KV heads. Bytes are ideal: each input read
once, each output written once. Rates are decimal (1 TB/s = 1e12 B/s).

Lower bound: max(FLOPs / dense datasheet peak, bytes / bandwidth), with DRAM
bandwidth, or L2's when the working set fits in L2 and the catalog has an L2
figure. Expected: launch overhead + the slower of compute and memory at
achievable fractions of peak (devices/data/arch/efficiency.yaml: per memory
type, per architecture family; or the device's measured figures), with GEMM
tiles and waves, flash-attention blocks and SFU time; inputs come from DRAM
(a cold L2, as benchmarks that flush L2 measure).`

func newCmdRoofline(f *factory, runF func(*rooflineOptions) error) *cobra.Command {
	opts := &rooflineOptions{f: f}
	cmd := &cobra.Command{
		Use:   "roofline (--op SPEC ... | --workload FILE)",
		Short: "Bound, lower-bound and expected time of ops on a GPU",
		Long: `Place ops on a GPU's roofline: the compute ceiling of the path each op runs
on (tensor cores for matmul, attention and conv2d in tf32/bf16/fp16/fp8/int8/
fp64; CUDA cores otherwise), the memory ceiling, the ridge point, attainable
throughput, whether it is memory- or compute-bound, a lower-bound time from
datasheet peaks and an expected time. Give ops with --op (repeatable) or a
workload file (- reads standard input); --devices compares several GPUs side
by side.

` + ops.SpecHelp + `

` + ops.WorkloadSchema + `

` + rooflineConventions + `

` + conditionsHelp,
		Example: `  gpucalc roofline --op "matmul m=4096 n=4096 k=4096 dtype=bf16"
  gpucalc roofline --op "linear tokens=16 in=8192 out=8192 quant=fp8" --l2 warm --launch graph
  gpucalc roofline --op "attention b=8 h=16 s=4096 d=128 causal" --op "softmax rows=4096 cols=32768"
  gpucalc roofline --workload examples/llama3-8b-decode.yaml --device h100
  gpucalc roofline --workload examples/llama3-8b-prefill.yaml --devices h100,a100,h200
  gpucalc roofline --workload examples/llama3-8b-prefill.yaml --plot prefill.png \
    --size 16x10cm --dpi 200
  gpucalc roofline batch --device h100 --input shapes.csv --format csv`,
		Args: args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			return execute(opts, runF, rooflineRun)
		},
	}
	f.addDeviceFlags(cmd, &opts.devices, true)
	addConditionFlags(cmd, &opts.conditions)
	f.addChartFlags(cmd, &opts.chart, "a roofline chart", chart.DefaultSize)
	cmd.Flags().StringArrayVar(&opts.ops, "op", nil, "op `spec`, e.g. \"matmul m=4096 n=4096 k=4096 dtype=bf16\" (repeatable)")
	cmd.Flags().StringVar(&opts.workload, "workload", "", "workload YAML `file` (a named list of ops), or - for standard input")
	_ = cmd.MarkFlagFilename("workload", "yaml", "yml")
	cmd.MarkFlagsMutuallyExclusive("op", "workload")
	cmd.MarkFlagsOneRequired("op", "workload")
	f.addSectionFlag(cmd, &opts.section, nil, "points", "summary")
	cmd.AddCommand(newCmdRooflineBatch(f, nil))
	return cmd
}

// query maps the flags onto the roofline question, reading the workload
// file --workload names.
func (opts *rooflineOptions) query() (roofline.Query, error) {
	f := opts.f
	c, err := f.Catalog()
	if err != nil {
		return roofline.Query{}, err
	}
	q := roofline.Query{Ops: opts.ops, Devices: f.choice(opts.devices), Catalog: c, Datasheet: f.datasheet,
		L2: opts.conditions.l2, Launch: opts.conditions.launch}
	if opts.workload != "" {
		w, err := f.ReadWorkload(opts.workload)
		if err != nil {
			return q, err
		}
		q.WorkloadFile, q.Workload = opts.workload, &w
	}
	return q, nil
}

// analysis is one device's result: the view JSON writes and what the
// tables and charts need besides.
type analysis struct {
	reports.RooflineView
	model *roofline.Model
}

// analyzeOn pairs each device's view of a (side by side, a device that
// cannot run the workload says why) with its roofline model.
func analyzeOn(a roofline.Answer) []analysis {
	origins := make([]string, len(a.Devices))
	for i, t := range a.Devices {
		origins[i] = t.Origin
	}
	views := reports.NewRooflineViews(a.Priced, origins)
	out := make([]analysis, len(views))
	for i, v := range views {
		out[i] = analysis{model: a.Models[i], RooflineView: v}
	}
	return out
}

func rooflineRun(opts *rooflineOptions) error {
	f := opts.f
	form, err := f.OutFormat(nil, &opts.chart)
	if err != nil {
		return err
	}
	q, err := opts.query()
	if err != nil {
		return err
	}
	a, err := q.Answer()
	if err != nil {
		return usage(err)
	}
	w, ts := a.Workload, a.Devices
	res := analyzeOn(a)
	views := make([]reports.RooflineView, len(res))
	for i, r := range res {
		views[i] = r.RooflineView
	}
	notes, err := opts.chart.draw(func() (chart.Chart, error) {
		return reports.RooflineViewsChart(w.Name, devicesOf(ts), views), nil
	})
	if err != nil {
		return err
	}
	for _, v := range views {
		if v.NotAvailable == "" {
			continue
		}
		if opts.chart.file != "" {
			notes = append(notes, "Not drawn: "+v.Device+" ("+v.NotAvailable+").")
		}
		if form == reports.FormatCSV { // the table says so under it, JSON in the view
			f.Warn("%s", v.Error)
		}
	}
	var view any = reports.RooflineComparison{Devices: views}
	if len(views) == 1 {
		view = views[0]
	}
	return f.Output(form, &opts.section, notes, view,
		func() []reports.Table { return rooflineTables(f, w, res) },
		func() []reports.Table { return reports.RooflineRecords(views) })
}

// rooflineTables are the human tables: the devices side by side, then per
// device its ops and totals.
func rooflineTables(f *factory, w ops.Workload, res []analysis) []reports.Table {
	views := make([]reports.RooflineView, len(res))
	notes := make([][]string, len(res))
	for i, r := range res {
		views[i], notes[i] = r.RooflineView, modelNotes(f, r.model)
	}
	return reports.RooflineTables(w.Name, views, notes)
}

// modelNotes states the figures behind a device's expected times: two
// lines, and the provenance of measured figures with --verbose.
func modelNotes(f *factory, m *roofline.Model) []string {
	return reports.RooflineModelNotes(m, f.verbose)
}
