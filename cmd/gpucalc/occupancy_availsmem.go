package main

import (
	"errors"
	"fmt"

	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/spf13/cobra"
)

type occupancyAvailOptions struct {
	f      *factory
	kernel kernelFlags
	blocks int
}

func newCmdOccupancyAvail(f *factory, runF func(*occupancyAvailOptions) error) *cobra.Command {
	opts := &occupancyAvailOptions{f: f}
	cmd := &cobra.Command{
		Use:   "avail-smem",
		Short: "Dynamic shared memory per block that leaves room for N blocks per SM",
		Long: `Compute the dynamic shared memory per block with which --blocks blocks of
--threads threads are resident on one SM: the answer of
cudaOccupancyAvailableDynamicSMemPerBlock, and the largest size that really
fits. From cc 8.0 the runtime does not subtract the 1 KiB CUDA reserves per
block when asked for two or more blocks, so its answer can be up to 1 KiB too
large (measured on an H100); gpucalc reports both.`,
		Example: `  gpucalc occupancy avail-smem --blocks 2 --threads 128
  gpucalc occupancy avail-smem --blocks 4 --threads 256 --regs 64 --static-smem 4K`,
		Args: args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			return execute(opts, runF, occupancyAvailRun)
		},
	}
	opts.kernel.add(f, cmd, true)
	cmd.Flags().IntVar(&opts.blocks, "blocks", 1, "resident blocks per SM to leave room for")
	return cmd
}

func occupancyAvailRun(opts *occupancyAvailOptions) error {
	f := opts.f
	format, err := f.OutFormat(nil)
	if err != nil {
		return err
	}
	t, k, l, err := opts.kernel.resolve(f)
	if err != nil {
		return err
	}
	blocks := opts.blocks
	s, err := occupancy.AvailableSmem(t.Arch, k, blocks, l.Threads, l.Carveout)
	if err != nil {
		if ie := inputError(t.Arch, k, l, occupancy.Result{Err: err}); ie != nil && !errors.Is(err, occupancy.ErrUnreachable) && !errors.Is(err, occupancy.ErrLaunchBounds) && !errors.Is(err, occupancy.ErrNumBlocks) {
			return ie
		}
		if errors.Is(err, occupancy.ErrUnreachable) {
			r := occupancy.Calculate(t.Arch, k, l)
			err = fmt.Errorf("%w (at most %d without dynamic shared memory)", err, r.Blocks)
		}
		return usageError{fmt.Errorf("--blocks %d: %w", blocks, err)}
	}
	return f.Output(format, nil, nil, reports.AvailSmemView{Target: t, Kernel: k, Blocks: blocks, Threads: l.Threads, AvailSmem: s},
		func() []reports.Table { return []reports.Table{reports.AvailSmem(t, k, blocks, l.Threads, s)} },
		func() []reports.Table { return reports.AvailSmemRecords(t, k, blocks, l.Threads, s) })
}
