package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/units"
	"github.com/spf13/cobra"
)

type rooflineOptions struct {
	device   string
	devices  []string
	ops      []string
	workload string
	chart    chartOptions
}

// chartOptions are --plot, --size and --dpi.
type chartOptions struct {
	file, size string
	dpi        int
}

func addChartFlags(cmd *cobra.Command, o *chartOptions) {
	cmd.Flags().StringVar(&o.file, "plot", "", "also draw a roofline chart to `FILE`.png or FILE.svg")
	cmd.Flags().StringVar(&o.size, "size", "16x10cm", "chart `size`, WIDTHxHEIGHT in cm, mm or in")
	cmd.Flags().IntVar(&o.dpi, "dpi", reports.DefaultDPI, "PNG chart resolution in dots per inch")
	_ = cmd.MarkFlagFilename("plot", "png", "svg")
}

// check validates the chart flags before any work is done.
func (o chartOptions) check() (format string, size reports.ChartSize, err error) {
	if o.file == "" {
		return "", size, nil
	}
	if format, err = reports.ChartFormat(o.file); err != nil {
		return "", size, usageError{err}
	}
	if size, err = reports.ParseChartSize(o.size); err != nil {
		return "", size, usageError{err}
	}
	if o.dpi < 10 || o.dpi > 1200 {
		return "", size, usageError{fmt.Errorf("--dpi %d: expected 10 to 1200", o.dpi)}
	}
	return format, size, nil
}

// write draws the chart to the --plot file and returns the notes to print:
// the ops it could not place, with the reason.
func (o chartOptions) write(c reports.RooflineChart, format string, size reports.ChartSize) ([]string, error) {
	fh, err := os.Create(o.file)
	if err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	if err := c.Write(fh, format, size, o.dpi); err != nil {
		fh.Close()
		return nil, fmt.Errorf("chart %s: %w", o.file, err)
	}
	if err := fh.Close(); err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	notes := []string{"chart written to " + o.file}
	for _, u := range c.Unplaced() {
		notes = append(notes, "not on the chart: "+u)
	}
	return notes, nil
}

// printNotes adds chart notes under the first table, or writes them to
// stderr for CSV and JSON, which must stay machine-readable.
func (a *app) chartNotes(f reports.Format, tables []reports.Table, notes []string) {
	if len(notes) == 0 {
		return
	}
	if (f == reports.FormatTable || f == reports.FormatMarkdown) && len(tables) > 0 {
		tables[0].Notes = append(tables[0].Notes, notes...)
		return
	}
	for _, n := range notes {
		fmt.Fprintln(a.stderr, "gpucalc: "+n)
	}
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

func (a *app) newRooflineCmd() *cobra.Command {
	var opt rooflineOptions
	cmd := &cobra.Command{
		Use:   "roofline (--op SPEC ... | --workload FILE)",
		Short: "Bound, lower-bound and expected time of ops on a GPU",
		Long: `Place ops on a GPU's roofline: the compute ceiling of the path each op runs
on (tensor cores for matmul, attention and conv2d in tf32/bf16/fp16/fp8/int8/
fp64; CUDA cores otherwise), the memory ceiling, the ridge point, attainable
throughput, whether it is memory- or compute-bound, a lower-bound time from
datasheet peaks and an expected time. Give ops with --op (repeatable) or a
workload file; --devices compares several GPUs side by side.

` + ops.SpecHelp + `

` + ops.WorkloadSchema + `

` + rooflineConventions,
		Example: `  gpucalc roofline --op "matmul m=4096 n=4096 k=4096 dtype=bf16"
  gpucalc roofline --op "attention b=8 h=16 s=4096 d=128 causal" --op "softmax rows=4096 cols=32768"
  gpucalc roofline --workload examples/llama3-8b-decode.yaml --device h100
  gpucalc roofline --workload examples/llama3-8b-prefill.yaml --devices h100,a100,h200
  gpucalc roofline --workload examples/llama3-8b-prefill.yaml --plot prefill.png --size 16x10cm --dpi 200
  gpucalc roofline batch --device h100 --input shapes.csv --format csv`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runRoofline(opt) },
	}
	a.addDeviceFlag(cmd, &opt.device)
	addChartFlags(cmd, &opt.chart)
	a.addDevicesFlag(cmd, &opt.devices, "compare several GPUs, comma-separated `names` (overrides --device)")
	cmd.Flags().StringArrayVar(&opt.ops, "op", nil, "op `spec`, e.g. \"matmul m=4096 n=4096 k=4096 dtype=bf16\" (repeatable)")
	cmd.Flags().StringVar(&opt.workload, "workload", "", "workload YAML `file` (a named list of ops)")
	_ = cmd.MarkFlagFilename("workload", "yaml", "yml")
	cmd.MarkFlagsMutuallyExclusive("op", "workload")
	cmd.MarkFlagsOneRequired("op", "workload")
	cmd.AddCommand(a.newRooflineBatchCmd())
	return cmd
}

