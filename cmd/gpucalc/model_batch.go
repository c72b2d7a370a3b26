package main

import (
	"strings"

	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/reports"
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
empty. Optional columns after tp, in this order: ep and moe_tp, the
expert layout as --ep and --moe-tp give it (empty: their defaults).
bf16 throughout, except weights a config's quantization_config ships
quantized (DeepSeek-V3: fp8). Write the input columns followed by
` + strings.Join(reports.ModelBatchOut, ",") + `.
` + batchRowsHelp + `

` + modelHow,
		Example: `  gpucalc model batch --input shapes.csv --format csv
  printf 'model,device,phase,batch,seq,ctx,tp\nllama-3.1-8b,h100,decode,64,1,4096,1\n' |
    gpucalc model batch --input -`,
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
	b, name, readErr := parseInput(f, opts.input, model.ReadBatch)
	if err := noBatchRows(len(b.Rows), name, readErr); err != nil {
		return err
	}
	for i := range b.Rows {
		b.Rows[i].Shape.FullCache, b.Rows[i].Shape.Engine = opts.fullCache, engine
	}
	out := model.RunBatch(b.Rows, f.loadModel, f.batchDevice)
	return writeBatch(f, form, name, out, func(r reports.ModelBatchRow) error { return r.Err }, readErr,
		func() any { return reports.ModelBatchJSON(b.Header, out) },
		func() reports.Table { return reports.ModelBatch(b.Header, out) })
}
