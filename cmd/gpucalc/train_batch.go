package main

import (
	"io"
	"strings"

	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/train"
	"github.com/spf13/cobra"
)

type trainBatchOptions struct {
	f     *factory
	input string
}

func newCmdTrainBatch(f *factory, runF func(*trainBatchOptions) error) *cobra.Command {
	opts := &trainBatchOptions{f: f}
	cmd := &cobra.Command{
		Use:   "batch --input FILE|-",
		Short: "Evaluate a CSV of training setups (model,device,method,precision,ckpt,batch,seq)",
		Long: `Read CSV with the header ` + strings.Join(train.BatchColumns, ",") + `, optionally
followed by any of ` + strings.Join(train.BatchOptional, ",") + `: model is a built-in name
or a path to a config.json; device a GPU name (empty: the default device);
method full or lora; precision bf16 or mixed; ckpt none or full (0 and 1
too); gpus, zero and tp 1, 0 and 1 when empty; bucket_view true or false
(DDP's gradient_as_bucket_view, false when empty); LoRA on every projection
(rank 16 unless lora_rank says), AdamW. Write the input columns followed by
` + strings.Join(reports.TrainBatchOut, ",") + `.
` + batchRowsHelp + `

` + trainHow,
		Example: `  gpucalc train batch --input setups.csv --format csv
  printf 'model,device,method,precision,ckpt,batch,seq\nllama-3.1-8b,h100,lora,bf16,full,8,2048\n' |
    gpucalc train batch --input -`,
		Args: args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			return execute(opts, runF, trainBatchRun)
		},
	}
	f.addInputFlag(cmd, &opts.input)
	return cmd
}

func trainBatchRun(opts *trainBatchOptions) error {
	f := opts.f
	form, err := f.OutFormat(nil)
	if err != nil {
		return err
	}
	type read struct {
		head []string
		rows []train.BatchRow
	}
	// The rows before a break in the input are still answered.
	in, name, readErr := parseInput(f, opts.input, func(r io.Reader) (read, error) {
		h, rows, err := train.ReadBatch(r)
		return read{h, rows}, err
	})
	if err := noBatchRows(len(in.rows), name, readErr); err != nil {
		return err
	}
	out := train.RunBatch(in.rows, f.loadModel, f.batchDevice)
	return writeBatch(f, form, name, out, func(r train.BatchResult) error { return r.Err }, readErr,
		func() any { return reports.TrainBatchJSON(in.head, out) },
		func() reports.Table { return reports.TrainBatch(in.head, out) })
}
