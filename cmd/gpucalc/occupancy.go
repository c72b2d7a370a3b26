package main

import (
	"errors"
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

const (
	defaultThreads = 256
	defaultRegs    = 32
)

// add registers the kernel flags (--threads when threads) and --device,
// --arch.
func (f *kernelFlags) add(fa *factory, cmd *cobra.Command, threads bool) {
	f.cmd = cmd
	fa.addDeviceFlags(cmd, &f.dev, false)
	fl := cmd.Flags()
	fl.StringVar(&f.arch, "arch", "", "compute capability instead of a device: sm_90, 9.0 or 90 (no SM count, so no grid figures)")
	if threads {
		fl.IntVarP(&f.threads, "threads", "t", defaultThreads, "threads per block")
	}
	fl.IntVarP(&f.regs, "regs", "r", defaultRegs, "registers per thread (ptxas -v: 'Used N registers')")
	fl.StringVar(&f.smem, "smem", "0", "shared memory per block, static plus dynamic (binary: 48K = 49152 bytes)")
	fl.StringVar(&f.staticSmem, "static-smem", "0", "the static part of --smem (at most 48K)")
	fl.StringVar(&f.carveout, "carveout", "default", "shared-memory carveout preference: default, a percentage (50%) or a size (100K)")
	fl.IntVar(&f.barriers, "barriers", 1, "named barriers per block (counted from cc 9.0)")
	fl.IntVar(&f.maxThrs, "max-threads", 0, "launch bounds: the kernel's maximum threads per block (0: none)")
	_ = cmd.RegisterFlagCompletionFunc("arch", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, a := range devices.Archs() {
			out = append(out, cobra.CompletionWithDesc(a.CC.SM(), a.Family+": "+a.Parts))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}

// defaults lists the kernel flags left at their defaults, to say so in
// the output.
func (f *kernelFlags) defaults() []string {
	var out []string
	for _, name := range []string{"threads", "regs"} {
		if fl := f.cmd.Flags().Lookup(name); fl != nil && !fl.Changed {
			out = append(out, fmt.Sprintf("--%s %s", name, fl.DefValue))
		}
	}
	return out
}

// target resolves --device / --arch.
func (f *kernelFlags) target(fa *factory) (occupancy.Target, error) {
	if f.arch != "" {
		if f.dev.deviceSet() {
			return occupancy.Target{}, usagef("give --device or --arch, not both")
		}
		cc, err := devices.ParseCC(f.arch)
		if err != nil {
			return occupancy.Target{}, usageError{fmt.Errorf("--arch: %w", err)}
		}
		arch, err := devices.ArchFor(cc)
		if err != nil {
			return occupancy.Target{}, usageError{fmt.Errorf("--arch: %w", err)}
		}
		return occupancy.ArchTarget(arch), nil
	}
	t, err := fa.Device(f.dev)
	if err != nil {
		return occupancy.Target{}, err
	}
	ot, err := occupancy.DeviceTarget(t.Device, t.Origin)
	if err != nil {
		return occupancy.Target{}, usageError{err}
	}
	return ot, nil
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
	t, err := f.target(fa)
	if err != nil {
		return occupancy.Target{}, occupancy.Kernel{}, occupancy.Launch{}, err
	}
	k, l, err := f.kernelLaunch()
	return t, k, l, err
}

// kernelLaunch turns the flags into the calculation's inputs.
func (f *kernelFlags) kernelLaunch() (occupancy.Kernel, occupancy.Launch, error) {
	var k occupancy.Kernel
	var l occupancy.Launch
	smem, err := parseSize("smem", f.smem)
	if err != nil {
		return k, l, err
	}
	static, err := parseSize("static-smem", f.staticSmem)
	if err != nil {
		return k, l, err
	}
	if !f.cmd.Flags().Changed("smem") {
		smem = static
	}
	if static > smem {
		return k, l, usagef("--static-smem %s is more than --smem %s, the block's total (static plus dynamic)", f.staticSmem, f.smem)
	}
	if l.Carveout, err = parseCarveout(f.carveout); err != nil {
		return k, l, err
	}
	if f.maxThrs < 0 || f.barriers < 0 || f.threads < 0 || f.regs < 0 {
		return k, l, usagef("--threads, --regs, --barriers and --max-threads must not be negative")
	}
	k = occupancy.Kernel{Regs: f.regs, StaticSmem: static, MaxThreads: f.maxThrs, Barriers: f.barriers}
	l.Threads, l.DynamicSmem = f.threads, smem-static
	return k, l, nil
}

// inputError explains an invalid input with the numbers of the architecture.
func inputError(a devices.Arch, k occupancy.Kernel, l occupancy.Launch, r occupancy.Result) error {
	var err error
	switch {
	case errors.Is(r.Err, occupancy.ErrBlockSize):
		err = fmt.Errorf("--threads %d: a block has 1 to %d threads on cc %s", l.Threads, a.MaxThreadsPerBlock, a.CC)
	case errors.Is(r.Err, occupancy.ErrRegisters):
		err = fmt.Errorf("--regs %d: a thread can use at most %d registers on cc %s (ptxas spills beyond that)", k.Regs, a.MaxRegsPerThread, a.CC)
	case errors.Is(r.Err, occupancy.ErrStaticSmem):
		err = fmt.Errorf("--static-smem %s: static shared memory is limited to %s per block; allocate the rest dynamically", units.FormatSize(int64(k.StaticSmem)), units.FormatSize(int64(a.SmemPerBlock)))
	case errors.Is(r.Err, occupancy.ErrCarveout):
		err = fmt.Errorf("--carveout %s: more than the %s of shared memory an SM has on cc %s", l.Carveout, units.FormatSize(int64(a.SmemPerSM)), a.CC)
	case r.Err != nil:
		err = r.Err
	case errors.Is(r.Reason, occupancy.ErrSmemPerBlock):
		err = fmt.Errorf("--smem %s: a block can have at most %s of shared memory on cc %s (the opt-in maximum%s); this launch fails",
			units.FormatSize(int64(k.StaticSmem+l.DynamicSmem)), units.FormatSize(int64(a.SmemPerBlockOptin)), a.CC,
			map[bool]string{true: ", besides the 1 KiB CUDA reserves", false: ""}[a.SmemReservedPerBlock > 0])
	default:
		return nil
	}
	return usageError{err}
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
Defaults: the device in $GPUCALC_DEVICE, else H100 SXM; 256 threads; 32
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
	t, k, l, err := opts.kernel.resolve(f)
	if err != nil {
		return err
	}
	r := occupancy.Calculate(t.Arch, k, l)
	if err := inputError(t.Arch, k, l, r); err != nil {
		return err
	}
	notes, err := opts.chart.draw(func() (chart.Chart, error) {
		n, err := occupancy.SweepAround(t.Arch, k, l)
		return reports.OccupancyChart(t, k, l, n), err
	})
	if err != nil {
		return err
	}
	var waves *occupancy.Waves
	if opts.gridSet {
		if t.SMs == 0 {
			return usagef("--grid needs the device's SM count: give --device instead of --arch")
		}
		w, err := occupancy.GridWaves(opts.grid, r.Blocks, t.SMs)
		if err != nil {
			return usageError{fmt.Errorf("--grid %d: %w", opts.grid, err)}
		}
		waves = &w
	}
	var clusters *occupancy.Clusters
	if opts.clusterSet {
		if t.SMs == 0 {
			return usagef("--cluster counts clusters on the whole GPU and needs the device's SM count: give --device instead of --arch")
		}
		c, err := occupancy.ActiveClusters(t.Arch, r, opts.cluster, t.SMs, t.GPCs)
		if err != nil {
			return usageError{fmt.Errorf("--cluster %d on %s: %w", opts.cluster, t.Device, err)}
		}
		clusters = &c
	}
	cliffs, err := occupancy.FindCliffs(t.Arch, k, l)
	if err != nil {
		return err
	}
	rep := reports.NewOccupancy(t, k, l, opts.kernel.defaults(), r, waves, &cliffs, clusters)
	return f.OutputNotes(format, &opts.section, notes, rep, rep.Tables, rep.Records)
}
