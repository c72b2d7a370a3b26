package main

import (
	"fmt"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/spf13/cobra"
)

type modelBatchOptions struct {
	f         *factory
	input     string
	fullCache bool
	engine    string
}

func newCmdModelBatch(f *factory, runF func(*modelBatchOptions) error) *cobra.Command {
	opts := &modelBatchOptions{f: f}
	cmd := &cobra.Command{
		Use:   "batch --input FILE|-",
		Short: "Evaluate a CSV of model shapes (model,device,phase,batch,seq,ctx,tp)",
		Long: `Read CSV with the header ` + strings.Join(model.BatchColumns, ",") + `: model is a
built-in name or a path to a config.json; device a GPU name (empty: the
default device); phase prefill (uses seq) or decode (uses ctx); tp 1 when
empty. bf16 throughout, except weights a config's quantization_config ships
quantized (DeepSeek-V3: fp8). Write the input columns followed by
` + strings.Join(reports.ModelBatchOut, ",") + `.
` + batchRowsHelp + `

` + modelHow,
		Example: `  gpucalc model batch --input shapes.csv --format csv
  printf 'model,device,phase,batch,seq,ctx,tp\nllama-3.1-8b,h100,decode,64,1,4096,1\n' | gpucalc model batch --input -`,
		Args: args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			return execute(opts, runF, modelBatchRun)
		},
	}
	f.addInputFlag(cmd, &opts.input)
	cmd.Flags().BoolVar(&opts.fullCache, "full-cache", false, fullCacheHelp)
	cmd.Flags().StringVar(&opts.engine, "engine", string(model.Graph), "`engine` that runs the steps: graph or eager (see 'gpucalc model --help')")
	_ = cmd.RegisterFlagCompletionFunc("engine", cobra.FixedCompletions([]string{string(model.Graph), string(model.Eager)}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func modelBatchRun(opts *modelBatchOptions) error {
	f := opts.f
	form, err := f.OutFormat(nil)
	if err != nil {
		return err
	}
	engine, err := model.ParseEngine(opts.engine)
	if err != nil {
		return usagef("--engine: %w", err)
	}
	// The rows before a break in the input are still answered.
	rows, name, readErr := parseInput(f, opts.input, model.ReadBatch)
	if err := noBatchRows(len(rows), name, readErr); err != nil {
		return err
	}
	for i := range rows {
		rows[i].Shape.FullCache, rows[i].Shape.Engine = opts.fullCache, engine
	}
	out := evaluateBatch(f, rows)
	return writeBatch(f, form, name, out, func(r reports.ModelBatchRow) error { return r.Err }, readErr,
		func() any { return reports.ModelBatchJSON(model.BatchColumns, out) },
		func() reports.Table { return reports.ModelBatch(model.BatchColumns, out) })
}

// evaluateBatch answers every row, loading each model and device once.
func evaluateBatch(f *factory, rows []model.BatchRow) []reports.ModelBatchRow {
	type loaded struct {
		c   model.Config
		err error
	}
	models := map[string]loaded{}
	type dev struct {
		m   *roofline.Model
		err error
	}
	devs := map[string]dev{}
	out := make([]reports.ModelBatchRow, len(rows))
	for i, r := range rows {
		o := &out[i]
		o.Cells = r.Cells
		if o.Err = r.Err; o.Err != nil {
			o.Err = fmt.Errorf("line %d: %w", r.Line, o.Err)
			continue
		}
		l, ok := models[r.Model]
		if !ok {
			l.c, l.err = f.loadModel(r.Model)
			models[r.Model] = l
		}
		d, ok := devs[r.Device]
		if !ok {
			name := f.deviceName(r.Device)
			var t devices.Device
			if t, d.err = f.Lookup(name); d.err == nil {
				d.m, d.err = roofline.New(t)
			}
			devs[r.Device] = d
		}
		switch {
		case l.err != nil:
			o.Err = l.err
		case d.err != nil:
			o.Err = d.err
		default:
			o.Result, o.Err = l.c.Analyze(r.Shape, d.m)
			// The batch reports totals; drop the per-op detail.
			o.Result.Ops, o.Result.Points = nil, nil
			if o.Err == nil {
				o.SmallestTP = l.c.SmallestTP(o.Result.Shape, d.m.Device())
			}
		}
		if o.Err != nil {
			o.Err = fmt.Errorf("line %d: %w", r.Line, o.Err)
		}
	}
	return out
}
