package main

import (
	"fmt"
	"math"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/units"
	"github.com/spf13/cobra"
)

// kernelFlags are the flags every occupancy command shares.
type kernelFlags struct {
	dev               deviceFlags
	arch              string
	threads, regs     int
	smem, staticSmem  string
	carveout          string
	barriers, maxThrs int

	// cmd is the command the flags are on: it tells which were given.
	cmd *cobra.Command
}

// add registers the kernel flags (--threads when threads) and --device,
// --arch.
func (f *kernelFlags) add(fa *factory, cmd *cobra.Command, threads bool) {
	f.cmd = cmd
	fa.addDeviceFlags(cmd, &f.dev, false)
	fl := cmd.Flags()
	fl.StringVar(&f.arch, "arch", "", "compute capability instead of a device: sm_90, 9.0 or 90 (no SM count, so no grid figures)")
	if threads {
		fl.IntVarP(&f.threads, "threads", "t", occupancy.DefaultThreads, "threads per block")
	}
	fl.IntVarP(&f.regs, "regs", "r", occupancy.DefaultRegs, "registers per thread (ptxas -v: 'Used N registers')")
	fl.StringVar(&f.smem, "smem", occupancy.DefaultSmem, "shared memory per block, static plus dynamic (binary: 48K = 49152 bytes)")
	fl.StringVar(&f.staticSmem, "static-smem", occupancy.DefaultStaticSmem, "the static part of --smem (at most 48K)")
	fl.StringVar(&f.carveout, "carveout", occupancy.DefaultCarveout, "shared-memory carveout preference: default, a percentage (50%) or a size (100K)")
	fl.IntVar(&f.barriers, "barriers", occupancy.DefaultBarriers, "named barriers per block (counted from cc 9.0)")
	fl.IntVar(&f.maxThrs, "max-threads", occupancy.DefaultMaxThreads, "launch bounds: the kernel's maximum threads per block (0: none)")
	_ = cmd.RegisterFlagCompletionFunc("arch", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, a := range devices.Archs() {
			out = append(out, cobra.CompletionWithDesc(a.CC.SM(), a.Family+": "+a.Parts))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}

// query maps the kernel flags onto the occupancy question (--smem left
// out is the static part alone).
func (f *kernelFlags) query(fa *factory) (occupancy.Query, error) {
	c, err := fa.Catalog()
	if err != nil {
		return occupancy.Query{}, err
	}
	q := occupancy.Query{Device: fa.choice(f.dev), Arch: f.arch, Threads: f.threads, Regs: f.regs, Smem: f.smem, StaticSmem: f.staticSmem,
		Carveout: f.carveout, Barriers: f.barriers, MaxThreads: f.maxThrs, Catalog: c, Datasheet: fa.datasheet}
	if !f.cmd.Flags().Changed("smem") {
		q.Smem = ""
	}
	return q, nil
}

// parseSize parses a shared-memory size flag (binary units).
func parseSize(flag, s string) (int, error) {
	b, err := units.ParseSize(s)
	if err != nil {
		return 0, usageError{fmt.Errorf("--%s: %w", flag, err)}
	}
	if b > math.MaxInt32 {
		return 0, usageError{fmt.Errorf("--%s %s: far larger than any GPU's shared memory", flag, s)}
	}
	return int(b), nil
}

// parseCarveout parses --carveout (occupancy.ParseCarveout).
func parseCarveout(s string) (occupancy.Carveout, error) {
	c, err := occupancy.ParseCarveout(s)
	if err != nil {
		return c, usagef("--carveout %q: %v", s, err)
	}
	return c, nil
}

// resolve reads the device or architecture (--device, --arch) and the
// kernel and launch flags: what every occupancy subcommand starts from.
func (f *kernelFlags) resolve(fa *factory) (occupancy.Target, occupancy.Kernel, occupancy.Launch, error) {
	q, err := f.query(fa)
	if err != nil {
		return occupancy.Target{}, occupancy.Kernel{}, occupancy.Launch{}, err
	}
	t, k, l, err := q.Resolve()
	return t, k, l, usage(err)
}

// inputError explains an invalid input with the numbers of the
// architecture, as a usage error.
func inputError(a devices.Arch, k occupancy.Kernel, l occupancy.Launch, r occupancy.Result) error {
	return usage(occupancy.InputError(a, k, l, r))
}

type occupancyOptions struct {
	f                   *factory
	kernel              kernelFlags
	grid, cluster       int
	gridSet, clusterSet bool
	chart               chartFlags
	section             sectionFlag
}

func newCmdOccupancy(f *factory, runF func(*occupancyOptions) error) *cobra.Command {
	opts := &occupancyOptions{f: f}
	cmd := &cobra.Command{
		Use:   "occupancy",
		Short: "Resident blocks per SM and what limits them, as CUDA computes it",
		Long: `Compute how many blocks of a kernel are resident on one SM, exactly as
cudaOccupancyMaxActiveBlocksPerMultiprocessor does (cuda_occupancy.h, CUDA 13),
with every limit (warps, registers, shared memory, blocks, barriers) and the
block count each allows, the registers and shared memory allocated after
rounding (with the 1 KiB CUDA reserves per block from cc 8.0), and the
carveout chosen. With --grid: waves and how full the last one is. With
--cluster N (cc 9.0+): clusters of N blocks active on the whole GPU (a model
that reproduces every measured H100 answer; see the README).

Sizes are binary (48K = 49152 bytes). --smem is the block's shared memory,
static plus dynamic; --static-smem splits off the static part. More than 48K
needs dynamic shared memory and the opt-in attribute; the result assumes it.
Defaults: the device in $GPUCALC_DEVICE, else ` + devices.Default + `; 256 threads; 32
registers.`,
		Example: `  gpucalc occupancy --regs 64 --smem 48K
  gpucalc occupancy --arch sm_80 --threads 128 --regs 37 --smem 8K
  gpucalc occupancy -d h100 --threads 512 --regs 40 --carveout 50% --grid 4096
  gpucalc occupancy --threads 128 --smem 100K --cluster 4
  gpucalc occupancy --regs 64 --smem 48K --plot occupancy.png
  gpucalc occupancy --regs 64 --format csv --section limits
  gpucalc occupancy suggest --regs 96
  gpucalc occupancy avail-smem --blocks 2 --threads 128
  gpucalc occupancy batch --input configs.csv`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.gridSet, opts.clusterSet = cmd.Flags().Changed("grid"), cmd.Flags().Changed("cluster")
			return execute(opts, runF, occupancyRun)
		},
	}
	opts.kernel.add(f, cmd, true)
	cmd.Flags().IntVar(&opts.grid, "grid", 0, "blocks in the grid: report waves and the last wave's fill")
	cmd.Flags().IntVar(&opts.cluster, "cluster", 0, "thread-block cluster size (cc 9.0+): clusters active on the whole GPU; above 8 needs the non-portable opt-in")
	f.addChartFlags(cmd, &opts.chart, "warps per SM against block size, registers and shared memory (three panels)", chart.OccupancySize)
	f.addSectionFlag(cmd, &opts.section, map[string]string{"waves": "--grid", "clusters": "--cluster"}, "summary", "limits", "cliffs", "waves", "clusters")
	cmd.AddCommand(newCmdOccupancySuggest(f, nil), newCmdOccupancyAvail(f, nil), newCmdOccupancyBatch(f, nil), newCmdOccupancySweep(f, nil), newCmdOccupancyFromBuild(f, nil))
	return cmd
}

func occupancyRun(opts *occupancyOptions) error {
	f := opts.f
	format, err := f.OutFormat(nil, &opts.chart)
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
	notes, err := opts.chart.draw(func() (chart.Chart, error) {
		n, err := occupancy.SweepAround(a.Target.Arch, a.Kernel, a.Launch)
		return reports.OccupancyChart(a.Target, a.Kernel, a.Launch, n), err
	})
	if err != nil {
		return err
	}
	rep := reports.NewOccupancy(a.Target, a.Kernel, a.Launch, a.Defaults, a.Result, a.Waves, &a.Cliffs, a.Clusters)
	return f.Output(format, &opts.section, notes, rep, rep.Tables, rep.Records)
}

// query maps the flags onto the occupancy question.
func (opts *occupancyOptions) query() (occupancy.Query, error) {
	q, err := opts.kernel.query(opts.f)
	q.Grid, q.GridGiven = opts.grid, opts.gridSet
	q.Cluster, q.ClusterGiven = opts.cluster, opts.clusterSet
	return q, err
}
