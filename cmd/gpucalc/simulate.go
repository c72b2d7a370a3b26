package main

import (
	"fmt"
	"strings"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/sim"
	"github.com/spf13/cobra"
)

type simulateOptions struct {
	f            *factory
	devices      deviceFlags
	flopsSet     bool
	kernel       string
	ilp          int
	flopsPerByte float64
	threads      int
	regs         int
	smem         string
	warps        string
	sweep        bool
	seed         uint64
	chart        chartFlags
	measured     string
}

func newCmdSimulate(f *factory, runF func(*simulateOptions) error) *cobra.Command {
	o := &simulateOptions{f: f}
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Simulate a kernel on one SM to show latency hiding against occupancy",
		Long: `Simulate a simple kernel on one SM, cycle by cycle (four warp schedulers, in-order
warps with a scoreboard, DRAM served as a queue so latency grows under load),
at several counts of resident warps per SM, and print per point the achieved
throughput and its bound: the roofline (datasheet DRAM bandwidth and FP32 peak)
and Little's law (loads in flight over the unloaded DRAM latency; FMA chains
over the FMA latency). Rates are whole-GPU and decimal (GB/s = 1e9 B/s).

Kernels (the ones measured on an H100, see the README):
  stream  ILP float4 (16 B) loads per thread per iteration, summed
  fma     ILP independent chains of dependent FP32 FMAs per thread
  mixed   ILP float4 loads per thread, each component then runs a chain of
          2 x FLOP/byte dependent FMAs (--flops-per-byte, default 8)

Resident warps are blocks per SM x warps per block (--threads). The occupancy
calculator (--regs, --smem, as in 'gpucalc occupancy') gives the most blocks
that fit; by default every count from one block up to it is simulated.
Latencies and bandwidth come from the catalog (gpucalc devices show), measured
figures from a device file in their place. Runs are deterministic per --seed.`,
		Example: `  gpucalc simulate --kernel stream
  gpucalc simulate --kernel fma --ilp 4 --warps-per-sm 4,8,16,64
  gpucalc simulate --kernel mixed --flops-per-byte 16 --threads 256 --format csv
  gpucalc simulate --kernel stream --ilp 2 --plot stream.png
  gpucalc simulate --kernel stream --plot stream.png --measured sim/testdata/lat_hide.csv`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.flopsSet = cmd.Flags().Changed("flops-per-byte")
			return execute(o, runF, simulateRun)
		},
	}
	f.addDeviceFlags(cmd, &o.devices, false)
	fl := cmd.Flags()
	fl.StringVarP(&o.kernel, "kernel", "k", sim.DefaultKernel, "`kernel`: stream, fma or mixed")
	fl.IntVar(&o.ilp, "ilp", sim.DefaultILP, "independent loads (stream, mixed) or FMA chains (fma) per thread, `N`")
	fl.Float64Var(&o.flopsPerByte, "flops-per-byte", sim.DefaultFlopsPerByte, "arithmetic intensity of --kernel mixed, FP32 `FLOP` per DRAM byte (multiple of 0.5)")
	fl.IntVar(&o.threads, "threads", sim.DefaultThreads, "threads per block, `N`")
	fl.IntVar(&o.regs, "regs", sim.DefaultRegs, "registers per thread, for the occupancy limit")
	fl.StringVar(&o.smem, "smem", sim.DefaultSmem, "shared memory per block, for the occupancy limit (binary: 48K = 49152 bytes)")
	fl.StringVar(&o.warps, "warps-per-sm", "", "comma-separated resident warps per SM, each a multiple of the warps per block (default: --sweep)")
	fl.BoolVar(&o.sweep, "sweep", false, "simulate every resident warp count from one block to the limit (the default)")
	fl.Uint64Var(&o.seed, "seed", sim.DefaultSeed, "random `seed` of the memory model")
	f.addChartFlags(cmd, &o.chart, "achieved against bound", chart.DefaultSize)
	fl.StringVar(&o.measured, "measured", "", "overlay on --plot the measured curve of the same kernel, --ilp and --threads from a latency-hiding CSV `FILE` (kind,ilp,block,...,warps_per_sm,gbps,gflops)")
	cmd.MarkFlagsMutuallyExclusive("warps-per-sm", "sweep")
	_ = cmd.RegisterFlagCompletionFunc("kernel", cobra.FixedCompletions(sim.Kernels, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.MarkFlagFilename("measured", "csv")
	return cmd
}

// query maps the flags onto the simulate question.
func (o *simulateOptions) query() (sim.Query, error) {
	c, err := o.f.Catalog()
	return sim.Query{Device: o.f.choice(o.devices), Kernel: o.kernel, ILP: o.ilp, FlopsPerByte: o.flopsPerByte, FlopsGiven: o.flopsSet,
		Threads: o.threads, Regs: o.regs, Smem: o.smem, Warps: o.warps, Seed: o.seed, Catalog: c, Datasheet: o.f.datasheet}, err
}

func simulateRun(o *simulateOptions) error {
	f := o.f
	form, err := f.OutFormat(nil, &o.chart)
	if err != nil {
		return err
	}
	q, err := o.query()
	if err != nil {
		return err
	}
	if err := q.Validate(); err != nil {
		return usage(err)
	}
	if o.measured != "" && o.chart.file == "" {
		return usagef("--measured overlays a curve on the chart: give --plot FILE too")
	}
	progress := f.progress("simulating")
	p, pts, err := q.Answer(progress)
	if err != nil {
		return err
	}
	progress(1)
	d, origin, k, what := p.Device.Device, p.Device.Origin, p.Kernel, p.Desc
	// The chart names the device alone; the table also says where it came
	// from (a hint about flags belongs to the terminal, not a figure).
	title := fmt.Sprintf("Simulated %s kernel on %s, %d-thread blocks", o.kernel, d.Name, o.threads)
	tableTitle := title
	if origin != "" {
		tableTitle = fmt.Sprintf("Simulated %s kernel on %s (%s), %d-thread blocks", o.kernel, d.Name, origin, o.threads)
	}
	s := reports.Simulation{
		Title:  tableTitle,
		Points: pts,
		Notes:  simulationNotes(p.Setup, what, o, p.Occupancy),
	}
	for _, p := range pts {
		if p.Scaled > 0 {
			s.Notes = append(s.Notes, fmt.Sprintf("runs longer than %d warp instructions per SM are simulated that far and scaled to the whole run (the cycles column is scaled)", sim.MaxInstructions))
			break
		}
	}
	notes, err := o.chart.draw(func() (chart.Chart, error) {
		c := chart.Simulation{Title: title, Points: s.Points}
		if o.measured == "" {
			return c, nil
		}
		in, name, err := f.Open(o.measured)
		if err != nil {
			return nil, err
		}
		defer in.Close()
		c.Measured, err = chart.ReadMeasuredCurve(in, name, o.kernel, o.ilp, o.threads)
		return c, err
	})
	if err != nil {
		return err
	}
	return f.Output(form, nil, notes, reports.SimulationView{Device: d.Name, Origin: origin, Kernel: o.kernel, Desc: what, Threads: o.threads, Model: k, Setup: p.Setup, Points: reports.SimPoints(pts)},
		func() []reports.Table { return []reports.Table{reports.SimulationTable(s)} },
		func() []reports.Table { return reports.SimulationRecords(pts) })
}

// simulationNotes are two lines under the table; with --verbose, every
// parameter of the model and where it comes from.
func simulationNotes(s sim.Setup, what string, o *simulateOptions, occ occupancy.Result) []string {
	notes := []string{
		fmt.Sprintf("%s; occupancy allows %d blocks (%d warps) per SM, limited by %s.", what, occ.Blocks, occ.Warps, occ.Limiters),
		fmt.Sprintf("Bounds: roofline (%.0f GB/s, %.0f GFLOP/s FP32) and Little's law; seed %d; rates whole-GPU, decimal; -v for the model's figures.",
			s.DRAMBandwidth/1e9, s.PeakFLOPS/1e9, o.seed),
	}
	if !o.f.verbose {
		return notes
	}
	p := s.Params
	// Measured figures name their measurement once, in a note of its own.
	src := func(k string) string {
		if strings.HasPrefix(s.Sources[k], "measured") {
			return "measured"
		}
		return s.Sources[k]
	}
	notes = append(notes,
		fmt.Sprintf("%d SMs at %g MHz; one SM simulated, every SM alike", s.SMs, s.ClockHz/1e6),
		fmt.Sprintf("FMA latency %g cycles (%s), one warp FMA per %g cycle(s) per scheduler (%s), %d schedulers (%s)",
			p.FMALatency, src("fma_latency"), p.FMAInterval, src("fma_interval"), p.Schedulers, src("schedulers")),
		fmt.Sprintf("DRAM latency %g cycles (%s); SM share of DRAM bandwidth %.2f B/cycle, %.0f GB/s per GPU (%s)", p.DRAMLatency, src("dram_latency"),
			p.DRAMBytesPerCycle, p.DRAMBytesPerCycle*float64(s.SMs)*s.ClockHz/1e9, src("dram_bytes_per_cycle")),
		fmt.Sprintf("branch bubble %g cycles (%s); memory queue of %d channels, latency ±%g cycles (%s)", p.BranchBubble, src("branch_bubble"), p.Channels, p.Jitter, src("channels")),
	)
	if len(s.Measured) > 0 {
		notes = append(notes, "measured figures used: "+strings.Join(s.Measured, ", ")+"; measured with "+s.MeasuredBy)
	}
	if o.warps == "" {
		notes = append(notes, "warps per SM: every multiple of the block's warps up to what occupancy allows (default; --warps-per-sm to choose)")
	}
	return notes
}
