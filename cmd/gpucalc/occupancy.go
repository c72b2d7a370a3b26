package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

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

	// Set by changed: whether --smem was given, and the flags left at
	// their defaults, to say so in the output.
	smemSet  bool
	defaults []string
}

const (
	defaultThreads = 256
	defaultRegs    = 32
)

func (f *kernelFlags) add(fa *factory, cmd *cobra.Command, threads bool) {
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

// changed records which flags were given; call it from RunE.
func (f *kernelFlags) changed(cmd *cobra.Command) {
	f.dev.changed(cmd)
	f.smemSet = cmd.Flags().Changed("smem")
	f.defaults = nil
	for _, name := range []string{"threads", "regs"} {
		if fl := cmd.Flags().Lookup(name); fl != nil && !fl.Changed {
			f.defaults = append(f.defaults, fmt.Sprintf("--%s %s", name, fl.DefValue))
		}
	}
}

// target resolves --device / --arch.
func (f *kernelFlags) target(fa *factory) (occupancy.Target, error) {
	if f.arch != "" {
		if f.dev.deviceSet {
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
	if !f.smemSet {
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
	chart               chartOptions
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
			opts.kernel.changed(cmd)
			opts.gridSet, opts.clusterSet = cmd.Flags().Changed("grid"), cmd.Flags().Changed("cluster")
			opts.section.changed(cmd)
			if runF != nil {
				return runF(opts)
			}
			return occupancyRun(opts)
		},
	}
	opts.kernel.add(f, cmd, true)
	cmd.Flags().IntVar(&opts.grid, "grid", 0, "blocks in the grid: report waves and the last wave's fill")
	cmd.Flags().IntVar(&opts.cluster, "cluster", 0, "thread-block cluster size (cc 9.0+): clusters active on the whole GPU; above 8 needs the non-portable opt-in")
	addChartFlags(cmd, &opts.chart, "warps per SM against block size, registers and shared memory (three panels)", chart.OccupancySize)
	f.addSectionFlag(cmd, &opts.section, map[string]string{"waves": "--grid", "clusters": "--cluster"}, "summary", "limits", "cliffs", "waves", "clusters")
	cmd.AddCommand(newCmdOccupancySuggest(f, nil), newCmdOccupancyAvail(f, nil), newCmdOccupancyBatch(f, nil), newCmdOccupancySweep(f, nil), newCmdOccupancyFromBuild(f, nil))
	return cmd
}

func occupancyRun(opts *occupancyOptions) error {
	f := opts.f
	format, err := f.OutFormat(nil)
	if err != nil {
		return err
	}
	chartOpt, err := opts.chart.check()
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
	var notes []string
	if opts.chart.file != "" {
		c, err := reports.OccupancyChart(t, k, l)
		if err != nil {
			return err
		}
		if notes, err = opts.chart.write(c, chartOpt); err != nil {
			return err
		}
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
	rep := reports.NewOccupancy(t, k, l, opts.kernel.defaults, r, waves, &cliffs, clusters)
	if format == reports.FormatJSON || format == reports.FormatCSV {
		f.chartNotes(format, nil, notes)
	}
	return f.Output(format, &opts.section, rep, func() []reports.Table {
		tables := rep.Tables()
		f.chartNotes(format, tables, notes)
		return tables
	}, rep.Records)
}

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
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.kernel.changed(cmd)
			opts.section.changed(cmd)
			if runF != nil {
				return runF(opts)
			}
			return occupancySuggestRun(opts)
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
	t, k, l, err := opts.kernel.resolve(f)
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
	o := occupancy.SuggestOptions{DynamicSmem: l.DynamicSmem, SmemPerThread: pt, BlockSizeLimit: opts.limit, Carveout: l.Carveout, SMs: t.SMs}
	s, err := occupancy.Suggest(t.Arch, k, o)
	if err != nil {
		return inputError(t.Arch, k, occupancy.Launch{Threads: 32}, occupancy.Result{Err: err})
	}
	if s.BlockSize == 0 {
		return fmt.Errorf("no block size of this kernel can be resident on cc %s; lower its registers or shared memory", t.Arch.CC)
	}
	v := reports.SuggestView{Target: t, Kernel: k, Options: reports.SuggestOptionsView{DynamicSmem: o.DynamicSmem, SmemPerThread: o.SmemPerThread, BlockSizeLimit: o.BlockSizeLimit, Carveout: o.Carveout}, Suggestion: s}
	return f.Output(format, &opts.section, v,
		func() []reports.Table { return reports.Suggestion(t, k, o, s) },
		func() []reports.Table { return reports.SuggestionRecords(t, k, o, s) })
}

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
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.kernel.changed(cmd)
			if runF != nil {
				return runF(opts)
			}
			return occupancyAvailRun(opts)
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
	return f.Output(format, nil, reports.AvailSmemView{Target: t, Kernel: k, Blocks: blocks, Threads: l.Threads, AvailSmem: s},
		func() []reports.Table { return []reports.Table{reports.AvailSmem(t, k, blocks, l.Threads, s)} },
		func() []reports.Table { return reports.AvailSmemRecords(t, k, blocks, l.Threads, s) })
}

type occupancyBatchOptions struct {
	f         *factory
	input     string
	formatSet bool
}

func newCmdOccupancyBatch(f *factory, runF func(*occupancyBatchOptions) error) *cobra.Command {
	opts := &occupancyBatchOptions{f: f}
	cmd := &cobra.Command{
		Use:   "batch --input FILE|-",
		Short: "Occupancy for every row of a CSV file",
		Long: `Read CSV with the header device,threads,regs,static_smem,dynamic_smem,carveout
and optionally max_threads,barriers (any order). device is a catalog name or an
architecture (sm_90, 9.0); sizes are bytes; carveout is empty or -1 for the
default, else a percentage 0..100. Write the input columns, then
blocks_per_sm,warps_per_sm,occupancy,limiters,blocks_by_warps,blocks_by_regs,
blocks_by_smem,blocks_by_blocks,regs_per_block,smem_per_block,error.
limiters joins the tied limits with "|"; an unlimited per-limit count is empty;
a bad row gets its message in error and the batch goes on. Output is CSV unless
--format says otherwise.

Every input row gives one output row, in order. The exit status is 0 when
every row was calculated, 1 when any row failed or the input could not be read
to its end (an unclosed quote, a line over 1 MiB, binary data: the message
names the line) or has no rows.`,
		Example: `  gpucalc occupancy batch --input configs.csv > out.csv
  printf 'device,threads,regs,static_smem,dynamic_smem,carveout\nsm_90,256,64,0,49152,\n' | gpucalc occupancy batch --input -`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.formatSet = cmd.Flags().Changed("format")
			if runF != nil {
				return runF(opts)
			}
			return occupancyBatchRun(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.input, "input", "i", "", "CSV `file` to read, - for standard input")
	_ = cmd.MarkFlagRequired("input")
	return cmd
}

func occupancyBatchRun(opts *occupancyBatchOptions) error {
	f := opts.f
	format := reports.FormatCSV
	if opts.formatSet {
		var err error
		if format, err = f.OutFormat(nil); err != nil {
			return err
		}
	}
	in, name, err := f.Open(opts.input)
	if err != nil {
		return err
	}
	defer in.Close()
	c, err := f.Catalog()
	if err != nil {
		return err
	}
	row, done := f.rowProgress("occupancy batch")
	defer done()
	if err := runBatch(in, f.Out, format, c.Limits, row); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// runBatch streams the batch from in to out.
func runBatch(in io.Reader, out io.Writer, format reports.Format, lookup func(string) (devices.Arch, error), progress func(rows int)) error {
	br, err := occupancy.NewBatchReader(in, lookup)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(out, 1<<16)
	w, err := reports.NewOccupancyBatch(bw, format, br.Header)
	if err != nil {
		return err
	}
	n, err := occupancy.RunBatch(br, w, progress)
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if n.Rows == 0 && n.ReadErr == nil {
		return errors.New("batch input has a header but no rows")
	}
	return batchFailures(n.Failed, n.Rows, n.ReadErr)
}

type occupancySweepOptions struct {
	f      *factory
	kernel kernelFlags
	vary   string
	chart  chartOptions
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.kernel.changed(cmd)
			if runF != nil {
				return runF(opts)
			}
			return occupancySweepRun(opts)
		},
	}
	opts.kernel.add(f, cmd, true)
	cmd.Flags().StringVar(&opts.vary, "vary", "threads", "quantity to vary: threads, regs or smem")
	addChartFlags(cmd, &opts.chart, "warps per SM against the varied quantity", chart.SweepSize)
	_ = cmd.RegisterFlagCompletionFunc("vary", cobra.FixedCompletions([]string{"threads", "regs", "smem"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func occupancySweepRun(opts *occupancySweepOptions) error {
	f := opts.f
	format, err := f.OutFormat(nil)
	if err != nil {
		return err
	}
	q, err := occupancy.ParseQuantity(opts.vary)
	if err != nil {
		return usageError{fmt.Errorf("--vary: %w", err)}
	}
	chartOpt, err := opts.chart.check()
	if err != nil {
		return err
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
	var notes []string
	if opts.chart.file != "" {
		if notes, err = opts.chart.write(reports.SweepChart(t, q, pts, current), chartOpt); err != nil {
			return err
		}
	}
	if format == reports.FormatJSON || format == reports.FormatCSV {
		f.chartNotes(format, nil, notes)
	}
	return f.Output(format, nil, reports.SweepView{Target: t, Kernel: k, Launch: l, Vary: q, Current: current, Points: pts},
		func() []reports.Table {
			tables := []reports.Table{reports.SweepTable(t, q, pts, current)}
			f.chartNotes(format, tables, notes)
			return tables
		},
		func() []reports.Table { return reports.SweepRecords(q, pts, current) })
}

type occupancyFromBuildOptions struct {
	f                 *factory
	file              string
	threads           int
	launch            []string
	dynamic, carveout string
}

func newCmdOccupancyFromBuild(f *factory, runF func(*occupancyFromBuildOptions) error) *cobra.Command {
	opts := &occupancyFromBuildOptions{f: f}
	cmd := &cobra.Command{
		Use:   "from-build FILE|-",
		Short: "Occupancy of every kernel in ptxas -v or cuobjdump --dump-resource-usage output",
		Long: `Read the resource usage the CUDA tools print and report occupancy for every
kernel, lowest first:
  - nvcc -Xptxas -v (ptxas -v): "Compiling entry function '...' for 'sm_90'",
    "Used 64 registers, used 1 barriers, 1024 bytes smem", stack and spills;
  - cuobjdump --dump-resource-usage: "Function ...:" and "REG:64 STACK:0 SHARED:1024 ...".
The architecture is the log's. cuobjdump's SHARED includes the 1 KiB CUDA
reserves per block for some sm_90+ objects: gpucalc takes it off where every
kernel of an object shows at least 1 KiB, so it is not counted twice. Names
are demangled; spills and local memory are flagged. Block size: --threads for
all, or per kernel with --launch NAME=THREADS (NAME as printed, with or without
template arguments, or the mangled symbol).

A kernel whose entry is cut short or whose figures are impossible is listed
with the reason, and the others are still calculated; the exit status is then
1 (0 when every kernel was calculated).`,
		Example: `  nvcc -arch=sm_90 -Xptxas -v -c kernels.cu 2>&1 | gpucalc occupancy from-build -
  cuobjdump --dump-resource-usage app | gpucalc occupancy from-build - --threads 128
  gpucalc occupancy from-build build.log --launch saxpy=512 --launch block_reduce=128`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.file = argv[0]
			if runF != nil {
				return runF(opts)
			}
			return occupancyFromBuildRun(opts)
		},
	}
	cmd.Flags().IntVarP(&opts.threads, "threads", "t", defaultThreads, "threads per block for kernels without --launch")
	cmd.Flags().StringArrayVar(&opts.launch, "launch", nil, "`NAME=THREADS` block size of one kernel (repeatable)")
	cmd.Flags().StringVar(&opts.dynamic, "dynamic-smem", "0", "dynamic shared memory per block for every kernel (binary: 48K = 49152 bytes)")
	cmd.Flags().StringVar(&opts.carveout, "carveout", "default", "shared-memory carveout preference: default, a percentage (50%) or a size (100K)")
	return cmd
}

func occupancyFromBuildRun(opts *occupancyFromBuildOptions) (runErr error) {
	f := opts.f
	format, err := f.OutFormat(nil)
	if err != nil {
		return err
	}
	dyn, err := parseSize("dynamic-smem", opts.dynamic)
	if err != nil {
		return err
	}
	carve, err := parseCarveout(opts.carveout)
	if err != nil {
		return err
	}
	var named []occupancy.NamedBlockSize
	for _, l := range opts.launch {
		name, n, ok := strings.Cut(l, "=")
		t, err := strconv.Atoi(strings.TrimSpace(n))
		if !ok || err != nil || t < 1 {
			return usagef("--launch %q: expected NAME=THREADS, such as saxpy=256", l)
		}
		named = append(named, occupancy.NamedBlockSize{Name: strings.TrimSpace(name), Threads: t})
	}
	in, name, err := f.Open(opts.file)
	if err != nil {
		return err
	}
	defer in.Close()
	ks, err := occupancy.ParseBuildLog(in)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	threads, from, err := occupancy.BlockSizes(ks, opts.threads, named)
	if err != nil {
		return usageError{fmt.Errorf("--launch: %w", err)}
	}
	var rows []reports.BuildRow
	failed := 0
	for i, k := range ks {
		src := "--threads"
		if from[i] != "" {
			src = "--launch " + from[i]
		}
		row, err := buildRow(k, threads[i], src, dyn, carve)
		if err != nil {
			row = reports.BuildRow{Kernel: k, Threads: threads[i], ThreadsFrom: src, Error: err.Error()}
			failed++
		}
		rows = append(rows, row)
	}
	if failed > 0 {
		defer func() {
			if runErr == nil {
				runErr = fmt.Errorf("%d of %d kernels could not be calculated; the output says why", failed, len(rows))
			}
		}()
	}
	reports.SortBuildRows(rows)
	notes := []string{fmt.Sprintf("Threads per block: %d unless --launch says otherwise; dynamic shared memory %s; carveout %s.", opts.threads, units.FormatSize(int64(dyn)), carve),
		"Static shared memory excludes the 1 KiB CUDA reserves per block (cc 8.0+); the calculation adds it once. Give block sizes with --launch."}
	return f.Output(format, nil, rows,
		func() []reports.Table { return []reports.Table{reports.BuildTable(rows, notes)} },
		func() []reports.Table { return reports.BuildRecords(rows) })
}

// buildRow calculates one kernel of a build log launched with threads (from
// the flag named in from); an error names the log's figure or the flag at
// fault.
func buildRow(k occupancy.BuildKernel, threads int, from string, dyn int, carve occupancy.Carveout) (reports.BuildRow, error) {
	if k.Problem != "" {
		return reports.BuildRow{}, errors.New(k.Problem)
	}
	arch, err := devices.ArchFor(k.CC)
	if err != nil {
		return reports.BuildRow{}, err
	}
	kern := occupancy.Kernel{Regs: k.Regs, StaticSmem: k.StaticSmem, Barriers: k.Barriers}
	l := occupancy.Launch{Threads: threads, DynamicSmem: dyn, Carveout: carve}
	r := occupancy.Calculate(arch, kern, l)
	switch {
	case errors.Is(r.Err, occupancy.ErrBlockSize):
		err = fmt.Errorf("%s %d: a block has 1 to %d threads on cc %s", from, threads, arch.MaxThreadsPerBlock, arch.CC)
	case errors.Is(r.Err, occupancy.ErrRegisters):
		err = fmt.Errorf("the log gives %d registers per thread; cc %s allows at most %d", k.Regs, arch.CC, arch.MaxRegsPerThread)
	case errors.Is(r.Err, occupancy.ErrStaticSmem):
		err = fmt.Errorf("the log gives %s of static shared memory; cc %s allows at most %s per block", units.FormatSize(int64(k.StaticSmem)), arch.CC, units.FormatSize(int64(arch.SmemPerBlock)))
	case errors.Is(r.Err, occupancy.ErrBarriers):
		err = fmt.Errorf("the log gives %d named barriers; a block has at most 16", k.Barriers)
	case errors.Is(r.Err, occupancy.ErrCarveout):
		err = fmt.Errorf("--carveout %s: more than the %s of shared memory an SM has on cc %s", carve, units.FormatSize(int64(arch.SmemPerSM)), arch.CC)
	case r.Err != nil:
		err = r.Err
	}
	if err != nil {
		return reports.BuildRow{}, err
	}
	return reports.NewBuildRow(k, threads, from, r, occupancy.MaxThreadsByRegs(arch, k.Regs)), nil
}
