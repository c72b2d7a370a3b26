package main

import (
	"io"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/spf13/cobra"
)

type rooflineBatchOptions struct {
	f       *factory
	devices deviceFlags
	input   string
	// conditions are --l2 and --launch.
	conditions conditionFlags
	chart      chartFlags
}

func newCmdRooflineBatch(f *factory, runF func(*rooflineBatchOptions) error) *cobra.Command {
	opts := &rooflineBatchOptions{f: f}
	cmd := &cobra.Command{
		Use:   "batch --input FILE|-",
		Short: "Analyse a CSV of ops (op,dtype,shape,note or spec) on one GPU",
		Long: `Read CSV with header op,dtype,shape,note in the conventions of roof_bench.csv,
or with a spec column holding any --op spec instead of those four (every op
kind, quant=, kv_dtype=, impl=), and write the input columns followed by
flops,bytes,ai,bound,ceiling_tflops,lower_bound_us,expected_us,l2,launch,error.

Shapes (the op names of an op spec, 'gpucalc roofline --help'): ` + ops.ShapeHelp + `. The note carries the
variant: erf or tanh (gelu), causal or full (attention), "stride2", "valid",
"e4m3 in, bf16 out" (output type); other words are ignored. An optional ms or
measured_us column carries a measured time, drawn as a measured point by
--plot. Any other column, or a column twice, is refused (see docs/batch.md).

Every input row gives one output row, in order; a bad row has empty figures
and its message in the error column. The exit status is 0 when every row was
analysed, 1 when any row failed or the input could not be read to its end
(the rows before the break are written) or has no rows.

flops is counted as roof_bench counts it (and torch.utils.flop_counter):
matrix FLOPs only, so 0 for norms, softmax and elementwise ops; ai is
flops/bytes. bound, ceiling_tflops and the times use every FLOP.

` + rooflineConventions + `

` + conditionsHelp,
		Example: `  gpucalc roofline batch --device h100 --input shapes.csv
  printf 'op,dtype,shape,note\nmatmul,bf16,4096x4096x4096,\n' |
    gpucalc roofline batch --input - --format csv
  printf 'spec\n"linear tokens=16 in=8192 out=8192 quant=fp8"\n' |
    gpucalc roofline batch --input - --l2 warm --launch graph`,
		Args: args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			return execute(opts, runF, rooflineBatchRun)
		},
	}
	f.addDeviceFlags(cmd, &opts.devices, false)
	addConditionFlags(cmd, &opts.conditions)
	f.addChartFlags(cmd, &opts.chart, "a roofline chart", chart.DefaultSize)
	f.addInputFlag(cmd, &opts.input)
	return cmd
}

func rooflineBatchRun(opts *rooflineBatchOptions) error {
	f := opts.f
	form, err := f.OutFormat(nil, &opts.chart)
	if err != nil {
		return err
	}
	b, _, readErr := parseInput(f, opts.input, func(r io.Reader) (ops.Batch, error) { return ops.ReadBatch(r, reports.RooflineBatchColumns) })
	if len(b.Rows) == 0 {
		return readErr
	}
	ts, ms, err := f.Rooflines(opts.devices)
	if err != nil {
		return err
	}
	if err := opts.conditions.under(ms); err != nil {
		return err
	}
	t, m := ts[0], ms[0]
	pts, good := m.RunBatch(&b)
	notes, err := opts.chart.draw(func() (chart.Chart, error) {
		return reports.RooflineChartOf("Roofline: "+t.Name, []devices.Device{t.Device}, [][]roofline.Point{good}), nil
	})
	if err != nil {
		return err
	}
	if err := rooflineBatchOutput(f, form, notes, t, m, b, pts); err != nil {
		return err
	}
	return batchFailures(b.Failed(), len(b.Rows), readErr)
}

// rooflineBatchOutput writes roofline batch's rows: CSV the bare rows,
// table and Markdown with a title and the model's notes.
func rooflineBatchOutput(f *factory, form reports.Format, notes []string, t target, m *roofline.Model, b ops.Batch, pts []roofline.Point) error {
	var view any // built for JSON only: a batch can be long
	if form == reports.FormatJSON {
		view = reports.RooflineBatchJSON(b, pts, m.Conditions())
	}
	return f.Output(form, nil, notes, view,
		func() []reports.Table {
			tab := reports.RooflineBatch(b, pts, m.Conditions())
			tab.Title = "Roofline batch on " + t.Name
			if t.Origin != "" {
				tab.Title += " (" + t.Origin + ")"
			}
			tab.Notes = modelNotes(f, m)
			return []reports.Table{tab}
		},
		func() []reports.Table { return []reports.Table{reports.RooflineBatch(b, pts, m.Conditions())} })
}
