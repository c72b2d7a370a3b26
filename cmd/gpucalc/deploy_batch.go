package main

import (
	"strings"

	"github.com/gpucalc/gpucalc/deploy"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/spf13/cobra"
)

type deployBatchOptions struct {
	f     *factory
	input string
}

func newCmdDeployBatch(f *factory, runF func(*deployBatchOptions) error) *cobra.Command {
	opts := &deployBatchOptions{f: f}
	cmd := &cobra.Command{
		Use:   "batch --input FILE|-",
		Short: "Evaluate a CSV of deployments with the header of aiconfigurator's silicon sample",
		Long: `Read CSV whose columns are any of ` + strings.Join(deploy.BatchColumns, ",") + `
(the header of aiconfigurator's silicon_sample.csv), with at least
model_path, system, backend, mode, isl and osl: model_path a built-in name,
a Hugging Face id or a config's path; system a GPU name (h100_sxm, b200_sxm,
gb200...); backend vllm, sglang or trtllm; mode agg (batch_size closed-loop
clients, tp_size, attention_dp_size replicas) or disagg (decode_batch_size
clients per decode rank, the prefill_ and decode_ columns, prefill_num_workers
and decode_num_workers); where the batch-size column is empty, the
concurrency is the one _c<N>_ token of the id (InferenceMAX's run names,
N clients), nothing else of the id being read; gemm_quant_mode fp8,
fp8_block, nvfp4, w4a16_mxfp4 or empty for bf16. Every input column is
echoed, followed by ` + strings.Join(reports.DeployBatchOut, ",") + `.
An unknown or repeated column is an error of the file.
` + batchRowsHelp + `

` + deployHow,
		Example: `  gpucalc deploy batch --input deployments.csv --format csv
  printf 'model_path,system,backend,mode,isl,osl,batch_size\nqwen3-32b,h100,vllm,agg,512,64,8\n' |
    gpucalc deploy batch --input -`,
		Args: args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			return execute(opts, runF, deployBatchRun)
		},
	}
	f.addInputFlag(cmd, &opts.input)
	return cmd
}

func deployBatchRun(opts *deployBatchOptions) error {
	f := opts.f
	form, err := f.OutFormat(nil)
	if err != nil {
		return err
	}
	// The rows before a break in the input are still answered.
	in, name, readErr := parseInput(f, opts.input, deploy.ReadBatch)
	if err := noBatchRows(len(in.Rows), name, readErr); err != nil {
		return err
	}
	out := deploy.RunBatch(in.Rows, f.loadModel)
	return writeBatch(f, form, name, out, func(r deploy.BatchResult) error { return r.Err }, readErr,
		func() any { return reports.DeployBatchJSON(in.Header, out) },
		func() reports.Table { return reports.DeployBatch(in.Header, out) })
}
