package main

import (
	"fmt"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/trace"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type traceOptions struct {
	f       *factory
	devices deviceFlags
	files   []string // one trace, or one per rank (files or a folder)
	top     int
	chart   chartFlags
	section sectionFlag
	on      []string    // --on: devices to project the trace to
	onFlag  *pflag.Flag // whether --on was given (--on '' has no names)
}

func newCmdTrace(f *factory, runF func(*traceOptions) error) *cobra.Command {
	opts := &traceOptions{f: f}
	cmd := &cobra.Command{
		Use:   "trace FILE|DIR|- [FILE...]",
		Short: "Set a torch.profiler trace's ops against their rooflines, kernels against occupancy",
		Long: `Read a Chrome trace exported by torch.profiler (.json or .json.gz, gzip told by
its content) and show, for each top-level aten op with GPU kernels: its input
shapes and data type, calls, measured GPU time (the sum of its kernels),
FLOPs and ideal bytes from gpucalc's op models, achieved FLOP/s and
bandwidth, the roofline's expected time and the efficiency expected /
measured, with the time that would be saved at the expected speed. Each
kernel launch configuration gets gpucalc's theoretical occupancy and its
limiter, beside the trace's own estimate where they differ. The summary
gives each stream's busy and idle time, the kernels shorter than the launch
overhead, memcpy and memset, and the ops losing most time; the findings are
the design review's checks that apply to a measured step.

Profile with record_shapes=True (without shapes nothing can be priced):
  with torch.profiler.profile(activities=[ProfilerActivity.CPU,
          ProfilerActivity.CUDA], record_shapes=True) as prof:
      step()
  prof.export_chrome_trace("trace.json")

Ops without a model keep their measured time; kernels outside any aten op
are listed as unattributed; the output states that ops and unattributed time
add up to the total kernel time. The device comes from the trace's
deviceProperties; --device overrides it. Rates are decimal (1 TB/s = 1e12 B/s).

Several traces, one per rank of a torch.distributed run (several files, or
a folder of .json and .json.gz files), are analysed together instead: each
rank's GPU time split into compute, communication (NCCL kernels) and their
overlap, idle time and exposed communication; the NCCL kernels tied to
their collectives (record_param_comms) with message sizes and algorithm
and bus bandwidth against the device link's curve; the slowest rank and
why; exposed all-gathers, reduce-scatters and all-reduces, and stragglers.
Ranks come from each trace's distributedInfo, else the order given.

--on DEVICE[,DEVICE...] projects every kernel's measured time to other GPUs:
each kernel scales by what limits it on the trace's GPU (the launch floor;
DRAM, or L2 where an op's data fit; the compute ceiling of its data type;
else SM clock and waves, with gpucalc's occupancy on both devices), so an
inefficient kernel stays inefficient. It prints each op's projected time,
ratio and bound, the projected kernel time with its share in each bound,
and what of the step cannot be projected (the GPU's wait for the host).
H100 SXM and H200 SXM have measured ceilings and are validated against
traces recorded on both; other targets use datasheet figures with the
catalog's efficiencies and are flagged as not validated.`,
		Example: `  gpucalc trace trace.json.gz
  gpucalc trace trace.json --format csv --section kernels > kernels.csv
  gunzip -c trace.json.gz | gpucalc trace - --format json
  gpucalc trace trace.json --device h200 --plot ops.png
  gpucalc trace trace.json.gz --on h200,a100-sxm4-80gb,b200
  gpucalc trace traces/                      # one trace per rank
  gpucalc trace rank0.json.gz rank1.json.gz --format csv --section collectives`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(_ *cobra.Command, argv []string) error {
			opts.files = argv
			return execute(opts, runF, traceRun)
		},
	}
	f.addMeasuredDeviceFlag(cmd, &opts.devices, "trace")
	f.addChartFlags(cmd, &opts.chart, "the ops on the device's roofline at their achieved rate (with --on, also on each target's at their projected rate)", chart.DefaultSize)
	f.addSectionFlag(cmd, &opts.section, traceSectionNeeds, "ops", "kernels", "streams", "transfers", "unattributed", "findings", "summary",
		"projected_ops", "projected_bounds", "projected_summary", "ranks", "collectives", "slowest")
	addOnFlag(f, cmd, opts)
	cmd.Flags().IntVar(&opts.top, "top", 10, "list the `N` costliest ops, kernels and findings in tables (0: all; JSON has all)")
	return cmd
}

func traceRun(opts *traceOptions) error {
	f := opts.f
	form, err := f.OutFormat(nil, &opts.chart)
	if err != nil {
		return err
	}
	if opts.top < 0 {
		return usagef("--top %d: give 0 (all) or more", opts.top)
	}
	if files, several, err := rankFiles(opts.files); err != nil {
		return err
	} else if several {
		return traceRanksRun(opts, form, files)
	}
	tr, name, err := readTrace(f, opts.files[0])
	if err != nil {
		return err
	}
	d, origin, err := traceDevice(opts, tr)
	if err != nil {
		return err
	}
	m, err := roofline.New(d)
	if err != nil {
		return err
	}
	arch, err := trace.Arch(tr, d)
	if err != nil {
		return err
	}
	a, err := trace.Analyze(tr, m, arch)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	proj, err := projectTrace(opts, tr, &a, d, arch)
	if err != nil {
		return err
	}
	notes, err := opts.chart.draw(func() (chart.Chart, error) {
		if proj != nil {
			return reports.TraceProjectionChart(a, *proj), nil
		}
		return reports.TraceChart(a, d), nil
	})
	if err != nil {
		return err
	}
	return f.Output(form, &opts.section, notes, reports.TraceView{DeviceOrigin: origin, Analysis: a, Projection: proj},
		func() []reports.Table {
			if proj != nil {
				return reports.TraceProjection(*proj, origin, opts.top, f.verbose)
			}
			return reports.Trace(a, origin, opts.top)
		},
		func() []reports.Table { return traceRecords(a, proj) })
}

// readTrace reads one trace file (or standard input), with progress on
// stderr past a second.
func readTrace(f *factory, file string) (*trace.Trace, string, error) {
	in, name, err := f.openWatched(file)
	if err != nil {
		return nil, "", err
	}
	defer in.Close()
	tr, err := trace.Read(in)
	if err != nil {
		return tr, name, fmt.Errorf("%s: %w", name, err)
	}
	return tr, name, nil
}

// traceDevice picks the device: --device, else the one deviceProperties
// names. A --device that contradicts the trace is used, with a warning.
func traceDevice(opts *traceOptions, tr *trace.Trace) (devices.Device, string, error) {
	f := opts.f
	name := tr.DeviceName()
	if opts.devices.deviceSet() {
		return f.deviceOver(opts.devices, []string{name}, "--device %s, but the trace was recorded on %s: expected times are %s's")
	}
	if name == "" {
		return devices.Device{}, "", fmt.Errorf("the trace names no device (no deviceProperties): pass --device NAME")
	}
	d, err := f.Lookup(name)
	if err != nil {
		return devices.Device{}, "", fmt.Errorf("the trace's device: %w; pass --device NAME, or add the GPU with --device-file", err)
	}
	return d, "from the trace", nil
}