// rooflineInput turns --op or --workload into a workload.
func (a *app) rooflineInput(opt rooflineOptions) (ops.Workload, error) {
	if opt.workload != "" {
		fh, err := os.Open(opt.workload)
		if err != nil {
			return ops.Workload{}, usageError{fmt.Errorf("workload: %w", err)}
		}
		defer fh.Close()
		w, err := ops.ReadWorkload(opt.workload, fh)
		if err != nil {
			return ops.Workload{}, usageError{err}
		}
		return w, nil
	}
	w := ops.Workload{Name: "ops"}
	for _, s := range opt.ops {
		o, err := ops.Parse(s)
		if err != nil {
			return ops.Workload{}, usageError{err}
		}
		w.Entries = append(w.Entries, ops.Entry{Op: o, Count: 1})
	}
	return w, nil
}

// deviceAnalysis is one device's result, as JSON writes it.
type deviceAnalysis struct {
	dev        devices.Device
	model      *roofline.Model
	Device     string             `json:"device"`
	Origin     string             `json:"device_origin,omitempty"`
	Efficiency devices.Efficiency `json:"efficiency"`
	Notes      []string           `json:"notes,omitempty"`
	Points     []roofline.Point   `json:"points"`
	Summary    *roofline.Summary  `json:"summary,omitempty"`
}

func (a *app) analyzeOn(names []string, w ops.Workload) ([]deviceAnalysis, error) {
	var out []deviceAnalysis
	for _, n := range names {
		d, origin, err := a.Device(n)
		if err != nil {
			return nil, err
		}
		m, err := roofline.New(d)
		if err != nil {
			return nil, err
		}
		pts, err := m.AnalyzeWorkload(w)
		if err != nil {
			return nil, err
		}
		r := deviceAnalysis{dev: d, model: m, Device: d.Name, Origin: origin, Efficiency: m.Efficiency(), Notes: m.Notes, Points: pts}
		if len(w.Entries) > 1 {
			s := roofline.Summarize(pts)
			r.Summary = &s
		}
		out = append(out, r)
	}
	return out, nil
}

func (a *app) runRoofline(opt rooflineOptions) error {
	f, err := a.outFormat(nil)
	if err != nil {
		return err
	}
	chartFormat, chartSize, err := opt.chart.check()
	if err != nil {
		return err
	}
	w, err := a.rooflineInput(opt)
	if err != nil {
		return err
	}
	names := []string{opt.device}
	if len(opt.devices) > 0 {
		if _, err := a.Devices(opt.devices); err != nil {
			return err
		}
		names = opt.devices
	}
	res, err := a.analyzeOn(names, w)
	if err != nil {
		return err
	}
	var notes []string
	if opt.chart.file != "" {
		var devs []devices.Device
		var pts [][]roofline.Point
		var title []string
		for _, r := range res {
			devs, pts, title = append(devs, r.dev), append(pts, r.Points), append(title, r.Device)
		}
		t := "Roofline: " + strings.Join(title, " vs ")
		if w.Name != "ops" {
			t += "\n" + w.Name
		}
		if notes, err = opt.chart.write(reports.RooflineChartOf(t, devs, pts), chartFormat, chartSize); err != nil {
			return err
		}
	}
	if f == reports.FormatJSON {
		a.chartNotes(f, nil, notes)
		if len(res) == 1 {
			return reports.JSON(a.stdout, res[0])
		}
		return reports.JSON(a.stdout, struct {
			Devices []deviceAnalysis `json:"devices"`
		}{res})
	}
	plain := f == reports.FormatCSV
	var tables []reports.Table
	if len(res) > 1 {
		var devs []string
		var pts [][]roofline.Point
		for _, r := range res {
			devs, pts = append(devs, r.Device), append(pts, r.Points)
		}
		tables = append(tables, reports.RooflineCompare(devs, pts, plain))
		if plain {
			a.chartNotes(f, tables, notes)
			return reports.Render(a.stdout, f, tables...)
		}
	}
	for _, r := range res {
		title := "Roofline on " + r.Device
		if r.Origin != "" {
			title += " (" + r.Origin + ")"
		}
		if w.Name != "ops" {
			title += ": " + w.Name
		}
		tables = append(tables, reports.RooflinePoints(title, r.Points, append(modelNotes(r.model), r.Notes...), plain))
		if plain {
			break
		}
		if r.Summary != nil {
			tables = append(tables, reports.RooflineSummary("Totals on "+r.Device, *r.Summary, r.Points))
		}
	}
	a.chartNotes(f, tables, notes)
	return reports.Render(a.stdout, f, tables...)
}

