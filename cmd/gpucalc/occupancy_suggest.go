package main

import (
	"fmt"

	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/spf13/cobra"
)

type occupancySuggestOptions struct {
	f         *factory
	kernel    kernelFlags
	perThread string
	limit     int
	section   sectionFlag
}

func newCmdOccupancySuggest(f *factory, runF func(*occupancySuggestOptions) error) *cobra.Command {
	opts := &occupancySuggestOptions{f: f}
	cmd := &cobra.Command{
		Use:   "suggest",
		Short: "The block size cudaOccupancyMaxPotentialBlockSize picks, with the candidates",
		Long: `Find the block size that maximises resident threads per SM, as
cudaOccupancyMaxPotentialBlockSize (and its VariableSMem form) does: block sizes
are tried from the largest allowed down in steps of 32, a tie keeps the larger
block, and the search stops at full occupancy. The minimum grid size is blocks
per SM × SMs. --smem is fixed shared memory per block (static plus dynamic);
--smem-per-thread adds dynamic shared memory proportional to the block size.`,
		Example: `  gpucalc occupancy suggest --regs 96
  gpucalc occupancy suggest --regs 40 --smem-per-thread 64 --block-limit 512`,
		Args: args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			return execute(opts, runF, occupancySuggestRun)
		},
	}
	opts.kernel.add(f, cmd, false)
	cmd.Flags().StringVar(&opts.perThread, "smem-per-thread", "0", "dynamic shared memory per thread of the block, bytes")
	cmd.Flags().IntVar(&opts.limit, "block-limit", 0, "largest block size to consider (0: no limit)")
	f.addSectionFlag(cmd, &opts.section, nil, "summary", "candidates")
	return cmd
}

func occupancySuggestRun(opts *occupancySuggestOptions) error {
	f := opts.f
	format, err := f.OutFormat(nil)
	if err != nil {
		return err
	}
	pt, err := parseSize("smem-per-thread", opts.perThread)
	if err != nil {
		return err
	}
	if opts.limit < 0 {
		return usagef("--block-limit must not be negative")
	}
	t, k, l, err := opts.kernel.resolve(f)
	if err != nil {
		return err
	}
	o := occupancy.SuggestOptions{DynamicSmem: l.DynamicSmem, SmemPerThread: pt, BlockSizeLimit: opts.limit, Carveout: l.Carveout, SMs: t.SMs}
	s, err := occupancy.Suggest(t.Arch, k, o)
	if err != nil {
		return inputError(t.Arch, k, occupancy.Launch{Threads: 32}, occupancy.Result{Err: err})
	}
	if s.BlockSize == 0 {
		return fmt.Errorf("no block size of this kernel can be resident on cc %s; lower its registers or shared memory", t.Arch.CC)
	}
	v := reports.SuggestView{Target: t, Kernel: k, Options: reports.SuggestOptionsView{DynamicSmem: o.DynamicSmem, SmemPerThread: o.SmemPerThread, BlockSizeLimit: o.BlockSizeLimit, Carveout: o.Carveout}, Suggestion: s}
	return f.Output(format, &opts.section, nil, v,
		func() []reports.Table { return reports.Suggestion(t, k, o, s) },
		func() []reports.Table { return reports.SuggestionRecords(t, k, o, s) })
}
