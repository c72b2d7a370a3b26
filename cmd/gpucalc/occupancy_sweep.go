package main

import (
	"errors"
	"fmt"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/spf13/cobra"
)

type occupancySweepOptions struct {
	f      *factory
	kernel kernelFlags
	vary   string
	chart  chartFlags
}

func newCmdOccupancySweep(f *factory, runF func(*occupancySweepOptions) error) *cobra.Command {
	opts := &occupancySweepOptions{f: f}
	cmd := &cobra.Command{
		Use:   "sweep --vary threads|regs|smem",
		Short: "Occupancy against block size, register count or shared memory, with a chart",
		Long: `Vary one quantity of the configuration over its whole range, like the "impact
of varying block size / register count / shared memory" graphs of NVIDIA's
calculator: block sizes in steps of 32, every register count 0..255, shared
memory at every allocation boundary up to the opt-in maximum. The table groups
values with the same result; --plot draws warps per SM against the quantity,
with the current configuration marked and each limit's region shaded (one of
the three panels of 'gpucalc occupancy --plot'). Takes the flags of
'gpucalc occupancy'.`,
		Example: `  gpucalc occupancy sweep --vary regs --threads 256
  gpucalc occupancy sweep --vary threads --regs 64 --plot threads.png
  gpucalc occupancy sweep --vary smem --regs 32 --smem 48K --plot smem.svg`,
		Args: args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			return execute(opts, runF, occupancySweepRun)
		},
	}
	opts.kernel.add(f, cmd, true)
	cmd.Flags().StringVar(&opts.vary, "vary", "threads", "quantity to vary: threads, regs or smem")
	f.addChartFlags(cmd, &opts.chart, "warps per SM against the varied quantity", chart.SweepSize)
	_ = cmd.RegisterFlagCompletionFunc("vary", cobra.FixedCompletions([]string{"threads", "regs", "smem"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func occupancySweepRun(opts *occupancySweepOptions) error {
	f := opts.f
	format, err := f.OutFormat(nil, &opts.chart)
	if err != nil {
		return err
	}
	q, err := occupancy.ParseQuantity(opts.vary)
	if err != nil {
		return usageError{fmt.Errorf("--vary: %w", err)}
	}
	t, k, l, err := opts.kernel.resolve(f)
	if err != nil {
		return err
	}
	if err := inputError(t.Arch, k, l, occupancy.Calculate(t.Arch, k, l)); err != nil && !errors.Is(err, occupancy.ErrSmemPerBlock) {
		return err
	}
	pts, err := occupancy.Sweep(t.Arch, k, l, q)
	if err != nil {
		return usageError{err}
	}
	current := q.Value(k, l)
	notes, err := opts.chart.draw(func() (chart.Chart, error) { return reports.SweepChart(t, q, pts, current), nil })
	if err != nil {
		return err
	}
	return f.Output(format, nil, notes, reports.SweepView{Target: t, Kernel: k, Launch: l, Vary: q, Current: current, Points: pts},
		func() []reports.Table { return []reports.Table{reports.SweepTable(t, q, pts, current)} },
		func() []reports.Table { return reports.SweepRecords(q, pts, current) })
}