// modelNotes states the figures behind a device's expected times.
func modelNotes(m *roofline.Model) []string {
	e := m.Efficiency()
	return []string{
		"Lower bound: datasheet dense peak and bandwidth. Expected: cold L2, fixed cost " + units.FormatDuration(m.FixedCost()) +
			" per op (launch + ramp), " + e.Family + " GEMM efficiency, streaming DRAM " + units.FormatBandwidth(m.Stream()) + " (devices/data/arch/efficiency.yaml).",
		"FLOPs count FMA as 2; transcendentals apart; see 'gpucalc roofline --help' for the per-op conventions.",
	}
}

func (a *app) newRooflineBatchCmd() *cobra.Command {
	var device, input string
	var chart chartOptions
	cmd := &cobra.Command{
		Use:   "batch --input FILE|-",
		Short: "Analyse a CSV of ops (op,dtype,shape,note) on one GPU",
		Long: `Read CSV with header op,dtype,shape,note in the conventions of roof_bench.csv
and write the input columns followed by
flops,bytes,ai,bound,ceiling_tflops,lower_bound_us,expected_us.

Shapes: matmul MxNxK; layernorm, rmsnorm, softmax ROWSxCOLS; elementwise ops
(copy, add, mul, relu, silu, gelu, gelu_tanh) the element count; attention
BxHxSxD; conv2d NxCxHxWxKxRxS (stride 1, same padding). The note carries the
variant: erf or tanh (gelu), causal or full (attention), "stride2", "valid",
"e4m3 in, bf16 out" (output type); other words are ignored. An optional ms or
measured_us column carries a measured time, drawn as a measured point by
--plot; other extra columns are echoed.

Every input row gives one output row, in order; a bad row has empty figures
and its message in the error column. The exit status is 0 when every row was
analysed, 1 when any row failed or the input could not be read to its end.

flops is counted as roof_bench counts it (and torch.utils.flop_counter):
matrix FLOPs only, so 0 for norms, softmax and elementwise ops; ai is
flops/bytes. bound, ceiling_tflops and the times use every FLOP.

` + rooflineConventions,
		Example: `  gpucalc roofline batch --device h100 --input shapes.csv
  printf 'op,dtype,shape,note\nmatmul,bf16,4096x4096x4096,\n' | gpucalc roofline batch --input - --format csv`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) (runErr error) {
			f, err := a.outFormat(nil)
			if err != nil {
				return err
			}
			chartFormat, chartSize, err := chart.check()
			if err != nil {
				return err
			}
			var r io.Reader = a.stdin
			if input != "-" {
				fh, err := os.Open(input)
				if err != nil {
					return usageError{fmt.Errorf("input: %w", err)}
				}
				defer fh.Close()
				r = fh
			}
			b, readErr := ops.ReadBatch(r, reports.RooflineBatchColumns)
			if len(b.Rows) == 0 {
				return usageError{readErr}
			}
			d, origin, err := a.Device(device)
			if err != nil {
				return err
			}
			m, err := roofline.New(d)
			if err != nil {
				return err
			}
			pts := make([]roofline.Point, len(b.Rows))
			var good []roofline.Point
			for i := range b.Rows {
				row := &b.Rows[i]
				if row.Err != nil {
					continue
				}
				if pts[i], err = m.Analyze(row.Op); err != nil {
					row.Err = fmt.Errorf("line %d: %w", row.Line, err)
					continue
				}
				pts[i].Measured = row.Measured
				good = append(good, pts[i])
			}
			defer func() {
				if runErr == nil {
					runErr = batchFailures(b.Failed(), len(b.Rows), readErr)
				}
			}()
			var notes []string
			if chart.file != "" {
				c := reports.RooflineChartOf("Roofline: "+d.Name, []devices.Device{d}, [][]roofline.Point{good})
				if notes, err = chart.write(c, chartFormat, chartSize); err != nil {
					return err
				}
			}
			if f == reports.FormatJSON {
				a.chartNotes(f, nil, notes)
				return reports.JSON(a.stdout, reports.RooflineBatchJSON(b, pts))
			}
			t := reports.RooflineBatch(b, pts)
			if f != reports.FormatCSV {
				t.Title = "Roofline batch on " + d.Name
				if origin != "" {
					t.Title += " (" + origin + ")"
				}
				t.Notes = append(modelNotes(m), m.Notes...)
			}
			tables := []reports.Table{t}
			a.chartNotes(f, tables, notes)
			return reports.Render(a.stdout, f, tables...)
		},
	}
	a.addDeviceFlag(cmd, &device)
	addChartFlags(cmd, &chart)
	cmd.Flags().StringVarP(&input, "input", "i", "", "CSV `file` to read, or - for standard input")
	_ = cmd.MarkFlagRequired("input")
	return cmd
}
